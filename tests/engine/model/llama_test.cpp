// The decoders (engine/model/llama.cpp): the tensors of a Llama / Qwen3 checkpoint, one layer
// against its formula (pre-norm RMSNorm, Qwen3's per-head query / key norms, grouped-query
// attention's widths, SwiGLU), the LM head tied or not, and through the Encoder causal
// attention (no position sees a later one) and the grouping of key / value heads. Numbers
// against transformers itself: tests/parity (hf_parity_qwen3_*, hf_parity_llama_*).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <string>
#include <vector>

#include "engine/model/architecture.h"
#include "engine/model/encoder.h"
#include "engine/model/layers.h"
#include "tests/support/architecture_tests.h"

namespace lmk {
namespace {

using testing::build_architecture;
using testing::ExpectedTensor;

// Hidden 16, 4 query heads of 8 (Qwen3: head_dim need not be hidden / heads) over 2 key /
// value heads, MLP 24, vocabulary 50, two layers.
EncoderConfig decoder_config(Architecture architecture) {
  EncoderConfig c;
  c.architecture = architecture;
  c.vocab_size = 50;
  c.hidden_size = 16;
  c.intermediate_size = 24;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.explicit_head_dim = 8;
  c.norm_eps = 1e-6;
  c.activation = "silu";
  c.rope_theta = 10000;
  c.causal = true;
  c.tie_word_embeddings = false;
  c.validate("test");
  return c;
}

// A checkpoint's tensors without the "model." prefix; lm_head.weight (the head) when untied.
std::vector<ExpectedTensor> decoder_tensors(const EncoderConfig& c) {
  const bool qwen3 = c.architecture == Architecture::Qwen3;
  std::vector<ExpectedTensor> t = {{"embed_tokens.weight", {50, 16}, 'i'},
                                   {"norm.weight", {16}, '1'}};
  if (!c.tie_word_embeddings) t.push_back({"lm_head.weight", {50, 16}, 'i', true});
  for (const std::string layer : {"layers.0.", "layers.1."}) {
    t.push_back({layer + "input_layernorm.weight", {16}, '1'});
    t.push_back({layer + "post_attention_layernorm.weight", {16}, '1'});
    t.push_back({layer + "self_attn.q_proj.weight", {32, 16}, 'i'});
    t.push_back({layer + "self_attn.k_proj.weight", {16, 16}, 'i'});
    t.push_back({layer + "self_attn.v_proj.weight", {16, 16}, 'i'});
    t.push_back({layer + "self_attn.o_proj.weight", {16, 32}, 'o'});
    if (c.attention_bias) {
      t.push_back({layer + "self_attn.q_proj.bias", {32}, '0'});
      t.push_back({layer + "self_attn.k_proj.bias", {16}, '0'});
      t.push_back({layer + "self_attn.v_proj.bias", {16}, '0'});
      t.push_back({layer + "self_attn.o_proj.bias", {16}, '0'});
    }
    if (qwen3) {
      t.push_back({layer + "self_attn.q_norm.weight", {8}, '1'});
      t.push_back({layer + "self_attn.k_norm.weight", {8}, '1'});
    }
    t.push_back({layer + "mlp.gate_proj.weight", {24, 16}, 'i'});
    t.push_back({layer + "mlp.up_proj.weight", {24, 16}, 'i'});
    t.push_back({layer + "mlp.down_proj.weight", {16, 24}, 'o'});
    if (c.mlp_bias) {
      t.push_back({layer + "mlp.gate_proj.bias", {24}, '0'});
      t.push_back({layer + "mlp.up_proj.bias", {24}, '0'});
      t.push_back({layer + "mlp.down_proj.bias", {16}, '0'});
    }
  }
  return t;
}

// Qwen3 (per-head norms, untied head) and Llama with biases and a tied head declare exactly
// their checkpoints' tensors.
TEST(LlamaTest, DeclaresTheCheckpointsTensors) {
  const EncoderConfig qwen3 = decoder_config(Architecture::Qwen3);
  testing::expect_declared(*build_architecture(qwen3, 1), decoder_tensors(qwen3));
  EncoderConfig llama = decoder_config(Architecture::Llama);
  llama.attention_bias = llama.mlp_bias = true;
  llama.tie_word_embeddings = true;
  testing::expect_declared(*build_architecture(llama, 1), decoder_tensors(llama));
}

at::Tensor rms(const at::Tensor& x, const at::Tensor& weight) {
  return weight * x / at::sqrt(x.pow(2).mean(-1, true) + 1e-6);
}

// One layer: x + o(attend(q, k, v)), then + down(silu(gate(n)) * up(n)), with n the RMSNorms of
// the residual stream and, for Qwen3, each head's queries and keys normalized before attention
// (here an attention stand-in that records its inputs and returns a function of them).
TEST(LlamaTest, ALayerIsPreNormAttentionThenSwiGlu) {
  for (const Architecture architecture : {Architecture::Qwen3, Architecture::Llama}) {
    EncoderConfig c = decoder_config(architecture);
    c.attention_bias = architecture == Architecture::Llama;
    const auto a = build_architecture(c, 3);
    const auto& w = a->tensors;
    auto W = [&](const std::string& name) { return w.at("layers.1." + name).value; };
    const at::NoGradGuard no_grad;
    const at::Tensor x = at::randn({2, 5, 16});
    std::vector<at::Tensor> seen;
    const Attend attend = [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              int64_t layer) {
      EXPECT_EQ(layer, 1);
      seen = {q, k, v};
      return q * 0.5 + at::cat({k, v}, -1);  // [B, L, 32]
    };
    const at::Tensor out = a->graph->layer(1, x, attend);
    // The formula, written out.
    auto linear = [&](const at::Tensor& in, const std::string& name) {
      const std::string bias = name + ".bias";
      return at::linear(in, W(name + ".weight"),
                        w.count("layers.1." + bias) ? W(bias) : at::Tensor());
    };
    const at::Tensor n1 = rms(x, W("input_layernorm.weight"));
    at::Tensor q = linear(n1, "self_attn.q_proj"), k = linear(n1, "self_attn.k_proj");
    const at::Tensor v = linear(n1, "self_attn.v_proj");
    if (architecture == Architecture::Qwen3) {
      q = rms(q.view({2, 5, 4, 8}), W("self_attn.q_norm.weight")).view({2, 5, 32});
      k = rms(k.view({2, 5, 2, 8}), W("self_attn.k_norm.weight")).view({2, 5, 16});
    }
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_TRUE(at::allclose(seen[0], q, 1e-5, 1e-5));
    EXPECT_TRUE(at::allclose(seen[1], k, 1e-5, 1e-5));
    EXPECT_TRUE(at::allclose(seen[2], v, 1e-5, 1e-5));
    const at::Tensor h = x + linear(q * 0.5 + at::cat({k, v}, -1), "self_attn.o_proj");
    const at::Tensor n2 = rms(h, W("post_attention_layernorm.weight"));
    const at::Tensor expected =
        h +
        linear(at::silu(linear(n2, "mlp.gate_proj")) * linear(n2, "mlp.up_proj"), "mlp.down_proj");
    EXPECT_TRUE(at::allclose(out, expected, 1e-4, 1e-5))
        << architecture_name(architecture) << ": " << (out - expected).abs().max().item<float>();
    // The final RMSNorm, and the LM head: lm_head.weight, or the embeddings when tied.
    EXPECT_TRUE(at::allclose(a->graph->finish(x), rms(x, w.at("norm.weight").value), 1e-5, 1e-6));
    EXPECT_TRUE(at::allclose(a->graph->mlm_logits(x),
                             at::matmul(x, w.at("lm_head.weight").value.t()), 1e-5, 1e-5));
  }
  EncoderConfig tied = decoder_config(Architecture::Llama);
  tied.tie_word_embeddings = true;
  const auto a = build_architecture(tied, 4);
  const at::Tensor x = at::randn({3, 16});
  EXPECT_TRUE(at::allclose(a->graph->mlm_logits(x),
                           at::matmul(x, a->tensors.at("embed_tokens.weight").value.t()), 1e-5,
                           1e-5));
}

// Causal: a position's state depends on the tokens up to it only (changing token 6 leaves
// positions 0..5 alone and changes 6..9); bidirectional (LLM2Vec's conversion) every position
// sees token 6.
TEST(LlamaTest, CausalAttentionSeesNoLaterToken) {
  const at::NoGradGuard no_grad;
  for (const bool causal : {true, false}) {
    EncoderConfig c = decoder_config(Architecture::Qwen3);
    c.causal = causal;
    Encoder model(c, 7);
    at::Tensor ids = at::randint(1, 50, {1, 10}, at::kLong);
    const at::Tensor mask = at::ones({1, 10}, at::kLong);
    const at::Tensor before = model.forward(ids, mask);
    ids[0][6] = (ids[0][6].item<int64_t>() % 49) + 1;
    const at::Tensor after = model.forward(ids, mask);
    const double earlier =
        (after[0].narrow(0, 0, 6) - before[0].narrow(0, 0, 6)).abs().max().item<double>();
    const double later =
        (after[0].narrow(0, 6, 4) - before[0].narrow(0, 6, 4)).abs().min().item<double>();
    if (causal) {
      EXPECT_EQ(earlier, 0.0);
    } else {
      EXPECT_GT(earlier, 1e-4);
    }
    EXPECT_GT(later, 0.0) << "causal " << causal;
  }
}

// Grouped-query attention: query head h reads key / value head h / (heads / kv heads), as
// transformers' repeat_kv. A model over 2 key / value heads equals one over 4 whose k / v
// projections hold each group's block repeated, [K0; K0; K1; K1] (tiling, [K0; K1; K0; K1],
// would pair the heads otherwise).
TEST(LlamaTest, QueryHeadsShareTheirGroupsKeyValueHead) {
  const at::NoGradGuard no_grad;
  const EncoderConfig grouped = decoder_config(Architecture::Llama);
  EncoderConfig full = grouped;
  full.num_kv_heads = 4;
  Encoder a(grouped, 11), b(full, 12);
  for (const auto& [name, tensor] : a.named_weights()) {
    at::Tensor target = b.named_weights().at(name);
    if (name.find("k_proj") != std::string::npos || name.find("v_proj") != std::string::npos) {
      target.copy_(tensor.view({2, 8, 16}).repeat_interleave(2, 0).reshape({32, 16}));
    } else {
      target.copy_(tensor);
    }
  }
  const at::Tensor ids = at::randint(1, 50, {2, 9}, at::kLong);
  at::Tensor mask = at::ones({2, 9}, at::kLong);
  mask[1].narrow(0, 6, 3).fill_(0);
  const at::Tensor out_a = a.forward(ids, mask), out_b = b.forward(ids, mask);
  EXPECT_TRUE(at::allclose(out_a[0], out_b[0], 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(out_a[1].narrow(0, 0, 6), out_b[1].narrow(0, 0, 6), 1e-5, 1e-5));
  // Unpadded (each row on its own) the same.
  a.set_unpadding(Encoder::Unpadding::Always);
  const at::Tensor unpadded = a.forward(ids, mask);
  EXPECT_TRUE(at::allclose(unpadded[1].narrow(0, 0, 6), out_a[1].narrow(0, 0, 6), 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(unpadded[0], out_a[0], 1e-5, 1e-5));
}

}  // namespace
}  // namespace lmk
