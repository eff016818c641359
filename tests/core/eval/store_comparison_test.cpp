// Comparison cells and the paper's table's inputs read from a real results store
// (core/eval/store_comparison.h): a column's label and identity, which results belong to it,
// a run's cell with its stored mean and the per-query scores of the column's group (or why it
// has none), and one metric's whole-split and per-length results with each run's parameters.
#include "core/eval/store_comparison.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::TempDir;

// Experiment "study": lmk-32/passkey (per-query results in parts 256 and 1024, stored means that
// are their means) and cls/passkey (evaluated before per-query results: means only); experiment
// "other": mean/corpus, without parameters.
class StoreComparisonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int64_t study = store_.get_or_create_experiment("study");
    other_experiment_ = store_.get_or_create_experiment("other");
    scored_ = store_.create_run(
        study,
        {"lmk-32/passkey", "eval", {{"pooling", "lmk"}, {"granularity", 32}, {"max_length", 512}}});
    old_ = store_.create_run(study,
                             {"cls/passkey", "eval", {{"pooling", "cls"}, {"max_length", 512}}});
    other_ = store_.create_run(other_experiment_, {"mean/corpus", "eval", json::object()});
    store_.add_eval_results(scored_, {{"passkey", "test", "ndcg_at_10", 0.5, "all", ""},
                                      {"passkey", "test", "ndcg_at_10", 0.25, "length", "256"},
                                      {"passkey", "test", "ndcg_at_10", 0.75, "length", "1024"},
                                      {"passkey", "test", "ndcg_at_10", 0.4, "position", "0-10%"},
                                      {"passkey", "test", "recall_at_10", 1.0, "all", ""},
                                      {"passkey", "test", "macro_f1", 0.6, "all", ""}});
    store_.add_query_results(
        scored_,
        {{"passkey", "test", "256", "q0", 0.05, 250, {{"ndcg_at_10", 0.0}, {"recall_at_10", 1.0}}},
         {"passkey", "test", "256", "q1", 0.55, 250, {{"ndcg_at_10", 0.5}, {"recall_at_10", 1.0}}},
         {"passkey",
          "test",
          "1024",
          "q0",
          0.05,
          1000,
          {{"ndcg_at_10", 1.0}, {"recall_at_10", 1.0}}},
         {"passkey",
          "test",
          "1024",
          "q1",
          0.95,
          1000,
          {{"ndcg_at_10", 0.5}, {"recall_at_10", 1.0}}}});
    store_.add_eval_results(old_, {{"passkey", "test", "ndcg_at_10", 0.3, "all", ""},
                                   {"passkey", "test", "ndcg_at_10", 0.2, "length", "256"}});
    store_.add_eval_results(other_, {{"corpus", "test", "ndcg_at_10", 0.1, "all", ""},
                                     {"corpus", "test", "recall_at_10", 0.2, "all", ""}});
  }

  ComparisonCell cell_of(int64_t run, const ResultColumn& column) const {
    return stored_cell(store_, run, store_.eval_results(run), column);
  }

  TempDir dir_;
  ResultsStore store_{(dir_.path() / "results.db").string()};
  int64_t other_experiment_ = 0, scored_ = 0, old_ = 0, other_ = 0;
};

// The label names dataset/split and metric, and a group other than "all" as kind=value; columns
// are equal and ordered by (dataset, split, metric, group kind, group value).
TEST(ResultColumnTest, LabelEqualityAndOrder) {
  const ResultColumn all{"corpus-documents", "test", "ndcg_at_10"};
  const ResultColumn length{"corpus-documents", "test", "ndcg_at_10", "length", "4096"};
  EXPECT_EQ(all.label(), "corpus-documents/test ndcg_at_10");
  EXPECT_EQ(length.label(), "corpus-documents/test ndcg_at_10 length=4096");
  EXPECT_TRUE(all == (ResultColumn{"corpus-documents", "test", "ndcg_at_10", "all", ""}));
  EXPECT_FALSE(all == length);
  EXPECT_FALSE(length == (ResultColumn{"corpus-documents", "test", "ndcg_at_10", "length", "512"}));
  EXPECT_TRUE(all < length) << "\"all\" < \"length\"";
  EXPECT_FALSE(length < all);
  EXPECT_FALSE(all < all);
  EXPECT_TRUE((ResultColumn{"a", "test", "z"}) < (ResultColumn{"b", "dev", "a"}));
  EXPECT_TRUE((ResultColumn{"a", "dev", "z"}) < (ResultColumn{"a", "test", "a"}));
  EXPECT_TRUE((ResultColumn{"a", "test", "m", "length", "1024"}) <
              (ResultColumn{"a", "test", "m", "length", "256"}))
      << "values compare as text";
}

