// Per-query results in the results store (core/store/store_queries.h): stored, read back one
// run or several runs at a time, and replaced part by part.
#include "core/store/results_store.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::TempDir;

TEST(ResultsStoreTest, StoresPerQueryResultsAndReplacesAPartEvaluatedAgain) {
  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  const int64_t run = store.create_run(store.get_or_create_experiment("e"), {"first"});
  const int64_t other = store.create_run(store.get_or_create_experiment("e"), {"second"});
  std::vector<QueryResult> rows = {
      {"passkey", "test", "256", "q1", 0.25, 256, {{"ndcg_at_1", 1}, {"recall_at_10", 1}}},
      {"passkey", "test", "256", "q2", 0.75, 256, {{"ndcg_at_1", 0}, {"recall_at_10", 1}}},
      {"passkey", "test", "4096", "q1", 0.5, 4096, {{"ndcg_at_1", 0}, {"recall_at_10", 0.5}}},
      {"scifact", "test", "", "7", std::nullopt, std::nullopt, {{"ndcg_at_1", 0.5}}},
  };
  store.add_query_results(run, rows);
  store.add_query_results(other, {rows[0]});
  const std::vector<QueryScore> scores = store.query_scores(run, "passkey", "test", "ndcg_at_1");
  ASSERT_EQ(scores.size(), 3u);
  EXPECT_EQ(scores[0].part, "256");
  EXPECT_EQ(scores[0].query_id, "q1");
  EXPECT_EQ(scores[0].value, 1);
  EXPECT_EQ(scores[0].evidence_position, 0.25);
  EXPECT_EQ(scores[0].target_length, 256);
  EXPECT_EQ(scores[2].part, "4096");
  EXPECT_EQ(scores[2].value, 0);
  const std::vector<QueryScore> plain = store.query_scores(run, "scifact", "test", "ndcg_at_1");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_FALSE(plain[0].evidence_position.has_value());
  EXPECT_FALSE(plain[0].target_length.has_value());
  EXPECT_TRUE(store.query_scores(run, "passkey", "dev", "ndcg_at_1").empty());
  // Several runs at once (the workbench's read): each run's scores as the one-run read gives them.
  const auto by_run = store.query_scores("passkey", "test", "ndcg_at_1");
  ASSERT_EQ(by_run.size(), 2u);
  EXPECT_EQ(by_run.at(run).size(), 3u);
  EXPECT_EQ(by_run.at(other).size(), 1u);
  for (size_t i = 0; i < scores.size(); ++i) {
    EXPECT_EQ(by_run.at(run)[i].query_id, scores[i].query_id);
    EXPECT_EQ(by_run.at(run)[i].value, scores[i].value);
  }
  EXPECT_EQ(store.query_scores("passkey", "test", "ndcg_at_1", {other}).size(), 1u);
  EXPECT_EQ(store.positioned_query_metrics(),
            (std::vector<std::tuple<std::string, std::string, std::string>>{
                {"passkey", "test", "ndcg_at_1"}, {"passkey", "test", "recall_at_10"}}))
      << "scifact has no parts and no positions";
  EXPECT_EQ(store.query_result_sets(),
            (std::vector<std::tuple<int64_t, std::string, std::string>>{
                {run, "passkey", "test"}, {run, "scifact", "test"}, {other, "passkey", "test"}}));
  EXPECT_EQ(store.query_metric_names(run, "passkey", "test"),
            (std::vector<std::string>{"ndcg_at_1", "recall_at_10"}));
  EXPECT_TRUE(store.query_metric_names(run, "passkey", "dev").empty());
  // One query's metric, from the part asked for when it is in several.
  EXPECT_EQ(store.query_metric(run, "q1", "recall_at_10", "4096"), 0.5);
  EXPECT_EQ(store.query_metric(run, "q1", "recall_at_10", "256"), 1.0);
  EXPECT_EQ(store.query_metric(run, "q2", "recall_at_10", "4096"), 1.0) << "only in 256";
  EXPECT_EQ(store.query_metric(run, "q3", "recall_at_10"), std::nullopt);
  const std::vector<QueryResult> all = store.query_results(run);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].metrics, (std::map<std::string, double>{{"ndcg_at_1", 1}, {"recall_at_10", 1}}));
  EXPECT_EQ(store.query_results(run, "scifact").size(), 1u);

  // The 256 part evaluated again: its queries are replaced, the other part's stay.
  store.add_query_results(run, {{"passkey", "test", "256", "q9", 0.1, 250, {{"ndcg_at_1", 0.5}}}});
  const std::vector<QueryScore> again = store.query_scores(run, "passkey", "test", "ndcg_at_1");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].query_id, "q9");
  EXPECT_EQ(again[1].part, "4096");
  EXPECT_EQ(store.query_scores(other, "passkey", "test", "ndcg_at_1").size(), 1u)
      << "another run's queries stay";
  EXPECT_THROW(store.add_query_results(999, rows), InputError) << "no such run";
  EXPECT_THROW(store.add_query_results(run, {{"", "test", "", "q", {}, {}, {}}}),
               std::invalid_argument);
}

}  // namespace
}  // namespace lmk
