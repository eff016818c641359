// ModernBERT (engine/model/modern_bert.cpp): the tensors of transformers' ModernBertForMaskedLM
// (with each bias option), no absolute positions, pre-norm layers (layer 0 without attn_norm)
// with the act(first) * second feed-forward and a final norm, masking, and the head tied to the
// token embeddings with the classifier activation. Numbers against transformers itself:
// tests/parity.
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

TEST(ModernBertTest, ParameterNamesFollowHuggingFace) {
  const Encoder modern(small_config(Architecture::ModernBert));
  const auto& mw = modern.named_weights();
  EXPECT_EQ(mw.count("layers.0.attn_norm.weight"), 0u) << "layer 0 has no attn_norm";
  EXPECT_EQ(mw.count("layers.1.attn_norm.weight"), 1u);
  EXPECT_EQ(mw.at("layers.0.attn.Wqkv.weight").sizes(), (std::vector<int64_t>{48, 16}));
  EXPECT_EQ(mw.at("layers.1.mlp.Wi.weight").sizes(), (std::vector<int64_t>{48, 16}));
  EXPECT_EQ(mw.count("layers.1.mlp.Wi.bias"), 0u) << "bias-free by default";
  EXPECT_EQ(mw.count("embeddings.norm.bias"), 0u) << "bias-free LayerNorm";
  EXPECT_TRUE(modern.is_head_weight("head.dense.weight"));
}

// ModernBertForMaskedLM's state dict without "model." (H 16, MLP 24, vocabulary 50, two layers)
// for the config's bias options; the decoder weight is the token embeddings.
std::vector<ExpectedTensor> modern_bert_for_masked_lm(const EncoderConfig& c) {
  std::vector<ExpectedTensor> t = {
      {"embeddings.tok_embeddings.weight", {50, 16}, 'i'},
      {"embeddings.norm.weight", {16}, '1'},
      {"final_norm.weight", {16}, '1'},
      {"head.dense.weight", {16, 16}, 'o', true},
      {"head.norm.weight", {16}, '1', true},
  };
  auto norm_bias = [&](const std::string& norm, bool head = false) {
    if (c.norm_bias) t.push_back({norm + ".bias", {16}, '0', head});
  };
  norm_bias("embeddings.norm");
  norm_bias("final_norm");
  norm_bias("head.norm", true);
  if (c.classifier_bias) t.push_back({"head.dense.bias", {16}, '0', true});
  if (c.decoder_bias) t.push_back({"decoder.bias", {50}, '0', true});
  for (const std::string layer : {"layers.0.", "layers.1."}) {
    if (layer != "layers.0.") {
      t.push_back({layer + "attn_norm.weight", {16}, '1'});
      norm_bias(layer + "attn_norm");
    }
    t.push_back({layer + "attn.Wqkv.weight", {48, 16}, 'i'});
    t.push_back({layer + "attn.Wo.weight", {16, 16}, 'o'});
    if (c.attention_bias) {
      t.push_back({layer + "attn.Wqkv.bias", {48}, '0'});
      t.push_back({layer + "attn.Wo.bias", {16}, '0'});
    }
    t.push_back({layer + "mlp_norm.weight", {16}, '1'});
    norm_bias(layer + "mlp_norm");
    t.push_back({layer + "mlp.Wi.weight", {48, 16}, 'i'});
    t.push_back({layer + "mlp.Wo.weight", {16, 24}, 'o'});
    if (c.mlp_bias) {
      t.push_back({layer + "mlp.Wi.bias", {48}, '0'});
      t.push_back({layer + "mlp.Wo.bias", {16}, '0'});
    }
  }
  return t;
}

// Exactly the tensors of a Hugging Face ModernBERT folder, with their shapes, initialization
// and the head's marked: bias-free by default (decoder bias aside), and with every bias option
// turned around.
TEST(ModernBertTest, DeclaresTheTensorsOfModernBertForMaskedLM) {
  EncoderConfig c = small_config(Architecture::ModernBert);
  testing::expect_declared(*build_architecture(c, 1), modern_bert_for_masked_lm(c));
  c.norm_bias = c.attention_bias = c.mlp_bias = c.classifier_bias = true;
  c.decoder_bias = false;
  testing::expect_declared(*build_architecture(c, 1), modern_bert_for_masked_lm(c));
}

// No positions in the embeddings (RoPE is applied in attention): the token embedding under the
// embedding norm, the same at every position, [B, L, H].
TEST(ModernBertTest, EmbeddingsAreTheNormedTokenEmbeddings) {
  const auto modern = build_architecture(small_config(Architecture::ModernBert), 2);
  const at::Tensor ids = at::tensor(std::vector<int64_t>{7, 7, 3, 7}).view({1, 4});
  const at::Tensor states = modern->graph->embed(ids);
  ASSERT_EQ(states.sizes(), (std::vector<int64_t>{1, 4, 16}));
  const at::Tensor expected =
      at::layer_norm(at::embedding((*modern)["embeddings.tok_embeddings.weight"], ids), {16},
                     (*modern)["embeddings.norm.weight"], {}, 1e-5);
  EXPECT_TRUE(at::allclose(states, expected, 1e-5, 1e-6));
  EXPECT_TRUE(at::equal(states[0][3], states[0][0]));
}

