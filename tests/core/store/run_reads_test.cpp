// Reads across runs (core/store/run_reads.cpp): each row named by its run's experiment, name,
// pooling (the run's, else its training's, else "unknown") and evaluated length, and only the
// groups, datasets and kinds asked for.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "core/store/results_store.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::TempDir;

class RunReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int64_t e = store_.get_or_create_experiment("study");
    const int64_t f = store_.get_or_create_experiment("other");
    eval_ = store_.create_run(e, {"lmk-eval", "eval", {{"pooling", "lmk"}, {"max_length", 512}}});
    train_ = store_.create_run(
        e, {"ft", "train", {{"train", {{"pooling", "mean"}, {"passage_max_length", 128}}}}});
    bare_ = store_.create_run(f, {"bare", "eval", json::object()});
    pretrain_ = store_.create_run(f, {"mlm", "pretrain", {{"train", {{"max_length", 64}}}}});
    for (const int64_t run : {eval_, train_, bare_})
      store_.add_eval_results(run, {{"docs", "test", "ndcg_at_10", 0.5, "all", ""},
                                    {"docs", "test", "ndcg_at_10", 0.4, "length", "256"},
                                    {"docs", "test", "ndcg_at_10", 0.3, "position", "0-10%"},
                                    {"docs", "test", "ndcg_at_10", 0.2, "position@256", "0-10%"},
                                    {"docs", "test", "f1", 0.1, "label", "a"},
                                    {"docs", "dev", "recall_at_10", 0.9, "all", ""}});
    store_.add_attention_profile(eval_, {{"docs", "256", 1, -1, 0, 0, 0.5, 0.75},
                                         {"docs", "256", 1, -1, 1, 0.5, 1, 0.25},
                                         {"docs", "all", 0, 2, 0, 0, 1, 1}});
    store_.set_run_config(eval_, {{"pooling", "lmk"}, {"max_length", 512}, {"model", "/m/a"}});
  }

  TempDir dir_;
  ResultsStore store_{(dir_.path() / "r.db").string()};
  int64_t eval_ = 0, train_ = 0, bare_ = 0, pretrain_ = 0;
};

TEST_F(RunReadsTest, ResultPointsCarryTheirRunsLabelAndOnlyTheCurvesGroups) {
  const std::vector<RunResultPoint> points = store_.result_points("docs", "test", "ndcg_at_10");
  ASSERT_EQ(points.size(), 12u) << "4 curve groups x 3 runs; the label group is not a curve's";
  EXPECT_EQ(points[0].run.run_id, eval_);
  EXPECT_EQ(points[0].run.experiment, "study");
  EXPECT_EQ(points[0].run.run_name, "lmk-eval");
  EXPECT_EQ(points[0].run.pooling, "lmk");
  EXPECT_EQ(points[0].run.max_length, 512);
  EXPECT_EQ(points[4].run.pooling, "mean") << "a training run: its training's pooling";
  EXPECT_EQ(points[8].run.pooling, "unknown");
  EXPECT_EQ(points[8].run.max_length, 0);
  EXPECT_EQ(points[8].run.experiment, "other");
  EXPECT_TRUE(store_.result_points("docs", "test", "f1").empty());
  EXPECT_EQ(store_.eval_result_metrics(),
            (std::vector<std::tuple<std::string, std::string, std::string>>{
                {"docs", "dev", "recall_at_10"},
                {"docs", "test", "f1"},
                {"docs", "test", "ndcg_at_10"}}));
}

TEST_F(RunReadsTest, AttentionProfilesByKeyWithTheirRunsAndModels) {
  EXPECT_EQ(store_.attention_profile_keys(),
            (std::vector<std::tuple<std::string, int64_t, int64_t, std::string>>{
                {"docs", 0, 2, "all"}, {"docs", 1, -1, "256"}}));
  const std::vector<RunAttentionBin> bins = store_.attention_profile_bins("docs", 1, -1);
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_EQ(bins[0].run.run_name, "lmk-eval");
  EXPECT_EQ(bins[0].length_group, "256");
  EXPECT_EQ(bins[1].bin_start, 0.5);
  EXPECT_EQ(bins[1].weight, 0.25);
  EXPECT_TRUE(store_.attention_profile_bins("docs", 1, 0).empty());
  EXPECT_EQ(store_.attention_profile_models("docs"), std::vector<std::string>{"/m/a"});
  EXPECT_TRUE(store_.attention_profile_models("other").empty());
}

TEST_F(RunReadsTest, TrainingLengthsOfTrainingAndPretrainingRuns) {
  EXPECT_EQ(store_.training_lengths(),
            (std::vector<std::pair<int64_t, std::string>>{{64, "mlm"}, {128, "ft"}}));
}

// The training monitor's reads: the runs that logged a loss and their keys, and a run's curves
// after a step, thinned to about max_points with the last point kept and NaN left out.
TEST_F(RunReadsTest, RunsLoggingAMetricAndTheirCurves) {
  for (int64_t step = 1; step <= 10; ++step)
    store_.log_metrics(
        train_, step,
        {{"loss", step == 4 ? std::nan("") : 1.0 / static_cast<double>(step)}, {"lr", 0.1}});
  store_.log_metrics(eval_, 0, {{"evaluation_time", 2.0}});
  const std::vector<RunSummary> runs = store_.runs_logging("loss");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, train_);
  EXPECT_EQ(runs[0].kind, "train");
  EXPECT_EQ(store_.metric_keys_of_runs_logging("loss"), (std::vector<std::string>{"loss", "lr"}));

  const std::vector<MetricCurve> all =
      store_.metric_curves(train_, {{"loss", -1}, {"lr", 8}, {"gone", -1}}, 100);
  ASSERT_EQ(all.size(), 2u) << "a key without points is left out";
  EXPECT_EQ(all[0].steps, (std::vector<int64_t>{1, 2, 3, 5, 6, 7, 8, 9, 10})) << "NaN left out";
  EXPECT_EQ(all[0].last_step, 10);
  EXPECT_EQ(all[0].values.back(), 0.1);
  EXPECT_EQ(all[1].steps, (std::vector<int64_t>{9, 10})) << "after step 8";
  const std::vector<MetricCurve> thin = store_.metric_curves(train_, {{"loss", -1}}, 3);
  ASSERT_EQ(thin.size(), 1u);
  // 10 rows (the NaN one counts), stride ceil(10 / 3) = 4: rows 0, 4, 8 and the last.
  EXPECT_EQ(thin[0].steps, (std::vector<int64_t>{1, 5, 9, 10}));
}

}  // namespace
}  // namespace lmk
