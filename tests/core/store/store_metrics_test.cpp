// The metric series unit of the results store (core/store/store_metrics.h): latest values and
// series, the runs that logged a metric and their curves.
#include "core/store/store_metrics.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/store/results_store.h"
#include "core/util/error.h"
#include "tests/support/store_tests.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::is_iso_utc;
using testing::RunReadsTest;
using testing::TempDir;

TEST(ResultsStoreTest, KeepsLatestMetricsAndSeries) {
  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  const int64_t run = store.create_run(store.get_or_create_experiment("e"), {"r", "train"});
  for (int step = 0; step < 5; ++step)
    store.log_metrics(run, step, {{"loss", 5.0 - step}, {"lr", 0.001 * step}});
  store.log_metrics(run, 2, {{"loss", 9.0}});  // late point of an earlier step
  store.log_metrics(run, 7, {{"grad_norm", NAN}});
  const auto latest = store.latest_metrics(run);
  ASSERT_EQ(latest.size(), 3u);
  EXPECT_EQ(latest[0].key, "grad_norm");
  EXPECT_TRUE(std::isnan(latest[0].value));
  EXPECT_EQ(latest[1].key, "loss");
  EXPECT_EQ(latest[1].step, 4);
  EXPECT_EQ(latest[1].value, 1.0);
  EXPECT_TRUE(is_iso_utc(latest[1].time));
  EXPECT_EQ(latest[2].key, "lr");
  EXPECT_DOUBLE_EQ(latest[2].value, 0.004);
  const auto series = store.metric_series(run, "loss");
  ASSERT_EQ(series.size(), 6u);
  std::vector<double> values;
  for (const auto& point : series) values.push_back(point.value);
  EXPECT_EQ(values, (std::vector<double>{5, 4, 3, 9, 2, 1}));
  EXPECT_THROW(store.log_metrics(run + 1, 0, {{"loss", 1}}), InputError);
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
