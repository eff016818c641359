// Where the pooling tokens look (engine/eval/attention_profile.h): the profiles of a tiny encoder
// against the encoder's attention captured here one query and one head at a time and averaged
// by the test (the landmarks for lmk, position 0 for cls; every head, or their mean), in
// document, layer, head order; the layer check; and the sums over bins of positions.
#include "engine/eval/attention_profile.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <numeric>

#include "core/util/error.h"
#include "engine/model/attention.h"
#include "tests/support/explorer_tests.h"

namespace lmk {
namespace {

using testing::ExplorerTest;

// The encoder's attention of each query at each head for `ids`: [heads, queries, L] per layer.
std::map<int64_t, at::Tensor> attention_of(const LoadedModel& model,
                                           const std::vector<int32_t>& ids,
                                           const std::vector<int64_t>& queries) {
  AttentionCapture capture;
  capture.query_positions = {queries};
  capture.per_head = true;
  capture.mean_over_queries = false;
  capture.layers = {0, 1};
  const auto L = static_cast<int64_t>(ids.size());
  at::NoGradGuard no_grad;
  model.encoder->forward(
      at::tensor(std::vector<int64_t>(ids.begin(), ids.end()), at::kLong).view({1, L}),
      at::ones({1, L}, at::kLong), &capture);
  std::map<int64_t, at::Tensor> out;
  for (const auto& [layer, weights] : capture.weights)
    out[layer] = weights.select(0, 0).to(at::kDouble);
  return out;
}

// The mean of attention[h][q][j] over the queries and over the heads (head -1) or at one head.
double expected_weight(const at::Tensor& attention, int64_t head, int64_t j) {
  const int64_t heads = attention.size(0), queries = attention.size(1);
  double sum = 0;
  for (int64_t h = 0; h < heads; ++h) {
    if (head >= 0 && h != head) continue;
    for (int64_t q = 0; q < queries; ++q) sum += attention[h][q][j].item<double>();
  }
  return sum / static_cast<double>((head >= 0 ? 1 : heads) * queries);
}

// lmk: one profile per document, layer (ascending, whatever order they were asked in) and head
// (the mean first), each the mean over the landmark positions' rows, summing to 1.
TEST_F(ExplorerTest, LandmarkProfilesAverageTheLandmarksRowsPerLayerAndHead) {
  const std::vector<std::string> texts = {text_, testing::words_text(20, 300)};
  AttentionProfileOptions profile_options;
  profile_options.per_head = true;
  profile_options.layers = {1, 0};
  const std::vector<AttentionProfile> profiles =
      attention_profiles(model_, *tokenizer_, texts, lmk_options(), profile_options);
  const int64_t heads = model_.encoder->config().num_heads;
  ASSERT_EQ(profiles.size(), static_cast<size_t>(2 * 2 * (1 + heads)));
  LandmarkOptions landmark_options;
  landmark_options.spec = LandmarkSpec::parse("fixed:8");
  const LandmarkTokenizer landmarks(*tokenizer_, landmark_options);
  size_t next = 0;
  for (size_t document = 0; document < texts.size(); ++document) {
    const TokenizedText t = landmarks.tokenize(texts[document]);
    const std::vector<int64_t> queries(t.pool_positions.begin(), t.pool_positions.end());
    ASSERT_GT(queries.size(), 1u);
    const auto L = static_cast<int64_t>(t.ids.size());
    const std::map<int64_t, at::Tensor> attention = attention_of(model_, t.ids, queries);
    for (int64_t layer = 0; layer < 2; ++layer) {
      for (int64_t head = -1; head < heads; ++head) {
        const AttentionProfile& p = profiles[next++];
        EXPECT_EQ(p.document, document);
        EXPECT_EQ(p.layer, layer);
        EXPECT_EQ(p.head, head);
        ASSERT_EQ(p.length, L);
        ASSERT_EQ(p.weights.size(), static_cast<size_t>(L));
        EXPECT_NEAR(std::accumulate(p.weights.begin(), p.weights.end(), 0.0), 1.0, 1e-5);
        for (int64_t j = 0; j < L; ++j)
          EXPECT_NEAR(p.weights[static_cast<size_t>(j)],
                      expected_weight(attention.at(layer), head, j), 1e-6)
              << document << " " << layer << " " << head << " " << j;
      }
    }
  }
}

// cls: the final layer by default, the mean over heads only, and the query is position 0 of the
// tokenizer's own template, [CLS] words [SEP] (ids 2, 5 + n for "wn", 3).
TEST_F(ExplorerTest, ClsProfilesAreTheFirstPositionsRowInTheFinalLayer) {
  EncodeOptions options;
  options.pooling = Pooling::Cls;
  const std::vector<AttentionProfile> profiles =
      attention_profiles(model_, *tokenizer_, {testing::words_text(12, 40)}, options);
  ASSERT_EQ(profiles.size(), 1u);
  const AttentionProfile& p = profiles[0];
  EXPECT_EQ(p.layer, 1);
  EXPECT_EQ(p.head, -1);
  ASSERT_EQ(p.length, 14);
  std::vector<int32_t> ids = {2};
  for (int32_t n = 40; n < 52; ++n) ids.push_back(5 + n);
  ids.push_back(3);
  const at::Tensor attention = attention_of(model_, ids, {0}).at(1);
  for (int64_t j = 0; j < 14; ++j)
    EXPECT_NEAR(p.weights[static_cast<size_t>(j)], expected_weight(attention, -1, j), 1e-6) << j;
}

// Layers are 0..num_layers-1; anything else names the field and the model's range.
TEST_F(ExplorerTest, ALayerOutsideTheModelIsRefused) {
  AttentionProfileOptions profile_options;
  profile_options.layers = {0, 2};
  try {
    attention_profiles(model_, *tokenizer_, {text_}, lmk_options(), profile_options);
    ADD_FAILURE() << "layer 2 of 2";
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("layers: layer 2 out of range (the model has 2 layers, 0..1)"),
        std::string::npos)
        << e.what();
  }
}

// The layer check alone: an empty list and the model's layers pass; the message names the field,
// the layer and the range.
TEST(RequireLayersTest, AcceptsTheModelsLayersAndNamesAnyOther) {
  EXPECT_NO_THROW(require_layers({}, 12));
  EXPECT_NO_THROW(require_layers({0, 11, 5}, 12));
  EXPECT_THROW(require_layers({12}, 12), InputError);
  try {
    require_layers({3, -1}, 12);
    ADD_FAILURE() << "layer -1";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "layers");
    EXPECT_EQ(std::string(e.what()),
              "layers: layer -1 out of range (the model has 12 layers, 0..11)");
  }
}

