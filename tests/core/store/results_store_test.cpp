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

bool is_iso_utc(const std::string& time) {
  static const std::regex format(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  return std::regex_match(time, format);
}

TEST(ResultsStoreTest, FlattensConfigsToParams) {
  const json config = json::parse(R"({
    "model": {"name": "small", "layers": [1, {"kind": "global"}]},
    "pooling": "lmk", "granularity": 32, "lr": 0.0001, "normalize": true, "seed": null,
    "empty_object": {}, "empty_list": []})");
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"empty_list", "[]"},    {"empty_object", "{}"},   {"granularity", "32"},
      {"lr", "0.0001"},        {"model.layers[0]", "1"}, {"model.layers[1].kind", "global"},
      {"model.name", "small"}, {"normalize", "true"},    {"pooling", "lmk"},
      {"seed", "null"}};
  EXPECT_EQ(flatten_params(config), expected);
  EXPECT_TRUE(flatten_params(json::object()).empty());

  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  const int64_t run = store.create_run(store.get_or_create_experiment("e"), {"r", "eval", config});
  EXPECT_EQ(store.run_params(run).size(), expected.size());
  EXPECT_EQ(store.run_params(run).at("model.layers[1].kind"), "global");
  EXPECT_EQ(store.get_run(run).config, config);
}

TEST(ResultsStoreTest, ReplacesARunsConfigAndParams) {
  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  const int64_t experiment = store.get_or_create_experiment("e");
  const int64_t run = store.create_run(
      experiment, {"job/x", "train", {{"placeholder", true}, {"train", {{"seed", 1}}}}});
  const int64_t other = store.create_run(experiment, {"other", "train", {{"placeholder", true}}});
  const json config = {{"train", {{"seed", 7}, {"pooling", "lmk"}}}, {"data", {{"train", "p"}}}};
  store.set_run_config(run, config);
  const RunRecord record = store.get_run(run);
  EXPECT_EQ(record.config, config);
  EXPECT_EQ(record.name, "job/x");
  EXPECT_EQ(record.kind, "train");
  const std::map<std::string, std::string> expected = {
      {"data.train", "p"}, {"train.pooling", "lmk"}, {"train.seed", "7"}};
  EXPECT_EQ(store.run_params(run), expected) << "the old params are gone";
  EXPECT_EQ(store.run_params(other).at("placeholder"), "true") << "other runs keep theirs";
  EXPECT_EQ(store.list_runs({"", std::nullopt, {{"train.seed", "7"}}}).size(), 1u);
  EXPECT_THROW(store.set_run_config(999, config), InputError);
  EXPECT_THROW(store.set_run_config(run, json::array()), std::invalid_argument);
  EXPECT_EQ(store.get_run(run).config, config) << "a refused change leaves the run as it was";
}

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

TEST(ResultsStoreTest, StatusChangesStampTimes) {
  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  const int64_t experiment = store.get_or_create_experiment("study", "granularity sweep");
  EXPECT_EQ(store.get_or_create_experiment("study"), experiment);
  const int64_t run = store.create_run(experiment, {"g32", "train", json::object()});
  RunRecord r = store.get_run(run);
  EXPECT_EQ(r.status, RunStatus::Scheduled);
  EXPECT_TRUE(is_iso_utc(r.created_at)) << r.created_at;
  EXPECT_TRUE(r.started_at.empty());
  EXPECT_TRUE(r.ended_at.empty());

  store.set_run_info(run, "node07", "cuda:0", "d2501a4");
  store.set_run_status(run, RunStatus::Running);
  r = store.get_run(run);
  EXPECT_EQ(r.status, RunStatus::Running);
  EXPECT_TRUE(is_iso_utc(r.started_at)) << r.started_at;
  EXPECT_TRUE(r.ended_at.empty());
  EXPECT_EQ(r.host, "node07");
  EXPECT_EQ(r.device, "cuda:0");
  EXPECT_EQ(r.code_revision, "d2501a4");
  const std::string started = r.started_at;

  store.set_run_status(run, RunStatus::Failed, "CUDA out of memory");
  r = store.get_run(run);
  EXPECT_EQ(r.status, RunStatus::Failed);
  EXPECT_EQ(r.error_text, "CUDA out of memory");
  EXPECT_TRUE(is_iso_utc(r.ended_at)) << r.ended_at;
  EXPECT_GE(r.ended_at, r.started_at);

  // Resumed: keeps its first start, is no longer ended, then finishes.
  store.set_run_status(run, RunStatus::Running);
  r = store.get_run(run);
  EXPECT_EQ(r.started_at, started);
  EXPECT_TRUE(r.ended_at.empty());
  EXPECT_TRUE(r.error_text.empty());
  store.set_run_status(run, RunStatus::Finished);
  EXPECT_TRUE(is_iso_utc(store.get_run(run).ended_at));

  const int64_t child = store.create_run(experiment, {"g32-eval", "eval", json::object(), run});
  EXPECT_EQ(store.get_run(child).parent_run_id, run);
  EXPECT_EQ(parse_run_status("killed", "--status"), RunStatus::Killed);
  EXPECT_THROW(parse_run_status("DONE", "--status"), InputError);
}

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

TEST(ResultsStoreTest, FiltersRuns) {
  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  const int64_t a = store.get_or_create_experiment("a");
  const int64_t b = store.get_or_create_experiment("b");
  const int64_t cls = store.create_run(a, {"cls-base", "eval", {{"pooling", "cls"}}});
  const int64_t lmk = store.create_run(a, {"lmk-g32", "eval", {{"pooling", "lmk"}, {"g", 32}}});
  const int64_t lmk_b = store.create_run(b, {"lmk-g64", "train", {{"pooling", "lmk"}, {"g", 64}}});
  store.set_run_status(lmk, RunStatus::Finished);
  auto ids = [&](const RunFilter& filter) {
    std::vector<int64_t> out;
    for (const auto& run : store.list_runs(filter)) out.push_back(run.id);
    return out;
  };
  using Ids = std::vector<int64_t>;
  EXPECT_EQ(ids({}), (Ids{cls, lmk, lmk_b}));
  EXPECT_EQ(ids({"a"}), (Ids{cls, lmk}));
  EXPECT_EQ(ids({"", RunStatus::Finished}), (Ids{lmk}));
  EXPECT_EQ(ids({"", std::nullopt, {{"pooling", "lmk"}}}), (Ids{lmk, lmk_b}));
  EXPECT_EQ(ids({"", std::nullopt, {{"pooling", "lmk"}, {"g", "64"}}}), (Ids{lmk_b}));
  EXPECT_EQ(ids({"a", std::nullopt, {{"pooling", "lmk"}}, "g32"}), (Ids{lmk}));
  EXPECT_EQ(ids({"", std::nullopt, {}, "lmk", "train"}), (Ids{lmk_b}));
  EXPECT_EQ(ids({"c"}), Ids{});
  EXPECT_EQ(store.list_runs({"b"})[0].experiment, "b");
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
