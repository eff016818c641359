#include "core/eval/comparison.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/util/error.h"

namespace lmk {
namespace {

// n queries "q0".. of one part with the given values.
std::vector<QueryScore> scores(const std::vector<double>& values, const std::string& part = "") {
  std::vector<QueryScore> out;
  for (size_t i = 0; i < values.size(); ++i)
    out.push_back({part, "q" + std::to_string(i), values[i], {}, {}});
  return out;
}

ComparisonCell cell(std::vector<QueryScore> s) {
  return {true, std::move(s), stats::kNaN};
}

std::vector<double> ramp(size_t n, double offset) {
  std::vector<double> values;
  for (size_t i = 0; i < n; ++i) values.push_back(0.1 * static_cast<double>(i % 5) + offset);
  return values;
}

TEST(ComparisonTest, SelectsTheQueriesOfAGroup) {
  std::vector<QueryScore> all = {{"256", "a", 1, 0.05, 256},
                                 {"256", "b", 0, 0.95, 256},
                                 {"4096", "a", 1, 0.15, 4096},
                                 {"4096", "c", 0, std::nullopt, 4096}};
  EXPECT_EQ(select_query_group(all, "all", "").size(), 4u);
  EXPECT_EQ(select_query_group(all, "length", "4096").size(), 2u);
  EXPECT_EQ(select_query_group(all, "part", "256").size(), 2u);
  EXPECT_EQ(select_query_group(all, "position", "0-10%").size(), 1u);
  EXPECT_EQ(select_query_group(all, "position", "90-100%").size(), 1u);
  EXPECT_EQ(select_query_group(all, "position@4096", "10-20%").size(), 1u);
  EXPECT_EQ(select_query_group(all, "position@256", "10-20%").size(), 0u);
  EXPECT_EQ(select_query_group(all, "label", "7").size(), 0u);
}

TEST(ComparisonTest, PairsByPartAndQueryId) {
  const std::vector<QueryScore> a = {
      {"1", "x", 0.5, {}, {}}, {"2", "x", 0.25, {}, {}}, {"1", "y", 1, {}, {}}};
  const std::vector<QueryScore> b = {
      {"2", "x", 0.75, {}, {}}, {"1", "x", 0, {}, {}}, {"1", "z", 1, {}, {}}};
  const PairedScores paired = pair_scores(a, b);
  EXPECT_EQ(paired.a, (std::vector<double>{0.5, 0.25}));
  EXPECT_EQ(paired.b, (std::vector<double>{0, 0.75}));
  EXPECT_EQ(paired.only_a, 1u);
  EXPECT_EQ(paired.only_b, 1u);
}

TEST(ComparisonTest, TestsEachRowAgainstTheBaselineWithHolm) {
  const std::vector<std::string> rows = {"cls", "lmk", "mean"};
  const std::vector<std::string> columns = {"corpus@512", "corpus@4096"};
  // lmk is above cls on every query; mean equals cls; at 4096 lmk is only a little above.
  std::vector<std::vector<ComparisonCell>> cells = {
      {cell(scores(ramp(40, 0))), cell(scores(ramp(40, 0)))},
      {cell(scores(ramp(40, 0.3))), cell(scores(ramp(40, 0)))},
      {cell(scores(ramp(40, 0))), cell(scores(ramp(40, 0)))},
  };
  cells[1][1].scores->at(0).value += 0.05;
  ComparisonOptions options;
  options.baseline = 0;
  const ComparisonTable table = compare_table(rows, columns, cells, options);
  ASSERT_EQ(table.tests.size(), 4u) << "2 rows against the baseline in 2 columns";
  EXPECT_EQ(table.versus_baseline(1, 0), 1);
  EXPECT_EQ(table.versus_baseline(2, 0), 0);
  EXPECT_EQ(table.versus_baseline(1, 1), 0);
  EXPECT_EQ(table.versus_baseline(0, 0), 0) << "the baseline itself";
  std::vector<double> raw;
  for (const ComparisonTest& test : table.tests) raw.push_back(test.result.p_value);
  const std::vector<double> holm = stats::holm_adjust(raw);
  for (size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(table.tests[i].p_adjusted, holm[i]);
  const CellSummary& lmk = table.cells[1][0];
  EXPECT_EQ(lmk.n, 40u);
  EXPECT_NEAR(lmk.mean, 0.5, 1e-12);
  EXPECT_LT(lmk.interval.low, lmk.mean);
  EXPECT_GT(lmk.interval.high, lmk.mean);
  const std::vector<std::string> legend = table.legend();
  ASSERT_GE(legend.size(), 2u);
  EXPECT_NE(legend[1].find("Fisher's randomization test"), std::string::npos) << legend[1];
  EXPECT_NE(legend[1].find("each row against cls"), std::string::npos) << legend[1];
  EXPECT_NE(legend[1].find("Holm–Bonferroni over the 4 comparisons"), std::string::npos)
      << legend[1];
}

TEST(ComparisonTest, AllPairsGiveWhoBeatsWhomAndTheBest) {
  const std::vector<std::string> rows = {"a", "b", "c"};
  std::vector<std::vector<ComparisonCell>> cells = {
      {cell(scores(ramp(30, 0)))}, {cell(scores(ramp(30, 0.4)))}, {cell(scores(ramp(30, 0.4)))}};
  cells[2][0].scores->at(3).value += 0.01;  // c: the highest mean, tied with b
  const ComparisonTable table = compare_table(rows, {"x"}, cells, {});
  EXPECT_EQ(table.tests.size(), 3u);
  EXPECT_EQ(table.beaten_rows(1, 0), (std::vector<size_t>{0}));
  EXPECT_EQ(table.beaten_rows(2, 0), (std::vector<size_t>{0}));
  EXPECT_TRUE(table.beaten_rows(0, 0).empty());
  EXPECT_EQ(table.best_row(0), 2u);
  EXPECT_FALSE(table.best_is_significant(0)) << "c does not beat b: a tied best";
  // Without c, b is a significant best.
  const ComparisonTable two = compare_table({"a", "b"}, {"x"}, {cells[0], cells[1]}, {});
  EXPECT_TRUE(two.best_is_significant(0));
}

TEST(ComparisonTest, DifferentQuerySetsAreRefusedUnlessAskedForTheIntersection) {
  const std::vector<std::vector<ComparisonCell>> cells = {{cell(scores(ramp(20, 0)))},
                                                          {cell(scores(ramp(18, 0.2)))}};
  try {
    compare_table({"#1 cls", "#2 lmk"}, {"corpus"}, cells, {});
    ADD_FAILURE() << "compared different query sets";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("#1 cls and #2 lmk in corpus"), std::string::npos) << message;
    EXPECT_NE(message.find("20 queries"), std::string::npos) << message;
    EXPECT_NE(message.find("--intersection"), std::string::npos) << message;
  }
  ComparisonOptions options;
  options.intersection = true;
  const ComparisonTable table = compare_table({"#1 cls", "#2 lmk"}, {"corpus"}, cells, options);
  ASSERT_EQ(table.tests.size(), 1u);
  EXPECT_EQ(table.tests[0].result.n, 18u);
  EXPECT_EQ(table.tests[0].left_out, 2u);
  EXPECT_FALSE(table.notes.empty());
  // As a note instead of an error (lmk study, the workbench).
  options.intersection = false;
  options.refuse_unpaired = false;
  const ComparisonTable noted = compare_table({"#1 cls", "#2 lmk"}, {"corpus"}, cells, options);
  EXPECT_TRUE(noted.tests.empty());
  ASSERT_EQ(noted.notes.size(), 1u);
  // One shared query is not enough.
  EXPECT_THROW(compare_table({"a", "b"}, {"x"}, {{cell(scores({1}))}, {cell(scores({0}))}}, {}),
               InputError);
}

TEST(ComparisonTest, CellsWithoutPerQueryDataShowTheirMeanAndSaySo) {
  std::vector<std::vector<ComparisonCell>> cells = {{{true, std::nullopt, 0.25}},
                                                    {cell(scores(ramp(10, 0)))},
                                                    {{false, std::nullopt, stats::kNaN}}};
  const ComparisonTable table = compare_table({"old", "new", "absent"}, {"x"}, cells, {});
  EXPECT_EQ(table.cells[0][0].mean, 0.25);
  EXPECT_FALSE(table.cells[0][0].per_query);
  EXPECT_TRUE(std::isnan(table.cells[0][0].interval.low));
  EXPECT_TRUE(table.tests.empty());
  ASSERT_EQ(table.notes.size(), 1u);
  EXPECT_NE(table.notes[0].find("old: no per-query results"), std::string::npos);
  EXPECT_FALSE(table.present[2][0]);
}

TEST(ComparisonTest, ACellsNumbersDoNotDependOnTheRestOfTheTable) {
  const ComparisonCell a = cell(scores(ramp(50, 0.1))), b = cell(scores(ramp(50, 0.2)));
  const ComparisonTable small = compare_table({"a", "b"}, {"x"}, {{a}, {b}}, {});
  const ComparisonTable large = compare_table({"z", "a", "b"}, {"x"}, {{b}, {a}, {b}}, {});
  EXPECT_EQ(small.cells[0][0].interval.low, large.cells[1][0].interval.low);
  EXPECT_EQ(small.tests[0].result.p_value, large.find_test(1, 2, 0)->result.p_value);
}

TEST(ComparisonTest, RefusesBadOptions) {
  ComparisonOptions options;
  options.alpha = 1.5;
  EXPECT_THROW(compare_table({"a"}, {"x"}, {{cell(scores({1, 0}))}}, options), InputError);
  options.alpha = 0;
  EXPECT_THROW(compare_table({"a"}, {"x"}, {{cell(scores({1, 0}))}}, options), InputError);
}

}  // namespace
}  // namespace lmk
