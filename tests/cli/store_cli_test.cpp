// Runs the real lmk binary on a results store filled through ResultsStore: lmk results,
// compare and export, and their errors (exit 2, the file left alone).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "core/store/results_store.h"
#include "core/util/file.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;

struct Output {
  int code;
  std::string out, err;
};

// Runs a shell command with stdout and stderr kept apart.
Output shell(const std::string& command) {
  TempDir dir;
  const std::string out = (dir.path() / "stdout").string(), err = (dir.path() / "stderr").string();
  const int status = std::system((command + " > " + out + " 2> " + err + " < /dev/null").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), read_file(out),
          read_file(err)};
}

const std::string kLmk = std::string(LMK_BINARY_DIR) + "/app/lmk ";

// Runs `lmk ARGS`.
Output lmk(const std::string& args) {
  return shell(kLmk + args);
}

size_t count_lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The words of the first line of text that has `word` among them.
std::vector<std::string> words_of_line(const std::string& text, const std::string& word) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream split(line);
    std::vector<std::string> words;
    for (std::string w; split >> w;) words.push_back(w);
    if (std::find(words.begin(), words.end(), word) != words.end()) return words;
  }
  return {};
}

using Words = std::vector<std::string>;

class StoreCliTest : public ::testing::Test {
 protected:
  // Runs 1 (cls) and 2 (lmk, g32) of experiment "pooling-study" with results; run 3 (lmk, g64) of
  // "sweep" failed without any.
  StoreCliTest() : db_((dir_.path() / "results.db").string()) {
    ResultsStore store(db_);
    const int64_t pooling = store.get_or_create_experiment("pooling-study");
    const json cls = {{"model", {{"name", "small"}, {"layers", 4}}}, {"pooling", "cls"}};
    json lmk = cls;
    lmk["pooling"] = "lmk";
    lmk["granularity"] = 32;
    const int64_t cls_run = store.create_run(pooling, {"cls", "eval", cls});
    const int64_t lmk_run = store.create_run(pooling, {"lmk-g32", "eval", lmk});
    store.add_eval_results(cls_run, {{"scifact", "test", "ndcg_at_10", 0.5},
                                     {"scifact", "test", "recall_at_100", 0.8},
                                     {"mldr", "dev", "ndcg_at_10", 0.25},
                                     {"mldr", "dev", "ndcg_at_10", 0.125, "length", "4k-8k"}});
    store.add_eval_results(lmk_run, {{"scifact", "test", "ndcg_at_10", 0.625},
                                     {"scifact", "test", "recall_at_100", 0.8},
                                     {"scifact", "test", "main_score", 0.7},
                                     {"mldr", "dev", "ndcg_at_10", 0.375, "length", "4k-8k"}});
    store.log_metrics(cls_run, 0, {{"evaluation_time", 12.5}});
    for (const int64_t run : {cls_run, lmk_run}) store.set_run_status(run, RunStatus::Finished);
    lmk["granularity"] = 64;
    const int64_t failed =
        store.create_run(store.get_or_create_experiment("sweep"), {"lmk-g64", "train", lmk});
    store.set_run_status(failed, RunStatus::Failed, "out of memory");
  }
  TempDir dir_;
  std::string db_;
};

TEST_F(StoreCliTest, ResultsTable) {
  Output r = lmk("results --db " + db_ + " --experiment pooling-study");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "id  name     status    granularity  pooling  mldr/dev  scifact/test\n"
            "--  -------  --------  -----------  -------  --------  ------------\n"
            " 1  cls      FINISHED  -            cls        0.2500        0.5000\n"
            " 2  lmk-g32  FINISHED  32           lmk             -        0.6250\n"
            "(ndcg_at_10, whole split)\n");

  // All runs: the experiment column appears; recall instead of nDCG.
  r = lmk("results --db " + db_ + " --metric recall_at_100");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("experiment"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep"), std::string::npos) << r.out;
  EXPECT_EQ(count_lines(r.out), 6u) << r.out;
  EXPECT_NE(r.out.find("0.8000"), std::string::npos) << r.out;

  r = lmk("results --db " + db_ + " --where pooling=lmk --where granularity=64");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "id  name     status\n"
            "--  -------  ------\n"
            " 3  lmk-g64  FAILED\n");
  r = lmk("results --db " + db_ + " --status finished --name g32");
  EXPECT_EQ(count_lines(r.out), 4u) << r.out;
  EXPECT_NE(r.out.find("lmk-g32"), std::string::npos) << r.out;
  r = lmk("results --db " + db_ + " --where pooling=mean");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no runs"), std::string::npos) << r.err;
}

