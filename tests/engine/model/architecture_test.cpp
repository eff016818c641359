// The pieces the architectures share (engine/model/architecture.cpp): the tensors WeightBuilder
// declares and their initialization scheme, Linear and Norm, BERT-style embeddings and the MLM
// head, each against the formula.
#include "engine/model/architecture.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/support/small_encoder_config.h"

namespace lmk {
namespace {

using testing::small_config;

// What a WeightBuilder asked for, in order, each tensor filled with N(0, 1) values.
struct Declarations {
  struct Entry {
    std::string name;
    std::vector<int64_t> shape;
    double init_std;
    bool head;
  };
  std::vector<Entry> entries;
  AddWeight add() {
    return [this](const std::string& name, std::vector<int64_t> shape, double init_std, bool head) {
      entries.push_back({name, shape, init_std, head});
      return at::randn(shape);
    };
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const Entry& e : entries) out.push_back(e.name);
    return out;
  }
};

// Layer norm over the last dimension written out: (x - mean) / sqrt(biased variance + eps).
at::Tensor layer_norm_formula(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                              double eps) {
  const at::Tensor mean = x.mean(-1, true);
  const at::Tensor variance = (x - mean).pow(2).mean(-1, true);
  at::Tensor y = (x - mean) / at::sqrt(variance + eps) * weight;
  return bias.defined() ? y + bias : y;
}

// dense declares weight [out, in] (σ as asked) and a zero-initialized bias [out] when asked;
// norm declares a weight of ones and a zero bias over the hidden size, with the config's eps;
// the σ of the inputs is 0.02, that of the projections into the residual stream
// 0.02 / sqrt(2 · layers) (ModernBERT's scheme).
TEST(WeightBuilderTest, DeclaresLinearAndNormTensorsWithModernBertsScheme) {
  EncoderConfig c = small_config(Architecture::Bert);
  c.num_layers = 8;
  c.hidden_size = 6;
  c.norm_eps = 1e-3;
  Declarations declared;
  const WeightBuilder w(c, declared.add());
  EXPECT_DOUBLE_EQ(w.std_in(), 0.02);
  EXPECT_DOUBLE_EQ(w.std_out(), 0.005);
  const Linear with_bias = w.dense("a", 4, 6, 0.3, true);
  const Linear without_bias = w.dense("b", 5, 6, 0.1, false, /*head=*/true);
  const Norm norm = w.norm("n", true);
  const Norm bias_free = w.norm("m", false, /*head=*/true);
  const at::Tensor raw = w.tensor("t", {2, 3}, 0.7);
  EXPECT_EQ(declared.names(), (std::vector<std::string>{"a.weight", "a.bias", "b.weight",
                                                        "n.weight", "n.bias", "m.weight", "t"}));
  const auto& e = declared.entries;
  EXPECT_EQ(e[0].shape, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(e[0].init_std, 0.3);
  EXPECT_EQ(e[1].shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(e[1].init_std, kInitZeros);
  EXPECT_EQ(e[2].shape, (std::vector<int64_t>{5, 6}));
  EXPECT_TRUE(e[2].head);
  EXPECT_FALSE(e[0].head);
  EXPECT_EQ(e[3].shape, (std::vector<int64_t>{6}));
  EXPECT_EQ(e[3].init_std, kInitOnes);
  EXPECT_EQ(e[4].init_std, kInitZeros);
  EXPECT_TRUE(e[5].head);
  EXPECT_EQ(e[6].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(e[6].init_std, 0.7);
  EXPECT_TRUE(with_bias.bias.defined());
  EXPECT_FALSE(without_bias.bias.defined());
  EXPECT_EQ(norm.size, 6);
  EXPECT_EQ(norm.eps, 1e-3);
  EXPECT_TRUE(norm.bias.defined());
  EXPECT_FALSE(bias_free.bias.defined());
  EXPECT_EQ(raw.sizes(), (std::vector<int64_t>{2, 3}));
}

// Linear is x Wᵀ (+ b); Norm a layer norm over the last dimension with its eps (large here, so
// that it shows), with or without a bias.
TEST(WeightBuilderTest, LinearAndNormFollowTheirFormulas) {
  at::manual_seed(1);
  const at::Tensor x = at::randn({3, 4, 6});
  Linear linear{at::randn({5, 6}), at::randn({5})};
  EXPECT_TRUE(at::allclose(linear(x), at::matmul(x, linear.weight.t()) + linear.bias, 1e-5, 1e-6));
  linear.bias = at::Tensor();
  EXPECT_TRUE(at::allclose(linear(x), at::matmul(x, linear.weight.t()), 1e-5, 1e-6));
  Norm norm{at::randn({6}), at::randn({6}), 6, 0.5};
  EXPECT_TRUE(
      at::allclose(norm(x), layer_norm_formula(x, norm.weight, norm.bias, 0.5), 1e-5, 1e-6));
  norm.bias = at::Tensor();
  EXPECT_TRUE(
      at::allclose(norm(x), layer_norm_formula(x, norm.weight, at::Tensor(), 0.5), 1e-5, 1e-6));
}

// BERT's embeddings: word + absolute position + token type 0, under LayerNorm; without absolute
// positions (an architecture with RoPE) and without token types, the word embeddings alone.
TEST(BertEmbeddingsTest, WordPositionAndTokenTypeZeroUnderLayerNorm) {
  EncoderConfig c = small_config(Architecture::Bert);
  c.max_position_embeddings = 10;
  Declarations declared;
  const WeightBuilder w(c, declared.add());
  const BertEmbeddings bert = BertEmbeddings::declare(w);
  EXPECT_EQ(declared.names(),
            (std::vector<std::string>{"embeddings.word_embeddings.weight",
                                      "embeddings.position_embeddings.weight",
                                      "embeddings.token_type_embeddings.weight",
                                      "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"}));
  EXPECT_EQ(bert.word.sizes(), (std::vector<int64_t>{50, 16}));
  EXPECT_EQ(bert.position.sizes(), (std::vector<int64_t>{10, 16}));
  EXPECT_EQ(bert.token_type.sizes(), (std::vector<int64_t>{2, 16}));
  const at::Tensor ids = at::tensor(std::vector<int64_t>{4, 9, 4, 1, 2, 3}).view({2, 3});
  const at::Tensor states = bert(ids);
  ASSERT_EQ(states.sizes(), (std::vector<int64_t>{2, 3, 16}));
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t i = 0; i < 3; ++i) {
      const at::Tensor sum =
          bert.word[ids[b][i].item<int64_t>()] + bert.position[i] + bert.token_type[0];
      EXPECT_TRUE(at::allclose(states[b][i],
                               layer_norm_formula(sum, bert.norm.weight, bert.norm.bias, 1e-5),
                               1e-5, 1e-5))
          << b << " " << i;
    }
  }

  EncoderConfig gte = small_config(Architecture::Gte);
  gte.type_vocab_size = 0;
  Declarations declared_gte;
  const BertEmbeddings plain = BertEmbeddings::declare(WeightBuilder(gte, declared_gte.add()));
  EXPECT_EQ(declared_gte.names(),
            (std::vector<std::string>{"embeddings.word_embeddings.weight",
                                      "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"}));
  EXPECT_FALSE(plain.position.defined());
  EXPECT_FALSE(plain.token_type.defined());
  EXPECT_TRUE(at::allclose(
      plain(ids),
      layer_norm_formula(at::embedding(plain.word, ids), plain.norm.weight, plain.norm.bias, 1e-5),
      1e-5, 1e-5));
}

// The MLM head declares dense, norm and the decoder bias in that order, all head tensors, with
// the biases asked for; its logits are norm(act(dense(h))) Eᵀ (+ bias) with E the tied matrix.
TEST(MlmHeadTest, DeclaresInOrderAndComputesTiedLogits) {
  const EncoderConfig c = small_config(Architecture::Bert);
  Declarations declared;
  const WeightBuilder w(c, declared.add());
  const at::Tensor embeddings = at::randn({50, 16});
  const MlmHead head = MlmHead::declare(w, "h.dense", "h.norm", "h.bias", true, true, embeddings);
  EXPECT_EQ(declared.names(), (std::vector<std::string>{"h.dense.weight", "h.dense.bias",
                                                        "h.norm.weight", "h.norm.bias", "h.bias"}));
  for (const auto& entry : declared.entries) EXPECT_TRUE(entry.head) << entry.name;
  EXPECT_EQ(declared.entries[0].init_std, w.std_out());
  EXPECT_EQ(declared.entries.back().shape, (std::vector<int64_t>{50}));
  EXPECT_TRUE(head.decoder.is_same(embeddings)) << "tied, not copied";
  const at::Tensor hidden = at::randn({7, 16});
  const at::Tensor dense = at::matmul(hidden, head.dense.weight.t()) + head.dense.bias;
  const at::Tensor gelu = 0.5 * dense * (1 + at::erf(dense / std::sqrt(2.0)));
  const at::Tensor normed = layer_norm_formula(gelu, head.norm.weight, head.norm.bias, 1e-5);
  const at::Tensor logits = head(hidden, "gelu");
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{7, 50}));
  EXPECT_TRUE(
      at::allclose(logits, at::matmul(normed, embeddings.t()) + head.decoder_bias, 1e-4, 1e-5));

  Declarations bare;
  const MlmHead bias_free =
      MlmHead::declare(WeightBuilder(c, bare.add()), "d", "n", "", false, false, embeddings);
  EXPECT_EQ(bare.names(), (std::vector<std::string>{"d.weight", "n.weight"}));
  EXPECT_FALSE(bias_free.decoder_bias.defined());
  EXPECT_FALSE(bias_free.dense.bias.defined());
  EXPECT_FALSE(bias_free.norm.bias.defined());
}

}  // namespace
}  // namespace lmk