// Bin b sums the positions p with b * length / bins <= p < (b + 1) * length / bins: over 5
// positions, 2 bins split at 2.5 ({0, 1, 2}, {3, 4}), 3 bins at 1.67 and 3.33 ({0, 1}, {2, 3},
// {4}); 10 bins leave every other bin empty.
TEST(AttentionProfileTest, BinsSumEqualSpansOfPositions) {
  AttentionProfile p;
  p.length = 5;
  p.weights = {0.1, 0.2, 0.3, 0.25, 0.15};
  const std::vector<double> two = p.binned(2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NEAR(two[0], 0.6, 1e-12);
  EXPECT_NEAR(two[1], 0.4, 1e-12);
  const std::vector<double> three = p.binned(3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_NEAR(three[0], 0.3, 1e-12);
  EXPECT_NEAR(three[1], 0.55, 1e-12);
  EXPECT_NEAR(three[2], 0.15, 1e-12);
  EXPECT_EQ(p.binned(1),
            std::vector<double>{std::accumulate(p.weights.begin(), p.weights.end(), 0.0)});
  const std::vector<double> ten = p.binned(10);
  EXPECT_EQ(ten, (std::vector<double>{0.1, 0, 0.2, 0, 0.3, 0, 0.25, 0, 0.15, 0}));
  EXPECT_THROW(p.binned(0), InputError);
  EXPECT_THROW(p.binned(-3), InputError);
}

}  // namespace
}  // namespace lmk
