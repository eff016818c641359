#include "core/store/results_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

#include "core/util/error.h"
#include "tests/support/store_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::run_children;
using testing::TempDir;

TEST(ResultsStoreTest, AdoptsTheRunNamedByLmkRunId) {
  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  const int64_t run = store.create_run(store.get_or_create_experiment("e"), {"job/x", "eval", {}});
  ::unsetenv("LMK_RUN_ID");
  EXPECT_EQ(run_id_from_environment(), std::nullopt);
  ::setenv("LMK_RUN_ID", "", 1);
  EXPECT_EQ(run_id_from_environment(), std::nullopt) << "empty: as if unset";
  ::setenv("LMK_RUN_ID", std::to_string(run).c_str(), 1);
  EXPECT_EQ(run_id_from_environment(), run);
  for (const char* bad : {"abc", "0", "-3", "12x", " 4", "99999999999999999999999"}) {
    ::setenv("LMK_RUN_ID", bad, 1);
    try {
      run_id_from_environment();
      ADD_FAILURE() << bad << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("LMK_RUN_ID"), std::string::npos) << e.what();
    }
  }
  ::unsetenv("LMK_RUN_ID");

  adopt_run(store, run, "eval", {{"pooling", "cls"}});
  EXPECT_EQ(store.run_params(run).at("pooling"), "cls");
  EXPECT_EQ(store.get_run(run).name, "job/x");
  auto message = [&](int64_t id, const std::string& kind) {
    try {
      adopt_run(store, id, kind, json::object());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string missing = message(42, "eval");
  for (const std::string& part : {std::string("LMK_RUN_ID"), std::string("42"), store.path()})
    EXPECT_NE(missing.find(part), std::string::npos) << missing;
  const std::string other_kind = message(run, "train");
  for (const char* part : {"LMK_RUN_ID", "'eval'", "'train'"})
    EXPECT_NE(other_kind.find(part), std::string::npos) << other_kind;
  EXPECT_EQ(store.run_params(run).at("pooling"), "cls") << "a refused run is left as it was";
}

TEST(ResultsStoreTest, StoresEvalResultsProfilesHistogramsAndArtifacts) {
  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  const int64_t run = store.create_run(store.get_or_create_experiment("e"), {"r"});
  store.add_eval_results(run, {{"scifact", "test", "ndcg_at_10", 0.5},
                               {"scifact", "test", "ndcg_at_10", 0.25, "length", "4k-8k"},
                               {"mldr", "dev", "recall_at_100", 0.75}});
  store.add_eval_results(run, {{"scifact", "test", "ndcg_at_10", 0.625}});  // replaces
  const auto all = store.eval_results(run);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].dataset, "mldr");
  EXPECT_EQ(all[1].value, 0.625);
  EXPECT_EQ(all[1].group_kind, "all");
  EXPECT_EQ(all[2].group_value, "4k-8k");
  EXPECT_EQ(store.eval_results(run, "scifact").size(), 2u);
  EXPECT_THROW(store.add_eval_results(run, {{"d", "s", "m", 1, "all", "x"}}),
               std::invalid_argument);

  store.add_attention_profile(run, {{"mldr", "8192", 21, -1, 0, 0, 0.5, 0.75},
                                    {"mldr", "8192", 21, -1, 1, 0.5, 1.0, 0.25}});
  const auto profile = store.attention_profiles(run, "mldr");
  ASSERT_EQ(profile.size(), 2u);
  EXPECT_EQ(profile[1].bin, 1);
  EXPECT_EQ(profile[1].weight, 0.25);
  EXPECT_TRUE(store.attention_profiles(run, "scifact").empty());

  LengthHistogram histogram{
      "mldr", "bert", {{0, 512, 10}, {512, 1024, 3}}, {{50, 300}, {99, 1000}}};
  store.add_length_histogram(histogram);
  histogram.bins.pop_back();
  store.add_length_histogram(histogram);  // replaces
  const auto histograms = store.length_histograms();
  ASSERT_EQ(histograms.size(), 1u);
  ASSERT_EQ(histograms[0].bins.size(), 1u);
  EXPECT_EQ(histograms[0].bins[0].count, 10);
  EXPECT_EQ(histograms[0].percentiles, histogram.percentiles);
  EXPECT_TRUE(store.length_histograms("scifact").empty());

  store.add_artifact(run, "checkpoint", "/runs/r/step-100");
  ASSERT_EQ(store.artifacts(run).size(), 1u);
  EXPECT_EQ(store.artifacts(run)[0].path, "/runs/r/step-100");
  EXPECT_THROW(store.get_run(99), InputError);
  EXPECT_THROW(store.add_artifact(99, "x", "y"), InputError);
}

// Eight processes write to one file at once: every row arrives and none sees "locked".
TEST(ResultsStoreTest, ProcessesWriteConcurrently) {
  TempDir dir;
  const std::string path = (dir.path() / "shared.db").string();
  { ResultsStore store(path); }
  constexpr int kChildren = 8, kRuns = 20, kSteps = 50;
  const auto start = std::chrono::steady_clock::now();
  const auto codes = run_children(kChildren, [&](int child) {
    ResultsStore store(path);
    const int64_t experiment = store.get_or_create_experiment("concurrency");
    for (int r = 0; r < kRuns; ++r) {
      const int64_t run = store.create_run(
          experiment, {"child" + std::to_string(child) + "-run" + std::to_string(r),
                       "train",
                       {{"child", child}, {"run", r}}});
      store.set_run_status(run, RunStatus::Running);
      for (int step = 0; step < kSteps; ++step)
        store.log_metrics(run, step, {{"loss", 1.0 / (step + 1)}, {"lr", 0.1}});
      store.add_eval_results(run, {{"scifact", "test", "ndcg_at_10", 0.01 * r},
                                   {"scifact", "test", "recall_at_100", 0.02 * r}});
      store.set_run_status(run, RunStatus::Finished);
    }
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int child = 0; child < kChildren; ++child)
    EXPECT_EQ(codes[child], 0) << "child " << child << " (3: database is locked)";
  std::printf("%d processes wrote %d runs in %.2f s\n", kChildren, kChildren * kRuns, seconds);

  ResultsStore store(path, ResultsStore::OpenMode::Existing);
  ASSERT_EQ(store.experiments().size(), 1u);
  const auto runs = store.list_runs({"concurrency", RunStatus::Finished});
  ASSERT_EQ(runs.size(), static_cast<size_t>(kChildren * kRuns));
  for (int child = 0; child < kChildren; ++child) {
    EXPECT_EQ(store.list_runs({"", std::nullopt, {{"child", std::to_string(child)}}}).size(),
              static_cast<size_t>(kRuns));
  }
  for (const auto& run : runs) {
    EXPECT_EQ(store.metric_series(run.id, "loss").size(), static_cast<size_t>(kSteps));
    EXPECT_EQ(store.metric_series(run.id, "lr").size(), static_cast<size_t>(kSteps));
    const auto latest = store.latest_metrics(run.id);
    ASSERT_EQ(latest.size(), 2u);
    EXPECT_EQ(latest[0].step, kSteps - 1);
    EXPECT_EQ(store.eval_results(run.id).size(), 2u);
    EXPECT_FALSE(run.started_at.empty());
    EXPECT_FALSE(run.ended_at.empty());
  }
}

}  // namespace
}  // namespace lmk
