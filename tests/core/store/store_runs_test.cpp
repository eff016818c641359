// The runs unit of the results store (core/store/store_runs.h): experiments, runs, their
// flattened params, statuses and times, selections, and the training lengths of runs.
#include "core/store/store_runs.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <stdexcept>
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

TEST_F(RunReadsTest, TrainingLengthsOfTrainingAndPretrainingRuns) {
  EXPECT_EQ(store_.training_lengths(),
            (std::vector<std::pair<int64_t, std::string>>{{64, "mlm"}, {128, "ft"}}));
}

}  // namespace
}  // namespace lmk
