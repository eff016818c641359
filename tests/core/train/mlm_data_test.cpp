#include "core/train/mlm_data.h"

#include <gtest/gtest.h>

#include "core/util/error.h"

namespace lmk {
namespace {

TEST(PackTest, FullSequencesWithSeparatorsAndNothingLost) {
  // Documents 1..5 (5 tokens), 6..8 (3), 9 (1); max_length 6 -> 4 content tokens each.
  const auto packed = pack_sequences({{1, 2, 3, 4, 5}, {6, 7, 8}, {}, {9}}, 6, 100, 101);
  const std::vector<std::vector<int32_t>> expected = {
      {100, 1, 2, 3, 4, 101}, {100, 5, 101, 6, 7, 101}, {100, 8, 101, 9, 101}};
  EXPECT_EQ(packed, expected);
  EXPECT_THROW(pack_sequences({{1}}, 2, 100, 101), InputError);
}

TEST(MaskTest, RateSharesSpecialsAndDeterminism) {
  std::vector<int32_t> ids;
  for (int i = 0; i < 20000; ++i) ids.push_back(i % 7 == 0 ? 2 : 10 + i % 500);  // 2 = [CLS]
  MaskingOptions options;
  options.mask_id = 4;
  options.vocab_size = 600;
  options.first_random_id = 10;
  options.never_mask = {2};
  const MaskedSequence m = mask_tokens(ids, options, 9);
  size_t chosen = 0, as_mask = 0, as_random = 0, kept = 0, maskable = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] == 2) {
      EXPECT_EQ(m.labels[i], -100) << "specials are never predicted";
      EXPECT_EQ(m.input_ids[i], 2);
      continue;
    }
    ++maskable;
    if (m.labels[i] == -100) {
      EXPECT_EQ(m.input_ids[i], ids[i]) << "unchosen positions are untouched";
      continue;
    }
    ++chosen;
    EXPECT_EQ(m.labels[i], ids[i]) << "the label is the original token";
    if (m.input_ids[i] == 4) {
      ++as_mask;
    } else if (m.input_ids[i] == ids[i]) {
      ++kept;  // (a random draw equal to the original counts here too: ~0.2 % of them)
    } else {
      ++as_random;
      EXPECT_GE(m.input_ids[i], 10);
      EXPECT_LT(m.input_ids[i], 600);
    }
  }
  // ~17143 maskable positions: 30 % +- 1 %, then 80 / 10 / 10 of the chosen +- 2 %.
  EXPECT_NEAR(static_cast<double>(chosen) / maskable, 0.3, 0.01);
  EXPECT_NEAR(static_cast<double>(as_mask) / chosen, 0.8, 0.02);
  EXPECT_NEAR(static_cast<double>(as_random) / chosen, 0.1, 0.02);
  EXPECT_NEAR(static_cast<double>(kept) / chosen, 0.1, 0.02);
  // Seeded: the same seed gives the same masks, another seed others.
  EXPECT_EQ(mask_tokens(ids, options, 9).input_ids, m.input_ids);
  EXPECT_NE(mask_tokens(ids, options, 10).input_ids, m.input_ids);
}

TEST(NextTokenTargets, EachPositionPredictsTheNextIdTheLastNone) {
  const MaskedSequence m = next_token_targets({2, 11, 12, 13, 3});
  EXPECT_EQ(m.input_ids, (std::vector<int32_t>{2, 11, 12, 13, 3}));
  EXPECT_EQ(m.labels, (std::vector<int32_t>{11, 12, 13, 3, -100}));
  EXPECT_EQ(next_token_targets({7}).labels, (std::vector<int32_t>{-100}));
  EXPECT_TRUE(next_token_targets({}).labels.empty());
}

}  // namespace
}  // namespace lmk