TEST_F(StoreCliTest, CompareShowsConfigDifferencesAndDeltas) {
  Output r = lmk("compare --db " + db_ + " 1 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(words_of_line(r.out, "pooling"), (Words{"*", "pooling", "cls", "lmk"})) << r.out;
  EXPECT_EQ(words_of_line(r.out, "granularity"), (Words{"*", "granularity", "-", "32"}));
  EXPECT_EQ(words_of_line(r.out, "status"), (Words{"status", "FINISHED", "FINISHED"}));
  EXPECT_EQ(r.out.find("model.name"), std::string::npos) << "equal params only with --all";
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "no ANSI codes outside a terminal";
  EXPECT_EQ(words_of_line(r.out, "length=4k-8k"),
            (Words{"*", "mldr/dev", "ndcg_at_10", "length=4k-8k", "0.1250", "0.3750", "(+0.2500)"}))
      << r.out;
  EXPECT_EQ(words_of_line(r.out, "recall_at_100"),
            (Words{"scifact/test", "recall_at_100", "all", "0.8000", "0.8000", "(+0.0000)"}));
  EXPECT_EQ(words_of_line(r.out, "main_score"),
            (Words{"*", "scifact/test", "main_score", "all", "-", "0.7000"}));

  r = lmk("compare --all --db " + db_ + " 1 2 3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(words_of_line(r.out, "model.name"), (Words{"model.name", "small", "small", "small"}));
  EXPECT_EQ(words_of_line(r.out, "granularity"), (Words{"*", "granularity", "-", "32", "64"}));
  EXPECT_EQ(words_of_line(r.out, "status"), (Words{"status", "FINISHED", "FINISHED", "FAILED"}));

  // In a terminal the differences are bold.
  if (std::system("command -v script > /dev/null") != 0) GTEST_SKIP() << "no script(1)";
  r = shell("env -u NO_COLOR script -qec '" + kLmk + "compare --db " + db_ + " 1 2' /dev/null");
  EXPECT_NE(r.out.find("\x1b[1mlmk\x1b[0m"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\x1b[1msmall"), std::string::npos) << r.out;
}

TEST_F(StoreCliTest, ExportCsv) {
  const std::string csv = (dir_.path() / "results.csv").string();
  Output r = lmk("export --db " + db_ + " --format csv --out " + csv);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string text = read_file(csv);
  std::istringstream lines(text);
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  EXPECT_EQ(header,
            "run_id,run_name,experiment,kind,status,params.granularity,params.model.layers,"
            "params.model.name,params.pooling,dataset,split,metric,group_kind,group_value,value");
  EXPECT_EQ(first, "1,cls,pooling-study,eval,FINISHED,,4,small,cls,mldr,dev,ndcg_at_10,all,,0.25");
  EXPECT_EQ(count_lines(text), 9u) << text;  // header + 8 results; run 3 has none
  r = lmk("export --db " + db_ + " --format csv --run 2 --out -");
  EXPECT_EQ(count_lines(r.out), 5u) << r.out;
  EXPECT_NE(
      r.out.find("2,lmk-g32,pooling-study,eval,FINISHED,32,4,small,lmk,scifact,test,main_score"),
      std::string::npos)
      << r.out;
}

TEST_F(StoreCliTest, ExportMteb) {
  const fs::path out = dir_.path() / "mteb";
  const Output r = lmk("export --db " + db_ + " --format mteb --out " + out.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::exists(out / "cls" / "mldr.json"));
  EXPECT_FALSE(fs::exists(out / "lmk-g32" / "mldr.json")) << "only a length group: no file";
  EXPECT_FALSE(fs::exists(out / "lmk-g64"));
  const json cls = json::parse(read_file((out / "cls" / "scifact.json").string()));
  EXPECT_EQ(cls, json::parse(R"({
    "dataset_revision": null, "task_name": "scifact", "mteb_version": "2.0.0",
    "scores": {"test": [{"main_score": 0.5, "hf_subset": "default", "languages": ["eng-Latn"],
                         "ndcg_at_10": 0.5, "recall_at_100": 0.8}]},
    "evaluation_time": 12.5, "kg_co2_emissions": null})"));
  const json lmk_result = json::parse(read_file((out / "lmk-g32" / "scifact.json").string()));
  EXPECT_EQ(lmk_result["scores"]["test"][0]["main_score"], 0.7);
  EXPECT_EQ(lmk_result["evaluation_time"], nullptr);
}

TEST_F(StoreCliTest, BadInputExitsTwoAndCreatesNothing) {
  const std::string missing = (dir_.path() / "missing.db").string();
  const std::string text = dir_.write("notes.txt", "not a database, just notes\n");
  struct Case {
    std::string args, message;
  } cases[] = {
      {"results --db " + missing, "missing.db: no such results store"},
      {"compare --db " + missing + " 1 2", "missing.db"},
      {"export --db " + missing + " --format csv --out -", "missing.db"},
      {"results --db " + text, "notes.txt: file is not a database"},
      {"results --db " + db_ + " --where pooling", "--where: 'pooling' is not key=value"},
      {"results --db " + db_ + " --where =lmk", "--where"},
      {"results --db " + db_ + " --status done", "--status: unknown run status 'done'"},
      {"results --db " + db_ + " --experiment nope", "experiments: pooling-study, sweep"},
      {"results --db " + db_ + " --metric ndcg@10", "they have main_score, ndcg_at_10"},
      {"compare --db " + db_ + " 1 99", "results.db: no run with id 99"},
      {"compare --db " + db_ + " 1", "at least two"},
      {"compare --db " + db_ + " 1 x", "RUN"},
      {"export --db " + db_ + " --format parquet --out x", "--format"},
      {"export --db " + db_ + " --format csv --run 7 --out -", "no run with id 7"},
  };
  const std::string db_before = read_file(db_);
  for (const auto& c : cases) {
    const Output r = lmk(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
  EXPECT_FALSE(fs::exists(missing));
  EXPECT_EQ(read_file(text), "not a database, just notes\n");
  EXPECT_EQ(read_file(db_), db_before);
}

}  // namespace
}  // namespace lmk
