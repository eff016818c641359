// A study's tables (core/jobs/study_table.cpp, declared in study.h): datasets of your own get a
// table of their own, and a granularity chosen on dev is reported on test.
#include "core/jobs/study.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/store/results_store.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/study_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::kBase;
using testing::TempDir;

// A finished evaluation run called `name` on msmarco's `split`: nDCG@10 `value` overall and over
// 40 queries (1 for the first value × 4 of every 4, else 0).
void record_msmarco_run(ResultsStore& store, int64_t experiment, const std::string& name,
                        const std::string& split, double value) {
  const int64_t run = store.create_run(experiment, {name, "eval", {}, {}});
  store.add_eval_results(run, {{"msmarco", split, "ndcg_at_10", value, "all", ""}});
  std::vector<QueryResult> queries;
  for (int q = 0; q < 40; ++q)
    queries.push_back({"msmarco",
                       split,
                       "",
                       "q" + std::to_string(q),
                       std::nullopt,
                       std::nullopt,
                       {{"ndcg_at_10", q % 4 < value * 4 ? 1.0 : 0.0}}});
  store.add_query_results(run, queries);
  store.set_run_status(run, RunStatus::Finished);
}

// A dataset of your own is read on whichever split its evaluation used (here dev).
TEST(StudyTable, YourDatasetsHaveATableOfTheirOwn) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "hf");
  std::filesystem::create_directories(dir.path() / "msmarco");
  dir.write("hf/config.json", "{}");
  dir.write("train.jsonl", "{}\n");
  const StudyPlan plan = plan_study(read_study_config(
      dir.write(
          "own.toml",
          "[study]\nname = \"own\"\ncorpus = []\n[model]\ninit = \"hf\"\n"
          "[finetune]\ntrain = \"train.jsonl\"\npassage_max_length = 64\n"
          "poolings = [\"cls\", \"mean\"]\n[eval]\nbenchmarks = []\ndatasets = \"msmarco\"\n"),
      "full", (dir.path() / "r.db").string()));
  ResultsStore store(plan.config.db);
  const int64_t experiment = store.get_or_create_experiment(plan.experiment);
  for (const auto& [label, value] : {std::pair<std::string, double>{"cls", 0.25}, {"mean", 0.75}})
    record_msmarco_run(store, experiment, plan.cells[0].run_names.at(label + "/msmarco"), "dev",
                       value);
  const std::string table = study_table(plan, store);
  EXPECT_NE(table.find("your datasets: nDCG@10"), std::string::npos) << table;
  const size_t mean = table.find("b  mean");
  ASSERT_NE(mean, std::string::npos) << table;
  EXPECT_NE(table.substr(mean, table.find('\n', mean + 1) - mean).find("0.750"), std::string::npos)
      << table;
  EXPECT_NE(table.find("on train.jsonl"), std::string::npos) << table;
}

// A study without a cls pooling (a decoder's) marks the others against last; with a cls pooling,
// cls stays the baseline wherever it is listed.
TEST(StudyTable, WithoutClsTheBaselineIsLast) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "hf");
  std::filesystem::create_directories(dir.path() / "msmarco");
  dir.write("hf/config.json", "{}");
  dir.write("train.jsonl", "{}\n");
  auto table_of = [&](const std::string& name, const std::string& poolings) {
    const StudyPlan plan = plan_study(read_study_config(
        dir.write(name + ".toml",
                  "[study]\nname = \"" + name +
                      "\"\ncorpus = []\n[model]\ninit = \"hf\"\n"
                      "[finetune]\ntrain = \"train.jsonl\"\npassage_max_length = 64\n"
                      "poolings = " +
                      poolings + "\n[eval]\nbenchmarks = []\ndatasets = \"msmarco\"\n"),
        "full", (dir.path() / (name + ".db")).string()));
    ResultsStore store(plan.config.db);
    const int64_t experiment = store.get_or_create_experiment(plan.experiment);
    for (const StudyVariant& v : plan.config.variants)
      record_msmarco_run(store, experiment, plan.cells[0].run_names.at(v.label + "/msmarco"),
                         "test", v.label == "mean" ? 0.75 : 0.25);
    return study_table(plan, store);
  };
  const std::string decoder = table_of("decoder", "[\"mean\", \"last\"]");
  EXPECT_NE(decoder.find("last (baseline)"), std::string::npos) << decoder;
  EXPECT_NE(decoder.find("each row against last"), std::string::npos) << decoder;
  EXPECT_NE(decoder.find("▲"), std::string::npos) << "mean above last: " << decoder;
  const std::string encoder = table_of("encoder", "[\"last\", \"mean\", \"cls\"]");
  EXPECT_NE(encoder.find("cls (baseline)"), std::string::npos) << encoder;
  EXPECT_EQ(encoder.find("last (baseline)"), std::string::npos) << encoder;
  const std::string neither = table_of("neither", "[\"mean\", \"lmk\"]");
  EXPECT_EQ(neither.find("(baseline)"), std::string::npos) << neither;
}

