// GTE (engine/model/gte.cpp): the tensors of a GTE checkpoint (packed or separate Q / K / V), no
// absolute positions, post-norm layers with the up * act(gate) feed-forward, masking, and the
// lm_head tied to the word embeddings with the activation each folder layout applies. Numbers
// against transformers itself: tests/parity.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "engine/model/architecture.h"
#include "engine/model/encoder.h"
#include "tests/support/architecture_tests.h"
#include "tests/support/small_encoder_config.h"

namespace lmk {
namespace {

using testing::build_architecture;
using testing::ExpectedTensor;
using testing::small_config;

TEST(GteTest, ParameterNamesFollowHuggingFace) {
  const Encoder gte(small_config(Architecture::Gte));
  EXPECT_EQ(gte.named_weights().at("encoder.layer.0.mlp.up_gate_proj.weight").sizes(),
            (std::vector<int64_t>{48, 16}));
  EXPECT_EQ(gte.named_weights().count("encoder.layer.0.mlp.up_gate_proj.bias"), 0u);
  EXPECT_EQ(gte.named_weights().at("encoder.layer.0.attention.qkv_proj.weight").sizes(),
            (std::vector<int64_t>{48, 16}));
}

// A GTE checkpoint's tensors as the hub's remote code names them (the names transformers' port
// reads and writes too), without the "new." / "gte." prefix (H 16, MLP 24, vocabulary 50, two
// layers): no position table (RoPE), a bias-free up_gate_proj, the decoder tied to the word
// embeddings.
std::vector<ExpectedTensor> gte_for_masked_lm(bool pack_qkv) {
  std::vector<ExpectedTensor> t = {
      {"embeddings.word_embeddings.weight", {50, 16}, 'i'},
      {"embeddings.token_type_embeddings.weight", {2, 16}, 'i'},
      {"embeddings.LayerNorm.weight", {16}, '1'},
      {"embeddings.LayerNorm.bias", {16}, '0'},
      {"lm_head.dense.weight", {16, 16}, 'o', true},
      {"lm_head.dense.bias", {16}, '0', true},
      {"lm_head.norm.weight", {16}, '1', true},
      {"lm_head.norm.bias", {16}, '0', true},
      {"lm_head.decoder.bias", {50}, '0', true},
  };
  for (const std::string layer : {"encoder.layer.0.", "encoder.layer.1."}) {
    if (pack_qkv) {
      t.push_back({layer + "attention.qkv_proj.weight", {48, 16}, 'i'});
      t.push_back({layer + "attention.qkv_proj.bias", {48}, '0'});
    } else {
      for (const char* projection : {"q_proj", "k_proj", "v_proj"}) {
        t.push_back({layer + "attention." + projection + ".weight", {16, 16}, 'i'});
        t.push_back({layer + "attention." + projection + ".bias", {16}, '0'});
      }
    }
    t.push_back({layer + "attention.o_proj.weight", {16, 16}, 'o'});
    t.push_back({layer + "attention.o_proj.bias", {16}, '0'});
    t.push_back({layer + "attn_ln.weight", {16}, '1'});
    t.push_back({layer + "attn_ln.bias", {16}, '0'});
    t.push_back({layer + "mlp.up_gate_proj.weight", {48, 16}, 'i'});
    t.push_back({layer + "mlp.down_proj.weight", {16, 24}, 'o'});
    t.push_back({layer + "mlp.down_proj.bias", {16}, '0'});
    t.push_back({layer + "mlp_ln.weight", {16}, '1'});
    t.push_back({layer + "mlp_ln.bias", {16}, '0'});
  }
  return t;
}

// Exactly the checkpoint's tensors, with their shapes, initialization and the head's marked;
// pack_qkv false (remote-code folders that say so) gives separate q / k / v projections.
TEST(GteTest, DeclaresTheTensorsOfTheCheckpoint) {
  EncoderConfig c = small_config(Architecture::Gte);
  testing::expect_declared(*build_architecture(c, 1), gte_for_masked_lm(true));
  c.gte_layout = GteLayout::RemoteCode;
  c.pack_qkv = false;
  testing::expect_declared(*build_architecture(c, 1), gte_for_masked_lm(false));
}

// No absolute positions (RoPE is applied in attention): one token repeated gets the same
// embedding at every position, [B, L, H].
TEST(GteTest, EmbeddingsDoNotDependOnThePosition) {
  const auto gte = build_architecture(small_config(Architecture::Gte), 2);
  const at::Tensor states = gte->graph->embed(at::full({1, 4}, 7, at::kLong));
  ASSERT_EQ(states.sizes(), (std::vector<int64_t>{1, 4, 16}));
  for (int64_t i = 1; i < 4; ++i) EXPECT_TRUE(at::equal(states[0][i], states[0][0])) << i;
}

// Post-norm: Q, K and V are the packed projection's thirds in that order (or the separate
// projections) of the stream itself; with o_proj zeroed a layer is
// mlp_ln(h1 + down(up * act(gate))), [up, gate] = up_gate_proj(h1), h1 = attn_ln(h).
TEST(GteTest, PostNormLayersWithUpTimesActivatedGate) {
  for (const bool pack_qkv : {true, false}) {
    EncoderConfig c = small_config(Architecture::Gte);
    c.pack_qkv = pack_qkv;
    c.activation = "silu";
    const auto gte = build_architecture(c, 3);
    const auto& w = *gte;
    const at::NoGradGuard no_grad;
    const at::Tensor h = at::randn({2, 5, 16});
    for (int64_t i = 0; i < 2; ++i) {
      const std::string p = "encoder.layer." + std::to_string(i) + ".";
      w[p + "attention.o_proj.weight"].zero_();
      w[p + "attention.o_proj.bias"].zero_();
      auto linear = [&](const at::Tensor& x, const std::string& name) {
        const at::Tensor y = at::matmul(x, w[p + name + ".weight"].t());
        return w.tensors.count(p + name + ".bias") ? y + w[p + name + ".bias"] : y;
      };
      auto norm = [&](const at::Tensor& x, const std::string& name) {
        return at::layer_norm(x, {16}, w[p + name + ".weight"], w[p + name + ".bias"], 1e-5);
      };
      std::vector<at::Tensor> qkv;
      if (pack_qkv) {
        const at::Tensor packed = linear(h, "attention.qkv_proj");
        for (int64_t part = 0; part < 3; ++part) qkv.push_back(packed.narrow(-1, 16 * part, 16));
      } else {
        for (const char* name : {"attention.q_proj", "attention.k_proj", "attention.v_proj"})
          qkv.push_back(linear(h, name));
      }
      int calls = 0;
      const Attend attend = [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                int64_t layer) {
        ++calls;
        EXPECT_EQ(layer, i);
        EXPECT_TRUE(at::allclose(q, qkv[0], 1e-5, 1e-6)) << "q";
        EXPECT_TRUE(at::allclose(k, qkv[1], 1e-5, 1e-6)) << "k";
        EXPECT_TRUE(at::allclose(v, qkv[2], 1e-5, 1e-6)) << "v";
        return v;
      };
      const at::Tensor out = gte->graph->layer(i, h, attend);
      EXPECT_EQ(calls, 1);
      const at::Tensor h1 = norm(h, "attn_ln");
      const at::Tensor up_gate = linear(h1, "mlp.up_gate_proj");
      const at::Tensor up = up_gate.narrow(-1, 0, 24), gate = up_gate.narrow(-1, 24, 24);
      const at::Tensor expected = norm(h1 + linear(up * at::silu(gate), "mlp.down_proj"), "mlp_ln");
      EXPECT_TRUE(at::allclose(out, expected, 1e-5, 1e-5)) << "pack_qkv " << pack_qkv << " " << i;
    }
    EXPECT_TRUE(at::equal(gte->graph->finish(h), h)) << "no final norm";
  }
}

// Padding (masked keys) changes nothing at the real tokens; the layers run in order.
TEST(GteTest, PaddingDoesNotChangeTheRealTokens) {
  testing::expect_padding_does_not_change_real_tokens(
      *build_architecture(small_config(Architecture::Gte), 4));
}

// The lm_head's decoder is the word embedding matrix (zeroed: every row of the logits [N, V] is
// lm_head.decoder.bias). Its activation: erf GELU whatever hidden_act says in transformers'
// layout, hidden_act in the remote code's.
TEST(GteTest, MlmHeadIsTiedAndItsActivationFollowsTheLayout) {
  auto logits = [](GteLayout layout, const std::string& activation) {
    EncoderConfig c = small_config(Architecture::Gte);
    c.gte_layout = layout;
    c.activation = activation;
    const auto gte = build_architecture(c, 5);  // the same weights for every config
    at::manual_seed(6);
    return gte->graph->mlm_logits(at::randn({6, 16}));
  };
  const at::NoGradGuard no_grad;
  const at::Tensor gelu = logits(GteLayout::Transformers, "gelu");
  ASSERT_EQ(gelu.sizes(), (std::vector<int64_t>{6, 50}));
  EXPECT_TRUE(at::equal(logits(GteLayout::Transformers, "silu"), gelu));
  EXPECT_TRUE(at::equal(logits(GteLayout::RemoteCode, "gelu"), gelu));
  EXPECT_FALSE(at::allclose(logits(GteLayout::RemoteCode, "silu"), gelu));

  const auto gte = build_architecture(small_config(Architecture::Gte), 7);
  const at::Tensor bias = (*gte)["lm_head.decoder.bias"];
  (*gte)["embeddings.word_embeddings.weight"].zero_();
  EXPECT_TRUE(at::allclose(gte->graph->mlm_logits(at::randn({6, 16})), bias.expand({6, 50})));
}

}  // namespace
}  // namespace lmk