// Pre-norm: layer 0's attention reads the stream as it is (the embedding norm precedes it), a
// later layer's reads attn_norm(h); Q, K and V are Wqkv's thirds in that order. With Wo zeroed a
// layer is h + mlp.Wo(act(first) * second), [first, second] = mlp.Wi(mlp_norm(h)); finish is
// final_norm.
TEST(ModernBertTest, PreNormLayersWithActivatedFirstTimesSecond) {
  EncoderConfig c = small_config(Architecture::ModernBert);
  c.activation = "silu";
  const auto modern = build_architecture(c, 3);
  const auto& w = *modern;
  const at::NoGradGuard no_grad;
  const at::Tensor h = at::randn({2, 5, 16});
  for (int64_t i = 0; i < 2; ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    w[p + "attn.Wo.weight"].zero_();
    auto norm = [&](const at::Tensor& x, const std::string& name) {
      return at::layer_norm(x, {16}, w[name + ".weight"], {}, 1e-5);
    };
    const at::Tensor attention_input = i == 0 ? h : norm(h, p + "attn_norm");
    const at::Tensor qkv = at::matmul(attention_input, w[p + "attn.Wqkv.weight"].t());
    int calls = 0;
    const Attend attend = [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              int64_t layer) {
      ++calls;
      EXPECT_EQ(layer, i);
      EXPECT_TRUE(at::allclose(q, qkv.narrow(-1, 0, 16), 1e-5, 1e-6)) << "q " << i;
      EXPECT_TRUE(at::allclose(k, qkv.narrow(-1, 16, 16), 1e-5, 1e-6)) << "k " << i;
      EXPECT_TRUE(at::allclose(v, qkv.narrow(-1, 32, 16), 1e-5, 1e-6)) << "v " << i;
      return v;
    };
    const at::Tensor out = modern->graph->layer(i, h, attend);
    EXPECT_EQ(calls, 1);
    const at::Tensor projected = at::matmul(norm(h, p + "mlp_norm"), w[p + "mlp.Wi.weight"].t());
    const at::Tensor first = projected.narrow(-1, 0, 24), second = projected.narrow(-1, 24, 24);
    const at::Tensor expected =
        h + at::matmul(at::silu(first) * second, w[p + "mlp.Wo.weight"].t());
    EXPECT_TRUE(at::allclose(out, expected, 1e-5, 1e-5)) << i;
  }
  EXPECT_TRUE(at::allclose(modern->graph->finish(h),
                           at::layer_norm(h, {16}, w["final_norm.weight"], {}, 1e-5), 1e-5, 1e-6));
}

// Padding (masked keys) changes nothing at the real tokens; the layers run in order.
TEST(ModernBertTest, PaddingDoesNotChangeTheRealTokens) {
  testing::expect_padding_does_not_change_real_tokens(
      *build_architecture(small_config(Architecture::ModernBert), 4));
}

// The head's decoder is the token embedding matrix (zeroed: every row of the logits [N, V] is
// decoder.bias, or zero without it); the head applies classifier_activation, not the layers'.
TEST(ModernBertTest, MlmHeadIsTiedAndAppliesTheClassifierActivation) {
  auto logits = [](const std::string& activation, const std::string& classifier_activation) {
    EncoderConfig c = small_config(Architecture::ModernBert);
    c.activation = activation;
    c.classifier_activation = classifier_activation;
    const auto modern = build_architecture(c, 5);  // the same weights for every config
    at::manual_seed(6);
    return modern->graph->mlm_logits(at::randn({6, 16}));
  };
  const at::NoGradGuard no_grad;
  const at::Tensor gelu = logits("gelu", "gelu");
  ASSERT_EQ(gelu.sizes(), (std::vector<int64_t>{6, 50}));
  EXPECT_TRUE(at::equal(logits("silu", "gelu"), gelu));
  EXPECT_FALSE(at::allclose(logits("gelu", "silu"), gelu));

  EncoderConfig c = small_config(Architecture::ModernBert);
  auto modern = build_architecture(c, 7);
  const at::Tensor bias = (*modern)["decoder.bias"];
  (*modern)["embeddings.tok_embeddings.weight"].zero_();
  EXPECT_TRUE(at::allclose(modern->graph->mlm_logits(at::randn({6, 16})), bias.expand({6, 50})));
  c.decoder_bias = false;
  modern = build_architecture(c, 7);
  (*modern)["embeddings.tok_embeddings.weight"].zero_();
  EXPECT_TRUE(at::equal(modern->graph->mlm_logits(at::randn({6, 16})), at::zeros({6, 50})));
}

}  // namespace
}  // namespace lmk
