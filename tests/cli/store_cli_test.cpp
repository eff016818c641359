// Runs the real lmk binary on a results store filled through ResultsStore: lmk results,
// compare and export, and their errors (exit 2, the file left alone).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "core/eval/comparison.h"
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
            "(ndcg_at_10 on each dataset: the mean over all its queries, pooled over its parts; "
            "lmk compare gives paired tests, --group length the parts)\n");

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
  // The filter language of the workbench: a comparison and a key pattern.
  r = lmk("results --db " + db_ + " --where 'granularity>32' --where '*pooling=l*'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("lmk-g64"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("lmk-g32"), std::string::npos) << r.out;
  r = lmk("results --db " + db_ + " --where 'granularity>big'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--where: 'granularity>big': > needs a number"), std::string::npos) << r.err;
  r = lmk("results --db " + db_ + " --status finished --name g32");
  EXPECT_EQ(count_lines(r.out), 4u) << r.out;
  EXPECT_NE(r.out.find("lmk-g32"), std::string::npos) << r.out;
  r = lmk("results --db " + db_ + " --where pooling=mean");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("no runs"), std::string::npos) << r.err;
}

TEST_F(StoreCliTest, CompareShowsConfigDifferencesAndMeansOfRunsWithoutPerQueryResults) {
  Output r = lmk("compare --db " + db_ + " 1 2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(words_of_line(r.out, "pooling"), (Words{"*", "pooling", "cls", "lmk"})) << r.out;
  EXPECT_EQ(words_of_line(r.out, "granularity"), (Words{"*", "granularity", "-", "32"}));
  EXPECT_EQ(words_of_line(r.out, "status"), (Words{"status", "FINISHED", "FINISHED"}));
  EXPECT_EQ(r.out.find("model.name"), std::string::npos) << "equal params only with --all";
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "no ANSI codes outside a terminal";
  // Stored before per-query results: the means, no interval, no test, and a note saying so.
  EXPECT_EQ(words_of_line(r.out, "#1"), (Words{"a", "#1", "cls", "0.250", "0.500"})) << r.out;
  EXPECT_EQ(words_of_line(r.out, "#2"), (Words{"b", "#2", "lmk-g32", "-", "0.625"})) << r.out;
  EXPECT_NE(r.out.find("#1 cls: no per-query results"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("No paired tests"), std::string::npos) << r.out;
  // Other metrics (in the order asked for) and the per-length groups on request.
  r = lmk("compare --db " + db_ +
          " 1 2 --metric recall_at_100 --metric ndcg_at_10 --group all "
          "--group length");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("mldr/dev ndcg_at_10 length=4k-8k"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("scifact/test recall_at_100"), std::string::npos) << r.out;
  EXPECT_EQ(words_of_line(r.out, "#2"),
            (Words{"b", "#2", "lmk-g32", "-", "0.375", "0.800", "0.625"}))
      << r.out;

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

// Runs that share a dataset only by its parts (a store from before every dataset had its whole-set
// score, without per-query rows to compute it from): the refusal says which --group pairs them.
TEST(StoreCliGroups, RunsSharingOnlyPartsAreToldWhichGroupPairsThem) {
  TempDir dir;
  const std::string db = (dir.path() / "parts.db").string();
  {
    ResultsStore store(db);
    const int64_t experiment = store.get_or_create_experiment("old");
    for (const char* pooling : {"cls", "mean"}) {
      const int64_t run =
          store.create_run(experiment, {pooling, "eval", json{{"pooling", pooling}}});
      store.add_eval_results(run, {{"passkey", "test", "ndcg_at_1", 0.5, "length", "256"}});
      store.set_run_status(run, RunStatus::Finished);
    }
  }
  Output r = lmk("compare --db " + db + " 1 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("runs 1 and 2 share passkey/test only by length: add --group length"),
            std::string::npos)
      << r.err;
  r = lmk("compare --db " + db + " 1 2 --group length");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("length=256"), std::string::npos) << r.out;
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
      {"compare --db " + db_ + " 1 2 --test fisher", "run 1 (cls) has no per-query results"},
      {"compare --db " + db_ + " 1 2 --baseline 1", "run 1 (cls) has no per-query results"},
      {"compare --db " + db_ + " 1 2 --baseline 3", "--baseline: run 3 is not among"},
      {"compare --db " + db_ + " 1 2 --metric mrr", "no 'mrr' results in these runs"},
      {"compare --db " + db_ + " 1 2 --group words", "--group: unknown group 'words'"},
      {"compare --db " + db_ + " 1 1", "a run id is given twice"},
      {"export --db " + db_ + " --format trec --run 1 --out x.trec", "run 1: no saved ranking"},
      {"export --db " + db_ + " --format latex --metric mrr --out -", "no 'mrr' results"},
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

// Runs with per-query results: three poolings evaluated on the same 40 queries of one dataset
// folder, lmk clearly above cls and mean tied with cls; a run of another folder; a run that
// holds only 30 of the queries; a passkey dataset of two lengths.
class QueryResultsCliTest : public ::testing::Test {
 protected:
  QueryResultsCliTest() : db_((dir_.path() / "results.db").string()) {
    ResultsStore store(db_);
    const int64_t experiment = store.get_or_create_experiment("study");
    for (int v = 0; v < 3; ++v) {
      values_.emplace_back();
      for (int q = 0; q < 40; ++q) {
        const double base = (q % 5) * 0.2;
        values_.back().push_back(v == 2 ? std::min(1.0, base + 0.3 + 0.01 * (q % 3)) : base);
      }
    }
    add_run(store, experiment, "cls/corpus@512", "cls", "/data/corpus", values_[0]);
    add_run(store, experiment, "mean/corpus@512", "mean", "/data/corpus", values_[1]);
    add_run(store, experiment, "lmk-32/corpus@512", "lmk", "/data/corpus", values_[2]);
    add_run(store, experiment, "lmk-32/other", "lmk", "/data/other", values_[2]);
    add_run(store, experiment, "lmk-32/part", "lmk", "/data/corpus",
            std::vector<double>(values_[2].begin(), values_[2].begin() + 30));
    add_run(store, experiment, "lmk-32/one", "lmk", "/data/corpus", {values_[2][0]});
    add_run(store, experiment, "lmk-32/passkey", "lmk", "/data/passkey", values_[2], "passkey");
  }

  void add_run(ResultsStore& store, int64_t experiment, const std::string& name,
               const std::string& pooling, const std::string& folder,
               const std::vector<double>& values, const std::string& dataset = "corpus-documents") {
    const int64_t run = store.create_run(
        experiment, {name, "eval", json{{"pooling", pooling}, {"dataset", folder}}});
    double sum = 0;
    std::vector<QueryResult> queries;
    for (size_t q = 0; q < values.size(); ++q) {
      sum += values[q];
      queries.push_back({dataset,
                         "test",
                         "",
                         "q" + std::to_string(q),
                         0.025 * static_cast<double>(q),
                         1000 + static_cast<int64_t>(q),
                         {{"ndcg_at_10", values[q]}}});
    }
    store.add_eval_results(
        run, {{dataset, "test", "ndcg_at_10", sum / static_cast<double>(values.size())}});
    store.add_query_results(run, queries);
    store.set_run_status(run, RunStatus::Finished);
  }

  // The comparison of runs 1-3 as lmk compare builds it (the same labels, so the same seeds).
  ComparisonTable expected(const ComparisonOptions& options) {
    std::vector<std::vector<ComparisonCell>> cells;
    for (const auto& values : values_) {
      std::vector<QueryScore> scores;
      for (size_t q = 0; q < values.size(); ++q)
        scores.push_back({"", "q" + std::to_string(q), values[q], {}, {}});
      cells.push_back({{true, scores, stats::kNaN}});
    }
    return compare_table({"#1 cls/corpus@512", "#2 mean/corpus@512", "#3 lmk-32/corpus@512"},
                         {"corpus-documents/test ndcg_at_10"}, cells, options);
  }

  TempDir dir_;
  std::string db_;
  std::vector<std::vector<double>> values_;
};

// Splits a CSV line (no quoted fields here).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
  if (!line.empty() && line.back() == ',') fields.push_back("");
  return fields;
}

TEST_F(QueryResultsCliTest, CompareGivesMeansIntervalsAndTestsInEveryFormat) {
  // Text: ranx-style letters; lmk (c) beats cls (a) and mean (b), the test and the correction
  // are named.
  Output r = lmk("compare --db " + db_ + " 1 2 3");
  ASSERT_EQ(r.code, 0) << r.err;
  const ComparisonTable table = expected({});
  auto cell = [&](size_t row) {
    char text[64];
    std::snprintf(text, sizeof text, "%.3f ± %.3f", table.cells[row][0].mean,
                  table.cells[row][0].interval.half_width());
    return std::string(text);
  };
  EXPECT_EQ(words_of_line(r.out, "#1"), (Words{"a", "#1", "cls/corpus@512", cell(0).substr(0, 5),
                                               "±", cell(0).substr(cell(0).rfind(' ') + 1)}))
      << r.out;
  EXPECT_NE(r.out.find(cell(2) + " ᵃᵇ"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("corpus-documents/test ndcg_at_10 (N 40)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Holm–Bonferroni over the 3 comparisons"), std::string::npos) << r.out;
  EXPECT_NEAR(table.cells[2][0].mean, stats::mean(values_[2]), 1e-12);

  // CSV: every number exactly as the library computes it for the same labels and seed.
  r = lmk("compare --db " + db_ + " 1 2 3 --format csv --seed 0");
  ASSERT_EQ(r.code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, line;
  std::getline(lines, header);
  const std::vector<std::string> names = csv_fields(header);
  auto field = [&](const std::vector<std::string>& row, const std::string& name) {
    const auto at = std::find(names.begin(), names.end(), name);
    return row.at(static_cast<size_t>(at - names.begin()));
  };
  size_t cells = 0, tests = 0;
  while (std::getline(lines, line)) {
    const std::vector<std::string> row = csv_fields(line);
    if (field(row, "kind") == "cell") {
      const size_t index = static_cast<size_t>(field(row, "row_key")[0] - 'a');
      EXPECT_EQ(std::stod(field(row, "mean")), table.cells[index][0].mean);
      EXPECT_EQ(std::stod(field(row, "ci_low")), table.cells[index][0].interval.low);
      EXPECT_EQ(std::stod(field(row, "ci_high")), table.cells[index][0].interval.high);
      EXPECT_EQ(field(row, "n"), "40");
      ++cells;
    } else {
      const ComparisonTest* test =
          table.find_test(static_cast<size_t>(field(row, "row_key")[0] - 'a'),
                          static_cast<size_t>(field(row, "other_key")[0] - 'a'), 0);
      ASSERT_NE(test, nullptr) << line;
      EXPECT_EQ(std::stod(field(row, "p_value")), test->result.p_value);
      EXPECT_EQ(std::stod(field(row, "p_holm")), test->p_adjusted);
      EXPECT_EQ(field(row, "test"), "fisher");
      EXPECT_EQ(field(row, "correction"), "holm");
      ++tests;
    }
  }
  EXPECT_EQ(cells, 3u);
  EXPECT_EQ(tests, 3u);

  // Against a baseline, with Student's t (no resampling: the p-values are exact): ▲ for lmk,
  // nothing for mean, and the list of tests.
  r = lmk("compare --db " + db_ + " 1 2 3 --baseline 1 --test student");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find(cell(2) + " ▲"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(cell(1) + " ▲"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("#1 cls/corpus@512 (baseline)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("paired Student's t-test"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("each row against #1 cls/corpus@512"), std::string::npos) << r.out;
  std::vector<double> differences;
  for (size_t q = 0; q < 40; ++q) differences.push_back(values_[2][q] - values_[0][q]);
  char p[32];
  std::snprintf(p, sizeof p, "%.2e", stats::student_t_p_value(differences));
  EXPECT_NE(r.out.find(std::string("c − a  40")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(p), std::string::npos) << p << "\n" << r.out;

  // LaTeX and Markdown carry the same markers.
  r = lmk("compare --db " + db_ + " 1 2 3 --format latex");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("\\begin{tabular}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\\mathbf{" + cell(2).substr(0, 5) + "} \\pm"), std::string::npos)
      << "the significant best in bold\n"
      << r.out;
  EXPECT_NE(r.out.find("^{ab}$"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Holm–Bonferroni"), std::string::npos) << r.out;
  r = lmk("compare --db " + db_ + " 1 2 3 --format markdown --p-values");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("<sup>ab</sup>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| column | pair | N |"), std::string::npos) << r.out;
}

TEST_F(QueryResultsCliTest, CompareRefusesRunsThatCannotBePaired) {
  Output r = lmk("compare --db " + db_ + " 3 4");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("runs 3 and 4 evaluated different dataset folders (/data/corpus; "
                       "/data/other)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "") << "nothing printed before the refusal";
  r = lmk("compare --db " + db_ + " 1 5");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("#1 cls/corpus@512 and #5 lmk-32/part in corpus-documents/test "
                       "ndcg_at_10: not the same queries (#1 cls/corpus@512: 40 queries, "
                       "#5 lmk-32/part: 30 queries, 30 shared)"),
            std::string::npos)
      << r.err;
  r = lmk("compare --db " + db_ + " 1 5 --intersection");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("compared on the 30 shared queries"), std::string::npos) << r.out;
  // One shared query is too few for a paired test, even on the intersection.
  r = lmk("compare --db " + db_ + " 1 6 --intersection --baseline 1");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.err.find("#6 lmk-32/one"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 shared"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  // Runs with no dataset and metric in common.
  r = lmk("compare --db " + db_ + " 3 7");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("runs 3 and 7 share no evaluated dataset and metric (#3 "
                       "lmk-32/corpus@512: corpus-documents/test; #7 lmk-32/passkey: "
                       "passkey/test)"),
            std::string::npos)
      << r.err;
  for (const std::string bad : {"--alpha 0", "--alpha 1.5", "--test wilcoxon", "--confidence 1",
                                "--resamples 0", "--format yaml"}) {
    r = lmk("compare --db " + db_ + " 1 2 " + bad);
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find(bad.substr(0, bad.find(' '))), std::string::npos) << bad << ": " << r.err;
  }
}

TEST_F(QueryResultsCliTest, ExportsThePivotInLatex) {
  const std::string out = (dir_.path() / "table.tex").string();
  Output r = lmk("export --db " + db_ + " --run 1 --run 2 --run 3 --format latex --out " + out +
                 " --baseline cls");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string latex = read_file(out);
  EXPECT_NE(latex.find("pooling, granularity"), std::string::npos) << latex;
  EXPECT_NE(latex.find("lmk · lmk-32"), std::string::npos) << latex;
  EXPECT_NE(latex.find("cls (baseline)"), std::string::npos) << latex;
  EXPECT_NE(latex.find("^{\\uparrow}$"), std::string::npos) << latex;
  EXPECT_NE(latex.find("\\caption{ndcg\\_at\\_10."), std::string::npos) << latex;
  r = lmk("export --db " + db_ + " --run 1 --format latex --out - --baseline lmk");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--baseline: no row 'lmk' (rows: cls)"), std::string::npos) << r.err;
  for (const std::string bad : {"--test wilcoxon", "--alpha 0"}) {
    r = lmk("export --db " + db_ + " --run 1 --run 2 --format latex --out - " + bad);
    EXPECT_EQ(r.code, 2) << bad;
    EXPECT_NE(r.err.find(bad.substr(0, bad.find(' '))), std::string::npos) << bad << ": " << r.err;
  }
}

TEST_F(QueryResultsCliTest, ExportsSavedRankingsAsTrec) {
  // Rankings saved by lmk eval --save-run (recorded as artifacts) come back byte for byte, the
  // judgments beside them; several runs go into a folder, one file each.
  const std::string ranking = dir_.write("saved.trec", "q0 Q0 d3 1 0.9 lmk\nq0 Q0 d1 2 0.5 lmk\n"),
                    judgments = dir_.write("saved.qrels", "q0 0 d3 1\n");
  {
    ResultsStore store(db_, ResultsStore::OpenMode::Existing);
    store.add_artifact(3, "trec-run", ranking);
    store.add_artifact(3, "trec-qrels", judgments);
    store.add_artifact(1, "trec-run", ranking);
  }
  const std::string one = (dir_.path() / "one.trec").string();
  Output r = lmk("export --db " + db_ + " --run 3 --format trec --out " + one);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_file(one), read_file(ranking));
  EXPECT_EQ(read_file(one + ".qrels"), read_file(judgments));
  r = lmk("export --db " + db_ + " --run 3 --format trec --out -");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(ranking));
  const fs::path folder = dir_.path() / "rankings";
  r = lmk("export --db " + db_ + " --run 1 --run 3 --format trec --out " + folder.string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_file((folder / "lmk-32_corpus_512.trec").string()), read_file(ranking)) << r.err;
  EXPECT_TRUE(fs::exists(folder / "cls_corpus_512.trec")) << r.err;
  EXPECT_FALSE(fs::exists(folder / "cls_corpus_512.trec.qrels"));
  EXPECT_TRUE(fs::exists(folder / "lmk-32_corpus_512.trec.qrels"));
}

}  // namespace
}  // namespace lmk
