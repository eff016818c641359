// The attention explorer's data: one forward pass gives every layer's and head's profile, each
// pooling token's row, and the query similarities; checked against the encoder run by the test
// (hidden states, embeddings), against the attention rules (rows sum to 1, a local layer sees
// only its window); float16 against LibTorch's own conversion. The file's round trip is
// document_attention_test's.
#include "engine/eval/attention_explorer.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstring>
#include <random>

#include "core/eval/document_attention.h"
#include "core/util/error.h"
#include "core/util/float16.h"
#include "tests/support/explorer_tests.h"

namespace lmk {
namespace {

using testing::ExplorerTest;

TEST_F(ExplorerTest, TokensPositionsProfilesAndRowsAgreeWithTheEncoder) {
  ExplorerOptions explorer;
  explorer.row_layers = {0, 1};
  std::vector<int64_t> progress;  // on_layer: once per layer, in order
  explorer.on_layer = [&](int64_t done) { progress.push_back(done); };
  const DocumentAttention d =
      explore_attention(model_, *tokenizer_, text_, lmk_options(), explorer);
  std::vector<int64_t> every_layer;
  for (int64_t layer = 1; layer <= d.layers; ++layer) every_layer.push_back(layer);
  EXPECT_EQ(progress, every_layer);
  LandmarkOptions landmark_options;
  landmark_options.spec = LandmarkSpec::parse("fixed:8");
  const TokenizedText t = LandmarkTokenizer(*tokenizer_, landmark_options).tokenize(text_);
  ASSERT_EQ(d.length(), static_cast<int64_t>(t.ids.size()));
  EXPECT_EQ(d.pooling, "lmk");
  EXPECT_EQ(d.granularity, 8);
  EXPECT_EQ(d.pooling_positions.size(), t.pool_positions.size());
  for (size_t i = 0; i < t.pool_positions.size(); ++i)
    EXPECT_EQ(d.pooling_positions[i], t.pool_positions[i]);
  EXPECT_FALSE(d.truncated);
  EXPECT_EQ(d.content_tokens, 60);
  // A content token's span is its word in the text; inserted tokens have empty spans.
  for (int64_t i = 0; i < d.length(); ++i) {
    const auto [begin, end] = d.spans[static_cast<size_t>(i)];
    if (t.token_offsets[static_cast<size_t>(i)] >= 0)
      EXPECT_EQ(text_.substr(begin, end - begin), d.tokens[static_cast<size_t>(i)]);
    else
      EXPECT_EQ(begin, end);
  }
  EXPECT_EQ(d.tokens[0], "[CLS]");
  EXPECT_EQ(d.tokens[static_cast<size_t>(d.pooling_positions[0])], "[SEP]");

  const int64_t L = d.length(), P = static_cast<int64_t>(d.pooling_positions.size());
  const int64_t half_window = model_.encoder->config().half_window();
  ASSERT_EQ(d.rows.size(), 2u);
  for (int64_t layer = 0; layer < d.layers; ++layer) {
    // The mean profile is the mean of the heads' profiles; each sums to 1.
    for (int64_t head = -1; head < d.heads; ++head) {
      double sum = 0;
      for (int64_t j = 0; j < L; ++j) sum += d.profile(layer, head)[j];
      EXPECT_NEAR(sum, 1.0, 1e-4) << layer << " " << head;
    }
    for (int64_t j = 0; j < L; ++j) {
      double heads = 0;
      for (int64_t h = 0; h < d.heads; ++h) heads += d.profile(layer, h)[j];
      EXPECT_NEAR(d.profile(layer, -1)[j], heads / d.heads, 1e-6);
    }
    // Rows, computed by another capture mode: each sums to 1, a local layer's row is zero
    // outside the window, and their mean is the mean profile.
    const std::vector<float>& rows = d.rows.at(layer);
    ASSERT_EQ(static_cast<int64_t>(rows.size()), P * L);
    for (int64_t r = 0; r < P; ++r) {
      double sum = 0;
      for (int64_t j = 0; j < L; ++j) {
        const float w = rows[static_cast<size_t>(r * L + j)];
        sum += w;
        if (!d.global_layers[static_cast<size_t>(layer)] &&
            std::abs(j - d.pooling_positions[static_cast<size_t>(r)]) > half_window)
          EXPECT_EQ(w, 0.0f) << layer << " " << r << " " << j;
      }
      EXPECT_NEAR(sum, 1.0, 1e-4);
    }
    for (int64_t j = 0; j < L; ++j) {
      double mean = 0;
      for (int64_t r = 0; r < P; ++r) mean += rows[static_cast<size_t>(r * L + j)];
      EXPECT_NEAR(mean / P, d.profile(layer, -1)[j], 1e-5);
    }
  }
  EXPECT_TRUE(d.global_layers[0]);
  EXPECT_FALSE(d.global_layers[1]);
  EXPECT_EQ(d.sink_share(1, -1), d.profile(1, -1)[0]);
}

TEST_F(ExplorerTest, QuerySimilaritiesAreTheDotProductsOfTheEncodersOutputs) {
  ExplorerOptions explorer;
  explorer.query = "w37 w74 w111";
  const EncodeOptions options = lmk_options();
  const DocumentAttention d = explore_attention(model_, *tokenizer_, text_, options, explorer);
  ASSERT_EQ(d.query_similarity.size(), d.pooling_positions.size());
  // The query's embedding and the document's final hidden states, by the test.
  at::NoGradGuard no_grad;
  const at::Tensor query = encode_texts(model_, *tokenizer_, {explorer.query}, options)[0];
  const at::Tensor document = encode_texts(model_, *tokenizer_, {text_}, options)[0];
  LandmarkOptions landmark_options;
  landmark_options.spec = LandmarkSpec::parse("fixed:8");
  const TokenizedText t = LandmarkTokenizer(*tokenizer_, landmark_options).tokenize(text_);
  const auto L = static_cast<int64_t>(t.ids.size());
  const at::Tensor hidden = model_.encoder->forward(
      at::tensor(std::vector<int64_t>(t.ids.begin(), t.ids.end()), at::kLong).view({1, L}),
      at::ones({1, L}, at::kLong))[0];
  const int64_t H = hidden.size(1);
  auto cosine = [&](const float* a, const float* b) {
    double dot = 0, na = 0, nb = 0;
    for (int64_t i = 0; i < H; ++i) dot += a[i] * b[i], na += a[i] * a[i], nb += b[i] * b[i];
    return dot / std::sqrt(na * nb);
  };
  const at::Tensor q = query.contiguous();
  for (size_t r = 0; r < d.pooling_positions.size(); ++r) {
    const at::Tensor state = hidden[d.pooling_positions[r]].contiguous();
    EXPECT_NEAR(d.query_similarity[r], cosine(state.data_ptr<float>(), q.data_ptr<float>()), 1e-5);
  }
  const at::Tensor doc = document.contiguous();
  EXPECT_NEAR(d.pooled_similarity, cosine(doc.data_ptr<float>(), q.data_ptr<float>()), 1e-5);
}

TEST_F(ExplorerTest, TruncationIsMarkedAndBadInputIsNamed) {
  EncodeOptions options = lmk_options();
  options.max_length = 20;
  const DocumentAttention d = explore_attention(model_, *tokenizer_, text_, options);
  EXPECT_TRUE(d.truncated);
  EXPECT_EQ(d.length(), 20);
  EXPECT_EQ(d.content_tokens, 60);
  EXPECT_EQ(d.rows.count(1), 1u);  // the final layer by default
  EXPECT_THROW(explore_attention(model_, *tokenizer_, "", options), InputError);
  ExplorerOptions explorer;
  explorer.row_layers = {2};
  try {
    explore_attention(model_, *tokenizer_, text_, options, explorer);
    ADD_FAILURE() << "layer 2 of 2";
  } catch (const InputError& e) {
    // Core names the field; the CLI names its option (CliErrorsNameTheOption).
    EXPECT_NE(std::string(e.what()).find("layers: layer 2 out of range"), std::string::npos)
        << e.what();
  }
}

// Both directions against LibTorch's c10::Half: every half value, and floats around every
// rounding boundary, subnormals, overflow and the specials.
TEST(Float16Test, AgreesWithLibTorchEverywhere) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const float ours = half_to_float(static_cast<uint16_t>(bits));
    const float torch =
        static_cast<float>(c10::Half(static_cast<uint16_t>(bits), c10::Half::from_bits()));
    if (std::isnan(torch))
      EXPECT_TRUE(std::isnan(ours)) << bits;
    else
      EXPECT_EQ(ours, torch) << bits;
  }
  std::mt19937 random(5);
  std::vector<float> floats = {0.0f,     -0.0f,     1.0f,   65504.0f, 65519.0f, 65520.0f,
                               1e9f,     -1e9f,     6e-8f,  3e-8f,    2.9e-8f,  6.1e-5f,
                               INFINITY, -INFINITY, 1e-30f, -1e-30f};
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = static_cast<uint32_t>(random());
    float f;
    std::memcpy(&f, &bits, sizeof f);
    floats.push_back(f);
    // A half value and the float halfway to its neighbour (a tie).
    const float h = half_to_float(static_cast<uint16_t>(random() & 0x7BFF));
    const float next = half_to_float(static_cast<uint16_t>((float_to_half(h) + 1) & 0xFFFF));
    floats.push_back(h);
    floats.push_back(h + (next - h) / 2);
  }
  for (float f : floats) {
    const uint16_t ours = float_to_half(f);
    const uint16_t torch = c10::Half(f).x;
    if (std::isnan(f))
      EXPECT_TRUE(std::isnan(half_to_float(ours)));
    else
      EXPECT_EQ(ours, torch) << f;
  }
}

}  // namespace
}  // namespace lmk
