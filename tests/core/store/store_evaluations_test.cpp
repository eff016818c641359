// The evaluation results unit of the results store (core/store/store_evaluations.h): each curve
// point named by its run's experiment, name, pooling (the run's, else its training's, else
// "unknown") and evaluated length, and only the groups a curve reads.
#include "core/store/store_evaluations.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/store/results_store.h"
#include "tests/support/store_tests.h"

namespace lmk {
namespace {

using testing::RunReadsTest;

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

}  // namespace
}  // namespace lmk
