#include "core/tokenize/batching.h"

#include <gtest/gtest.h>

namespace lmk {
namespace {

TokenizedText text_of_length(size_t n, int32_t first_id) {
  TokenizedText t;
  for (size_t i = 0; i < n; ++i) {
    t.ids.push_back(first_id + static_cast<int32_t>(i));
    t.token_offsets.push_back(i == 0 ? -1 : static_cast<int32_t>(i - 1));
  }
  t.pool_positions = {static_cast<int32_t>(n - 1)};
  return t;
}

TEST(BatchingTest, PadsMasksAndKeepsPositions) {
  const std::vector<TokenizedText> texts = {text_of_length(3, 10), text_of_length(5, 20),
                                            text_of_length(1, 30)};
  const Batch b = make_batch(texts, {1, 0, 2}, /*pad_id=*/0);
  ASSERT_EQ(b.rows, 3u);
  ASSERT_EQ(b.length, 5u);
  EXPECT_EQ(b.ids, (std::vector<int32_t>{20, 21, 22, 23, 24, 10, 11, 12, 0, 0, 30, 0, 0, 0, 0}));
  EXPECT_EQ(b.attention_mask, (std::vector<uint8_t>{1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(b.token_offsets,
            (std::vector<int32_t>{-1, 0, 1, 2, 3, -1, 0, 1, -1, -1, -1, -1, -1, -1, -1}));
  EXPECT_EQ(b.pool_positions, (std::vector<std::vector<int32_t>>{{4}, {2}, {0}}));
  EXPECT_EQ(b.source_rows, (std::vector<size_t>{1, 0, 2}));
  EXPECT_EQ(make_batch(texts, {0, 2}, 0, 8).length, 8u) << "pad_to_multiple rounds up";
}

TEST(BatchingTest, BucketsBySizeAndTokenBudget) {
  const std::vector<size_t> lengths = {5, 100, 7, 98, 6, 99};
  const auto batches = bucket_by_length(lengths, 3);
  EXPECT_EQ(batches, (std::vector<std::vector<size_t>>{{1, 5, 3}, {2, 4, 0}}));
  // With at most 200 padded tokens a batch of length-100 rows holds two.
  const auto limited = bucket_by_length(lengths, 3, 200);
  EXPECT_EQ(limited, (std::vector<std::vector<size_t>>{{1, 5}, {3, 2}, {4, 0}}));
  for (const auto& b : limited) EXPECT_LE(b.size() * lengths[b.front()], 200u);
  // With at most 10 % padding waste the 100 / 99 / 98 rows share a batch (1 % waste), 7 and 6
  // share one (8 %), and 5 would take that one to 17 %: it starts the next.
  const auto tight = bucket_by_length(lengths, 3, 0, 0.1);
  EXPECT_EQ(tight, (std::vector<std::vector<size_t>>{{1, 5, 3}, {2, 4}, {0}}));
  for (const double cap : {0.0, 0.05, 0.1}) {
    for (const auto& b : bucket_by_length(lengths, 3, 0, cap)) {
      size_t real = 0;
      for (const size_t i : b) real += lengths[i];
      EXPECT_LE(static_cast<double>(b.size() * lengths[b.front()]),
                (1.0 + cap) * static_cast<double>(real))
          << cap;
    }
  }
  EXPECT_EQ(bucket_by_length(lengths, 3, 0, 0.5), batches) << "a loose cap cuts nothing here";
}

}  // namespace
}  // namespace lmk
