#include "core/eval/needle_map.h"

#include <gtest/gtest.h>

#include "core/util/error.h"

namespace lmk {
namespace {

QueryScore score(const std::string& part, std::optional<double> position, double value) {
  static int id = 0;
  return {part, "q" + std::to_string(++id), value, position, std::nullopt};
}

// Cells by (length part, depth rounded to the step), lengths in number order, each cell the
// mean of its queries with their count; queries without a position are not placed.
TEST(NeedleMapTest, GroupsByLengthAndRoundedDepth) {
  const std::vector<QueryScore> scores = {
      score("1024", 0.0, 1), score("1024", 0.02, 0),   score("1024", 0.98, 1),
      score("256", 0.1, 1),  score("256", 0.0999, 1),  score("256", 0.149, 0),
      score("256", 1.0, 0),  score("256", std::nullopt, 1)};
  const NeedleMap map = needle_map(scores, 0.1);
  EXPECT_EQ(map.lengths, (std::vector<std::string>{"256", "1024"}));
  ASSERT_EQ(map.depths.size(), 3u);
  EXPECT_DOUBLE_EQ(map.depths[0], 0.0);
  EXPECT_DOUBLE_EQ(map.depths[1], 0.1);
  EXPECT_DOUBLE_EQ(map.depths[2], 1.0);
  // 256: depth 0.1 holds 0.1, 0.0999 and 0.149 (rounded), depth 1 one query, depth 0 none.
  EXPECT_EQ(map.cells[0][0].n, 0u);
  EXPECT_EQ(map.cells[0][1].n, 3u);
  EXPECT_NEAR(map.cells[0][1].mean, 2.0 / 3, 1e-12);
  EXPECT_EQ(map.cells[0][2].n, 1u);
  EXPECT_EQ(map.cells[0][2].mean, 0.0);
  // 1024: depth 0 holds 0.0 and 0.02; 0.98 rounds to 1.
  EXPECT_EQ(map.cells[1][0].n, 2u);
  EXPECT_DOUBLE_EQ(map.cells[1][0].mean, 0.5);
  EXPECT_LE(map.cells[1][0].interval.low, 0.5);
  EXPECT_GE(map.cells[1][0].interval.high, 0.5);
  EXPECT_EQ(map.cells[1][1].n, 0u);
  EXPECT_EQ(map.cells[1][2].n, 1u);
  // A coarser step merges depths.
  EXPECT_EQ(needle_map(scores, 0.5).depths.size(), 2u);
  EXPECT_THROW(needle_map(scores, 0), InputError);
  EXPECT_THROW(needle_map(scores, 1.5), InputError);
}

TEST(NeedleMapTest, RendersARowPerRunAndLength) {
  const NeedleMap a = needle_map({score("256", 0.0, 1), score("256", 0.5, 0)}, 0.1);
  const NeedleMap b = needle_map({score("256", 1.0, 1), score("512", 1.0, 0.5)}, 0.1);
  const std::string text = render_needle_maps({{"cls", a}, {"lmk", b}}, true);
  // Columns: every depth of either map.
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_NE(header.find("0.5"), std::string::npos) << text;
  EXPECT_NE(header.find("1"), std::string::npos) << text;
  EXPECT_NE(text.find("cls"), std::string::npos) << text;
  EXPECT_NE(text.find("1.00 (1)"), std::string::npos) << text;
  EXPECT_NE(text.find("0.50 (1)"), std::string::npos) << text;
  // Three rows under the header and the rule.
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_EQ(lines, 5u) << text;
}

}  // namespace
}  // namespace lmk
