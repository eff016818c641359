// The store layer's exports (one definition for lmk export and the workbench): file names and
// MTEB v2 results read back from the files.
#include "core/store/export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/util/file.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;

TEST(ExportTest, SafeFileNamesKeepOnlyPortableCharacters) {
  EXPECT_EQ(safe_file_name("lmk-32/corpus@1024"), "lmk-32_corpus_1024");
  EXPECT_EQ(safe_file_name("granularity=16,a+b.c_d"), "granularity=16,a+b.c_d");
  EXPECT_EQ(safe_file_name("caf\xC3\xA9 x"), "caf___x");  // each byte of a UTF-8 character
  EXPECT_EQ(safe_file_name(""), "_");
  EXPECT_EQ(safe_file_name(".."), "_..");
  EXPECT_EQ(safe_file_name("a/../b"), "a_.._b");
}

TEST(ExportTest, MtebResultsPerRunAndDatasetWithTheMainScore) {
  TempDir dir;
  const std::string db = (dir.path() / "results.db").string();
  ResultsStore store(db);
  const int64_t experiment = store.get_or_create_experiment("e");
  // Two runs whose names give the same folder, one with a declared main score and a revision.
  const int64_t a = store.create_run(experiment, {"cls/x", "eval", {{"dataset_revision", "r1"}}});
  const int64_t b = store.create_run(experiment, {"cls:x", "eval", json::object()});
  const int64_t c = store.create_run(experiment, {"no-whole-split", "eval", json::object()});
  store.add_eval_results(a, {{"scifact", "test", "ndcg_at_10", 0.5},
                             {"scifact", "test", "recall_at_100", 0.8},
                             {"scifact", "test", "ndcg_at_10", 0.9, "length", "512"}});
  store.add_eval_results(b, {{"mldr", "dev", "ndcg_at_10", 0.25},
                             {"mldr", "dev", "main_score", 0.75},
                             {"mldr", "test", "map_at_10", 0.125}});
  store.add_eval_results(c, {{"mldr", "test", "ndcg_at_10", 0.3, "length", "128"}});
  store.log_metrics(a, 0, {{"evaluation_time", 12.5}});

  const fs::path out = dir.path() / "mteb";
  const std::vector<std::string> files = export_mteb(
      store, {store.get_run(a), store.get_run(b), store.get_run(c)}, out.string(), "recall_at_100");
  const std::string file_a = (out / ("cls_x-" + std::to_string(a)) / "scifact.json").string();
  const std::string file_b = (out / ("cls_x-" + std::to_string(b)) / "mldr.json").string();
  ASSERT_EQ(files, (std::vector<std::string>{file_a, file_b}));
  EXPECT_FALSE(fs::exists(out / "no-whole-split")) << "only a length group: no file";

  EXPECT_EQ(json::parse(read_file(file_a)), json::parse(R"({
    "dataset_revision": "r1", "task_name": "scifact", "mteb_version": "2.0.0",
    "scores": {"test": [{"main_score": 0.8, "hf_subset": "default", "languages": ["eng-Latn"],
                         "ndcg_at_10": 0.5, "recall_at_100": 0.8}],
               "test_512": [{"main_score": null, "hf_subset": "default", "languages": ["eng-Latn"],
                             "ndcg_at_10": 0.9}]},
    "evaluation_time": 12.5, "kg_co2_emissions": null})"));
  const json result_b = json::parse(read_file(file_b));
  EXPECT_EQ(result_b["dataset_revision"], nullptr);
  EXPECT_EQ(result_b["evaluation_time"], nullptr);
  EXPECT_EQ(result_b["scores"]["dev"][0]["main_score"], 0.75) << "the stored main score wins";
  EXPECT_EQ(result_b["scores"]["test"][0]["main_score"], nullptr) << "no recall_at_100 in test";
  EXPECT_EQ(result_b["scores"]["test"][0]["map_at_10"], 0.125);
}

// The one writer: lmk eval writes mteb_result of the rows it stores, lmk export of the rows it
// reads back, so the two files agree; a part is an MTEB split "<split>_<part>" (LongEmbed's
// test_256 ...), per-position and per-label groups are left out, the run's recorded revision
// and main score are used.
TEST(ExportTest, EvalAndExportWriteTheSameResult) {
  TempDir dir;
  const std::vector<EvalResult> rows = {
      {"passkey", "test", "ndcg_at_1", 0.5, "all", ""},
      {"passkey", "test", "ndcg_at_10", 0.6, "all", ""},
      {"passkey", "test", "ndcg_at_1", 0.25, "length", "256"},
      {"passkey", "test", "ndcg_at_1", 0.75, "part", "x"},
      {"passkey", "test", "ndcg_at_1", 0.1, "position", "0-10%"},
      {"passkey", "test", "ndcg_at_1", 0.2, "position@256", "0-10%"},
      {"passkey", "test", "f1", 0.3, "label", "a"},
      {"other", "test", "ndcg_at_1", 0.9, "all", ""}};
  const json direct = mteb_result("passkey", rows, "lmk-seed-7", "ndcg_at_1", 3.5);
  EXPECT_EQ(direct, json::parse(R"({
    "dataset_revision": "lmk-seed-7", "task_name": "passkey", "mteb_version": "2.0.0",
    "scores": {
      "test": [{"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.5,
                "ndcg_at_1": 0.5, "ndcg_at_10": 0.6}],
      "test_256": [{"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.25,
                    "ndcg_at_1": 0.25}],
      "test_x": [{"hf_subset": "default", "languages": ["eng-Latn"], "main_score": 0.75,
                  "ndcg_at_1": 0.75}]},
    "evaluation_time": 3.5, "kg_co2_emissions": null})"));

  ResultsStore store((dir.path() / "results.db").string());
  const int64_t run = store.create_run(
      store.get_or_create_experiment("e"),
      {"r", "eval", {{"dataset_revision", "lmk-seed-7"}, {"main_score", "ndcg_at_1"}}});
  store.add_eval_results(run, rows);
  store.log_metrics(run, 0, {{"evaluation_time", 3.5}});
  const std::vector<std::string> files =
      export_mteb(store, {store.get_run(run)}, (dir.path() / "out").string());
  ASSERT_EQ(files.size(), 2u);  // passkey and other
  EXPECT_EQ(json::parse(read_file((dir.path() / "out" / "r" / "passkey.json").string())), direct);
}

}  // namespace
}  // namespace lmk
