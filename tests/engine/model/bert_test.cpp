// BERT (engine/model/bert.cpp): the tensors of transformers' BertForMaskedLM, absolute positions,
// post-norm layers, masking, and the MLM head tied to the word embeddings. Numbers against
// transformers itself: tests/parity.
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

TEST(BertTest, ParameterNamesFollowHuggingFace) {
  const Encoder bert(small_config(Architecture::Bert));
  EXPECT_EQ(bert.named_weights().at("embeddings.position_embeddings.weight").sizes(),
            (std::vector<int64_t>{128, 16}));
  EXPECT_EQ(bert.named_weights().count("encoder.layer.1.attention.output.LayerNorm.bias"), 1u);
}

// BertForMaskedLM's state dict without "bert." (H 16, MLP 24, vocabulary 50, 128 positions, two
// layers); its decoder weight is the word embeddings, and cls.predictions.decoder.bias is
// cls.predictions.bias.
std::vector<ExpectedTensor> bert_for_masked_lm(int64_t type_vocab_size) {
  std::vector<ExpectedTensor> t = {
      {"embeddings.word_embeddings.weight", {50, 16}, 'i'},
      {"embeddings.position_embeddings.weight", {128, 16}, 'i'},
      {"embeddings.LayerNorm.weight", {16}, '1'},
      {"embeddings.LayerNorm.bias", {16}, '0'},
      {"cls.predictions.transform.dense.weight", {16, 16}, 'o', true},
      {"cls.predictions.transform.dense.bias", {16}, '0', true},
      {"cls.predictions.transform.LayerNorm.weight", {16}, '1', true},
      {"cls.predictions.transform.LayerNorm.bias", {16}, '0', true},
      {"cls.predictions.bias", {50}, '0', true},
  };
  if (type_vocab_size > 0)
    t.push_back({"embeddings.token_type_embeddings.weight", {type_vocab_size, 16}, 'i'});
  for (const std::string layer : {"encoder.layer.0.", "encoder.layer.1."}) {
    for (const char* projection : {"query", "key", "value"}) {
      t.push_back({layer + "attention.self." + projection + ".weight", {16, 16}, 'i'});
      t.push_back({layer + "attention.self." + projection + ".bias", {16}, '0'});
    }
    t.push_back({layer + "attention.output.dense.weight", {16, 16}, 'o'});
    t.push_back({layer + "attention.output.dense.bias", {16}, '0'});
    t.push_back({layer + "attention.output.LayerNorm.weight", {16}, '1'});
    t.push_back({layer + "attention.output.LayerNorm.bias", {16}, '0'});
    t.push_back({layer + "intermediate.dense.weight", {24, 16}, 'i'});
    t.push_back({layer + "intermediate.dense.bias", {24}, '0'});
    t.push_back({layer + "output.dense.weight", {16, 24}, 'o'});
    t.push_back({layer + "output.dense.bias", {16}, '0'});
    t.push_back({layer + "output.LayerNorm.weight", {16}, '1'});
    t.push_back({layer + "output.LayerNorm.bias", {16}, '0'});
  }
  return t;
}

// Exactly the tensors of a Hugging Face BERT folder, with their shapes, BERT's initialization
// and the head's tensors marked; no token type table when the config has none.
TEST(BertTest, DeclaresTheTensorsOfBertForMaskedLM) {
  EncoderConfig c = small_config(Architecture::Bert);
  testing::expect_declared(*build_architecture(c, 1), bert_for_masked_lm(2));
  c.type_vocab_size = 0;
  testing::expect_declared(*build_architecture(c, 1), bert_for_masked_lm(0));
}

// Absolute positions: one token repeated gets a different embedding at every position, [B, L, H].
TEST(BertTest, EmbeddingsDependOnThePosition) {
  const auto bert = build_architecture(small_config(Architecture::Bert), 2);
  const at::Tensor states = bert->graph->embed(at::full({2, 4}, 7, at::kLong));
  ASSERT_EQ(states.sizes(), (std::vector<int64_t>{2, 4, 16}));
  for (int64_t i = 1; i < 4; ++i)
    EXPECT_GT((states[0][i] - states[0][0]).abs().max().item<float>(), 1e-3) << i;
  EXPECT_TRUE(at::equal(states[0], states[1]));
}

// Post-norm: Q, K and V are the query, key and value projections of the stream itself; with the
// attention's output projection zeroed a layer is LN_out(h1 + W2 gelu(W1 h1 + b1) + b2), with
// h1 = LN_attention(h).
TEST(BertTest, PostNormLayersWithAGeluFeedForward) {
  const auto bert = build_architecture(small_config(Architecture::Bert), 3);
  const auto& w = *bert;
  const at::NoGradGuard no_grad;
  const at::Tensor h = at::randn({2, 5, 16});
  for (int64_t i = 0; i < 2; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    w[p + "attention.output.dense.weight"].zero_();
    w[p + "attention.output.dense.bias"].zero_();
    auto linear = [&](const at::Tensor& x, const std::string& name) {
      return at::matmul(x, w[p + name + ".weight"].t()) + w[p + name + ".bias"];
    };
    auto norm = [&](const at::Tensor& x, const std::string& name) {
      return at::layer_norm(x, {16}, w[p + name + ".weight"], w[p + name + ".bias"], 1e-5);
    };
    int calls = 0;
    const Attend attend = [&](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              int64_t layer) {
      ++calls;
      EXPECT_EQ(layer, i);
      EXPECT_TRUE(at::allclose(q, linear(h, "attention.self.query"), 1e-5, 1e-6));
      EXPECT_TRUE(at::allclose(k, linear(h, "attention.self.key"), 1e-5, 1e-6));
      EXPECT_TRUE(at::allclose(v, linear(h, "attention.self.value"), 1e-5, 1e-6));
      return v;
    };
    const at::Tensor out = bert->graph->layer(i, h, attend);
    EXPECT_EQ(calls, 1);
    const at::Tensor h1 = norm(h, "attention.output.LayerNorm");
    const at::Tensor expected =
        norm(h1 + linear(at::gelu(linear(h1, "intermediate.dense")), "output.dense"),
             "output.LayerNorm");
    EXPECT_TRUE(at::allclose(out, expected, 1e-5, 1e-5)) << i;
  }
  EXPECT_TRUE(at::equal(bert->graph->finish(h), h)) << "no final norm";
}

// Padding (masked keys) changes nothing at the real tokens; the layers run in order.
TEST(BertTest, PaddingDoesNotChangeTheRealTokens) {
  testing::expect_padding_does_not_change_real_tokens(
      *build_architecture(small_config(Architecture::Bert), 4));
}

// The MLM head's decoder is the word embedding matrix: with it zeroed every row of the logits
// [N, V] is cls.predictions.bias.
TEST(BertTest, MlmHeadIsTiedToTheWordEmbeddings) {
  const auto bert = build_architecture(small_config(Architecture::Bert), 5);
  const at::NoGradGuard no_grad;
  const at::Tensor hidden = at::randn({6, 16});
  const at::Tensor logits = bert->graph->mlm_logits(hidden);
  ASSERT_EQ(logits.sizes(), (std::vector<int64_t>{6, 50}));
  const at::Tensor bias = (*bert)["cls.predictions.bias"];
  EXPECT_FALSE(at::allclose(logits, bias.expand({6, 50})));
  (*bert)["embeddings.word_embeddings.weight"].zero_();
  EXPECT_TRUE(at::allclose(bert->graph->mlm_logits(hidden), bias.expand({6, 50})));
}

}  // namespace
}  // namespace lmk