// A result is in a column only when all five of dataset, split, metric, group kind and value
// match.
TEST(ResultColumnTest, AResultIsInAColumnWhenEveryFieldMatches) {
  const ResultColumn column{"passkey", "test", "ndcg_at_10", "length", "256"};
  const EvalResult result{"passkey", "test", "ndcg_at_10", 0.25, "length", "256"};
  EXPECT_TRUE(in_column(result, column));
  EvalResult changed = result;
  changed.dataset = "corpus";
  EXPECT_FALSE(in_column(changed, column));
  changed = result;
  changed.split = "dev";
  EXPECT_FALSE(in_column(changed, column));
  changed = result;
  changed.metric = "recall_at_10";
  EXPECT_FALSE(in_column(changed, column));
  changed = result;
  changed.group_kind = "part";
  EXPECT_FALSE(in_column(changed, column));
  changed = result;
  changed.group_value = "1024";
  EXPECT_FALSE(in_column(changed, column));
  changed = result;
  changed.value = 0.9;
  EXPECT_TRUE(in_column(changed, column)) << "the value is not part of the column";
}

// A run with per-query results: the cell's mean is the stored one, its scores those of the
// column's group (the whole split: every part's queries; a length: that part's).
TEST_F(StoreComparisonTest, ACellHoldsTheStoredMeanAndItsGroupsScores) {
  const ComparisonCell whole = cell_of(scored_, {"passkey", "test", "ndcg_at_10"});
  EXPECT_TRUE(whole.present);
  EXPECT_EQ(whole.stored_mean, 0.5);
  ASSERT_TRUE(whole.scores.has_value());
  ASSERT_EQ(whole.scores->size(), 4u);
  double sum = 0;
  for (const QueryScore& score : *whole.scores) sum += score.value;
  EXPECT_EQ(sum / 4, 0.5);
  EXPECT_TRUE(whole.why_no_scores.empty());

  const ComparisonCell part = cell_of(scored_, {"passkey", "test", "ndcg_at_10", "length", "256"});
  EXPECT_TRUE(part.present);
  EXPECT_EQ(part.stored_mean, 0.25);
  ASSERT_TRUE(part.scores.has_value());
  ASSERT_EQ(part.scores->size(), 2u);
  EXPECT_EQ((*part.scores)[0].part, "256");
  EXPECT_EQ((*part.scores)[0].query_id, "q0");
  EXPECT_EQ((*part.scores)[0].value, 0.0);
  EXPECT_EQ((*part.scores)[1].query_id, "q1");
  EXPECT_EQ((*part.scores)[1].value, 0.5);
  EXPECT_EQ((*part.scores)[1].target_length, std::optional<int64_t>(250));

  // Evidence positions 0.05 in both parts.
  const ComparisonCell position =
      cell_of(scored_, {"passkey", "test", "ndcg_at_10", "position", "0-10%"});
  EXPECT_EQ(position.stored_mean, 0.4);
  ASSERT_TRUE(position.scores.has_value());
  EXPECT_EQ(position.scores->size(), 2u);
}