// The granularity a pooling reports on test is the one best on dev, not on test; the oracle is
// apart and labelled.
TEST(StudyTable, GranularityChosenOnDevIsReportedOnTest) {
  TempDir dir;
  const std::string path = dir.write(
      "s.toml", std::string(kBase) +
                    "[profile.quick.finetune]\npoolings = [\"cls\", \"lmk:fixed:16\"]\n"
                    "[profile.quick.eval]\nselect = \"dev\"\nbenchmarks = [\"documents\"]\n"
                    "lengths = [128]\n[sweep]\n\"eval.granularity\" = [16, 64]\n");
  const StudyPlan plan = plan_study(read_study_grid(path, "quick", (dir.path() / "r.db").string()));
  ResultsStore store(plan.config.db);
  const int64_t experiment = store.get_or_create_experiment(plan.experiment);
  // lmk-16: dev favours g=64 (0.6 vs 0.4), test favours g=16 (0.5 vs 0.3); CLS 0.2.
  auto add_run = [&](const std::string& name, const std::string& split, double value) {
    const int64_t run = store.create_run(experiment, {name, "eval", {}, {}});
    store.add_eval_results(run,
                           {{"manpages-documents", split, "ndcg_at_10", value, "length", "128"}});
    std::vector<QueryResult> queries;
    for (int q = 0; q < 40; ++q)
      queries.push_back({"manpages-documents",
                         split,
                         "128",
                         "q" + std::to_string(q),
                         0.5,
                         128,
                         {{"ndcg_at_10", q % 10 < value * 10 ? 1.0 : 0.0}}});
    store.add_query_results(run, queries);
    store.set_run_status(run, RunStatus::Finished);
  };
  const auto& names16 = plan.cells[0].run_names;
  const auto& names64 = plan.cells[1].run_names;
  add_run(names16.at("cls/manpages-documents"), "test", 0.2);
  add_run(names16.at("lmk-16/manpages-documents"), "test", 0.5);
  add_run(names16.at("lmk-16/manpages-documents:dev"), "dev", 0.4);
  add_run(names64.at("lmk-16/manpages-documents"), "test", 0.3);
  add_run(names64.at("lmk-16/manpages-documents:dev"), "dev", 0.6);
  const std::string table = study_table(plan, store);
  EXPECT_NE(table.find("documents@128 g=64 (oracle g=16)"), std::string::npos) << table;
  const size_t chosen = table.find("granularity chosen on dev, scored on test");
  ASSERT_NE(chosen, std::string::npos) << table;
  const size_t row = table.find("lmk-16 (g chosen on dev)", chosen);
  ASSERT_NE(row, std::string::npos) << table;
  EXPECT_NE(table.substr(row, table.find('\n', row) - row).find("0.300"), std::string::npos)
      << "the test score at g=64: " << table;
  const size_t oracle = table.find("lmk-16 (g best on test: oracle)");
  ASSERT_NE(oracle, std::string::npos) << table;
  EXPECT_NE(table.substr(oracle, table.find('\n', oracle) - oracle).find("0.500"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("an oracle is not a result to test"), std::string::npos) << table;
}

}  // namespace
}  // namespace lmk