// A metric with no per-query values in a run that has some (macro-F1) says so, naming the run,
// metric and dataset; a run evaluated before per-query results has no scores and no reason (the
// table's default note); a run without the result is absent.
TEST_F(StoreComparisonTest, CellsWithoutScoresSayWhyOrAreAbsent) {
  const ComparisonCell f1 = cell_of(scored_, {"passkey", "test", "macro_f1"});
  EXPECT_TRUE(f1.present);
  EXPECT_EQ(f1.stored_mean, 0.6);
  EXPECT_FALSE(f1.scores.has_value());
  EXPECT_EQ(f1.why_no_scores, "run " + std::to_string(scored_) +
                                  ": macro_f1 on passkey has no per-query values (not a mean "
                                  "over queries, as macro-F1): its mean is shown without an "
                                  "interval or test");

  const ComparisonCell old = cell_of(old_, {"passkey", "test", "ndcg_at_10", "length", "256"});
  EXPECT_TRUE(old.present);
  EXPECT_EQ(old.stored_mean, 0.2);
  EXPECT_FALSE(old.scores.has_value());
  EXPECT_TRUE(old.why_no_scores.empty());

  for (const ResultColumn& column :
       {ResultColumn{"corpus", "test", "ndcg_at_10"},
        ResultColumn{"passkey", "test", "ndcg_at_10", "length", "4096"},
        ResultColumn{"passkey", "dev", "ndcg_at_10"}}) {
    const ComparisonCell absent = cell_of(scored_, column);
    EXPECT_FALSE(absent.present) << column.label();
    EXPECT_FALSE(absent.scores.has_value()) << column.label();
    EXPECT_TRUE(std::isnan(absent.stored_mean)) << column.label();
  }
}

// The metric's whole-split and per-length results of every run (not its position groups nor
// other metrics), by run id, each with its run's experiment, name and pooling, granularity and
// max_length as stored ("" when the run has none); `runs` and the selection narrow them.
TEST_F(StoreComparisonTest, PivotInputsAreTheMetricsWholeAndLengthResultsWithRunParams) {
  const std::vector<PivotInput> inputs = pivot_inputs(store_, "ndcg_at_10");
  ASSERT_EQ(inputs.size(), 6u) << "3 of lmk-32, 2 of cls, 1 of mean";
  EXPECT_TRUE(
      std::is_sorted(inputs.begin(), inputs.end(),
                     [](const PivotInput& a, const PivotInput& b) { return a.run < b.run; }));
  std::vector<std::tuple<int64_t, std::string, std::string, double>> results;
  for (const PivotInput& input : inputs) {
    results.emplace_back(input.run, input.group_kind, input.group_value, input.value);
    EXPECT_EQ(input.split, "test");
    if (input.run == scored_) {
      EXPECT_EQ(input.experiment, "study");
      EXPECT_EQ(input.name, "lmk-32/passkey");
      EXPECT_EQ(input.pooling, "lmk");
      EXPECT_EQ(input.granularity, "32");
      EXPECT_EQ(input.max_length, "512");
      EXPECT_EQ(input.dataset, "passkey");
    } else if (input.run == old_) {
      EXPECT_EQ(input.pooling, "cls");
      EXPECT_EQ(input.granularity, "");
    } else {
      EXPECT_EQ(input.run, other_);
      EXPECT_EQ(input.experiment, "other");
      EXPECT_EQ(input.name, "mean/corpus");
      EXPECT_EQ(input.pooling, "");
      EXPECT_EQ(input.max_length, "");
      EXPECT_EQ(input.dataset, "corpus");
    }
  }
  std::sort(results.begin(), results.end());
  EXPECT_EQ(results, (std::vector<std::tuple<int64_t, std::string, std::string, double>>{
                         {scored_, "all", "", 0.5},
                         {scored_, "length", "1024", 0.75},
                         {scored_, "length", "256", 0.25},
                         {old_, "all", "", 0.3},
                         {old_, "length", "256", 0.2},
                         {other_, "all", "", 0.1}}));

  const std::vector<PivotInput> of_old = pivot_inputs(store_, "ndcg_at_10", {}, {old_});
  ASSERT_EQ(of_old.size(), 2u);
  EXPECT_EQ(of_old[0].run, old_);
  EXPECT_EQ(of_old[1].run, old_);
  RunSelection other;
  other.experiment_id = other_experiment_;
  const std::vector<PivotInput> of_other = pivot_inputs(store_, "recall_at_10", other);
  ASSERT_EQ(of_other.size(), 1u);
  EXPECT_EQ(of_other[0].run, other_);
  EXPECT_EQ(of_other[0].value, 0.2);
  EXPECT_TRUE(pivot_inputs(store_, "mrr_at_10").empty());
}

}  // namespace
}  // namespace lmk
