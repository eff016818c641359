#include "core/store/results_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <regex>

#include "core/store/schema.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;

// Runs SQL on a database file with plain SQLite (to build files this program did not write).
void execute_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

// Runs body(index) in `count` child processes started together; returns their exit codes:
// 0 done, 3 "database is locked", 1 any other error (printed).
std::vector<int> run_children(int count, const std::function<void(int)>& body) {
  int gate[2];
  EXPECT_EQ(pipe(gate), 0);
  std::vector<pid_t> children;
  for (int index = 0; index < count; ++index) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(gate[1]);
      char byte;
      while (read(gate[0], &byte, 1) > 0) {
      }
      int code = 0;
      try {
        body(index);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", index, e.what());
        code = std::string(e.what()).find("locked") != std::string::npos ? 3 : 1;
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  close(gate[0]);
  close(gate[1]);  // end of file: every child starts now
  std::vector<int> codes;
  for (const pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

bool is_iso_utc(const std::string& time) {
  static const std::regex format(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  return std::regex_match(time, format);
}

TEST(ResultsStoreTest, CreatesTheSchemaInWalMode) {
  TempDir dir;
  const std::string path = (dir.path() / "results.db").string();
  {
    ResultsStore store(path);
    EXPECT_EQ(store.schema_version(), store_schema::current_version());
    EXPECT_TRUE(store.experiments().empty());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  std::vector<std::string> tables;
  sqlite3_exec(
      db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name",
      [](void* out, int, char** values, char**) {
        static_cast<std::vector<std::string>*>(out)->push_back(values[0]);
        return 0;
      },
      &tables, nullptr);
  const std::vector<std::string> expected = {"artifacts",
                                             "attention_profiles",
                                             "eval_queries",
                                             "eval_results",
                                             "experiments",
                                             "jobs",
                                             "length_histograms",
                                             "length_percentiles",
                                             "metric_latest",
                                             "metrics",
                                             "params",
                                             "query_metrics",
                                             "runs"};
  EXPECT_EQ(tables, expected);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &stmt, nullptr);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  // Opening again changes nothing; Existing mode accepts it.
  EXPECT_EQ(ResultsStore(path, ResultsStore::OpenMode::Existing).schema_version(),
            store_schema::current_version());
}

TEST(ResultsStoreTest, UpgradesAVersion1Database) {
  TempDir dir;
  const std::string path = (dir.path() / "old.db").string();
  execute_sql(path, "BEGIN;" + std::string(store_schema::migrations()[0].sql) +
                        "PRAGMA application_id = " + std::to_string(store_schema::kApplicationId) +
                        "; PRAGMA user_version = 1;"
                        "INSERT INTO experiments (name) VALUES ('old');"
                        "INSERT INTO runs (experiment_id, name, kind, config) "
                        "VALUES (1, 'first', 'train', '{\"lr\": 0.1}');"
                        "INSERT INTO params VALUES (1, 'lr', '0.1');"
                        "INSERT INTO metrics (run_id, key, step, value) VALUES (1, 'loss', 3, 2.5);"
                        "INSERT INTO metric_latest VALUES (1, 'loss', 3, 2.5, 'then'); COMMIT;");
  ResultsStore store(path, ResultsStore::OpenMode::Existing);
  EXPECT_EQ(store.schema_version(), store_schema::current_version());
  const RunRecord run = store.get_run(1);
  EXPECT_EQ(run.name, "first");
  EXPECT_EQ(run.experiment, "old");
  EXPECT_EQ(run.config, json::parse(R"({"lr": 0.1})"));
  EXPECT_EQ(store.run_params(1).at("lr"), "0.1");
  ASSERT_EQ(store.latest_metrics(1).size(), 1u);
  EXPECT_EQ(store.latest_metrics(1)[0].value, 2.5);
  // The tables of versions 2 and 3 work.
  store.add_eval_results(1, {{"scifact", "test", "ndcg_at_10", 0.5}});
  EXPECT_EQ(store.eval_results(1).size(), 1u);
  JobRecord job;
  job.run_id = 1;
  job.executor = "local";
  store.add_job(job);
  EXPECT_TRUE(store.job(1).has_value());
  // And version 4's per-query results.
  EXPECT_FALSE(store.has_query_results(1));
  store.add_query_results(1, {{"scifact", "test", "", "q1", 0.5, 900, {{"ndcg_at_10", 1.0}}}});
  EXPECT_TRUE(store.has_query_results(1));
}

TEST(ResultsStoreTest, AVersion3StoreOpensWithoutPerQueryData) {
  TempDir dir;
  const std::string path = (dir.path() / "v3.db").string();
  std::string sql = "BEGIN;";
  for (const auto& migration : store_schema::migrations())
    if (migration.version <= 3) sql += migration.sql;
  execute_sql(path, sql +
                        "PRAGMA application_id = " + std::to_string(store_schema::kApplicationId) +
                        "; PRAGMA user_version = 3;"
                        "INSERT INTO experiments (name) VALUES ('old');"
                        "INSERT INTO runs (experiment_id, name, kind, status) "
                        "VALUES (1, 'lmk-32/corpus@512', 'eval', 'FINISHED');"
                        "INSERT INTO eval_results (run_id, dataset, split, metric, value) "
                        "VALUES (1, 'corpus-documents', 'test', 'ndcg_at_10', 0.25); COMMIT;");
  ResultsStore store(path, ResultsStore::OpenMode::Existing);
  EXPECT_EQ(store.schema_version(), store_schema::current_version());
  EXPECT_EQ(store.eval_results(1).at(0).value, 0.25) << "what was stored stays";
  EXPECT_FALSE(store.has_query_results(1));
  EXPECT_TRUE(store.query_scores(1, "corpus-documents", "test", "ndcg_at_10").empty());
}

// Version 5: a run's score on a dataset is the mean over all its queries, pooled over its parts.
// A version-4 store held the mean of the parts' means (8 queries weighed as much as 2) and no
// score at all for a dataset of one named part; opening it recomputes them from the per-query
// rows, and leaves alone what has none.
TEST(ResultsStoreTest, AVersion4StoreGetsScoresPooledOverTheParts) {
  TempDir dir;
  const std::string path = (dir.path() / "v4.db").string();
  std::string sql = "BEGIN;";
  for (const auto& migration : store_schema::migrations())
    if (migration.version <= 4) sql += migration.sql;
  sql += "PRAGMA application_id = " + std::to_string(store_schema::kApplicationId) +
         "; PRAGMA user_version = 4;"
         "INSERT INTO experiments (name) VALUES ('old');"
         "INSERT INTO runs (experiment_id, name, kind) VALUES (1, 'two parts', 'eval'), "
         "(1, 'one named part', 'eval'), (1, 'no per-query rows', 'eval');"
         // Run 1: part 128 has 2 queries at 1.0, part 512 has 6 at 0.0: the parts' means are 1
         // and 0, their mean 0.5; over the 8 queries the mean is 0.25.
         "INSERT INTO eval_results VALUES (1, 'docs', 'test', 'ndcg_at_10', 'length', '128', 1.0),"
         "(1, 'docs', 'test', 'ndcg_at_10', 'length', '512', 0.0),"
         "(1, 'docs', 'test', 'ndcg_at_10', 'all', '', 0.5),"
         "(2, 'passkey', 'test', 'ndcg_at_10', 'length', '256', 0.75),"
         "(3, 'docs', 'test', 'ndcg_at_10', 'all', '', 0.4);";
  for (int q = 0; q < 8; ++q)
    sql +=
        "INSERT INTO eval_queries (run_id, dataset, split, part, query_id) VALUES (1, 'docs', "
        "'test', '" +
        std::string(q < 2 ? "128" : "512") + "', 'q" + std::to_string(q) +
        "'); INSERT INTO query_metrics VALUES (last_insert_rowid(), 'ndcg_at_10', " +
        (q < 2 ? "1.0" : "0.0") + ");";
  for (int q = 0; q < 4; ++q)
    sql +=
        "INSERT INTO eval_queries (run_id, dataset, split, part, query_id) VALUES (2, "
        "'passkey', 'test', '256', 'q" +
        std::to_string(q) + "'); INSERT INTO query_metrics VALUES (last_insert_rowid(), " +
        "'ndcg_at_10', " + (q == 0 ? "0.0" : "1.0") + ");";
  execute_sql(path, sql + "COMMIT;");
  ResultsStore store(path, ResultsStore::OpenMode::Existing);
  EXPECT_EQ(store.schema_version(), store_schema::current_version());
  auto value = [&](int64_t run, const std::string& kind, const std::string& group) {
    for (const EvalResult& e : store.eval_results(run))
      if (e.group_kind == kind && e.group_value == group) return e.value;
    return -1.0;
  };
  EXPECT_DOUBLE_EQ(value(1, "all", ""), 0.25) << "pooled over the 8 queries, not 0.5";
  EXPECT_DOUBLE_EQ(value(1, "length", "128"), 1.0) << "the parts stay";
  EXPECT_DOUBLE_EQ(value(1, "length", "512"), 0.0);
  EXPECT_DOUBLE_EQ(value(2, "all", ""), 0.75) << "one named part: its score, now stored";
  EXPECT_DOUBLE_EQ(value(3, "all", ""), 0.4) << "no per-query rows: what was stored stays";
}

TEST(ResultsStoreTest, StoresPerQueryResultsAndReplacesAPartEvaluatedAgain) {
  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  const int64_t run = store.create_run(store.get_or_create_experiment("e"), {"first"});
  const int64_t other = store.create_run(store.get_or_create_experiment("e"), {"second"});
  std::vector<QueryResult> rows = {
      {"passkey", "test", "256", "q1", 0.25, 256, {{"ndcg_at_1", 1}, {"recall_at_10", 1}}},
      {"passkey", "test", "256", "q2", 0.75, 256, {{"ndcg_at_1", 0}, {"recall_at_10", 1}}},
      {"passkey", "test", "4096", "q1", 0.5, 4096, {{"ndcg_at_1", 0}, {"recall_at_10", 0.5}}},
      {"scifact", "test", "", "7", std::nullopt, std::nullopt, {{"ndcg_at_1", 0.5}}},
  };
  store.add_query_results(run, rows);
  store.add_query_results(other, {rows[0]});
  const std::vector<QueryScore> scores = store.query_scores(run, "passkey", "test", "ndcg_at_1");
  ASSERT_EQ(scores.size(), 3u);
  EXPECT_EQ(scores[0].part, "256");
  EXPECT_EQ(scores[0].query_id, "q1");
  EXPECT_EQ(scores[0].value, 1);
  EXPECT_EQ(scores[0].evidence_position, 0.25);
  EXPECT_EQ(scores[0].target_length, 256);
  EXPECT_EQ(scores[2].part, "4096");
  EXPECT_EQ(scores[2].value, 0);
  const std::vector<QueryScore> plain = store.query_scores(run, "scifact", "test", "ndcg_at_1");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_FALSE(plain[0].evidence_position.has_value());
  EXPECT_FALSE(plain[0].target_length.has_value());
  EXPECT_TRUE(store.query_scores(run, "passkey", "dev", "ndcg_at_1").empty());
  // Several runs at once (the workbench's read): each run's scores as the one-run read gives them.
  const auto by_run = store.query_scores("passkey", "test", "ndcg_at_1");
  ASSERT_EQ(by_run.size(), 2u);
  EXPECT_EQ(by_run.at(run).size(), 3u);
  EXPECT_EQ(by_run.at(other).size(), 1u);
  for (size_t i = 0; i < scores.size(); ++i) {
    EXPECT_EQ(by_run.at(run)[i].query_id, scores[i].query_id);
    EXPECT_EQ(by_run.at(run)[i].value, scores[i].value);
  }
  EXPECT_EQ(store.query_scores("passkey", "test", "ndcg_at_1", {other}).size(), 1u);
  EXPECT_EQ(store.positioned_query_metrics(),
            (std::vector<std::tuple<std::string, std::string, std::string>>{
                {"passkey", "test", "ndcg_at_1"}, {"passkey", "test", "recall_at_10"}}))
      << "scifact has no parts and no positions";
  EXPECT_EQ(store.query_result_sets(),
            (std::vector<std::tuple<int64_t, std::string, std::string>>{
                {run, "passkey", "test"}, {run, "scifact", "test"}, {other, "passkey", "test"}}));
  EXPECT_EQ(store.query_metric_names(run, "passkey", "test"),
            (std::vector<std::string>{"ndcg_at_1", "recall_at_10"}));
  EXPECT_TRUE(store.query_metric_names(run, "passkey", "dev").empty());
  // One query's metric, from the part asked for when it is in several.
  EXPECT_EQ(store.query_metric(run, "q1", "recall_at_10", "4096"), 0.5);
  EXPECT_EQ(store.query_metric(run, "q1", "recall_at_10", "256"), 1.0);
  EXPECT_EQ(store.query_metric(run, "q2", "recall_at_10", "4096"), 1.0) << "only in 256";
  EXPECT_EQ(store.query_metric(run, "q3", "recall_at_10"), std::nullopt);
  const std::vector<QueryResult> all = store.query_results(run);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].metrics, (std::map<std::string, double>{{"ndcg_at_1", 1}, {"recall_at_10", 1}}));
  EXPECT_EQ(store.query_results(run, "scifact").size(), 1u);

  // The 256 part evaluated again: its queries are replaced, the other part's stay.
  store.add_query_results(run, {{"passkey", "test", "256", "q9", 0.1, 250, {{"ndcg_at_1", 0.5}}}});
  const std::vector<QueryScore> again = store.query_scores(run, "passkey", "test", "ndcg_at_1");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].query_id, "q9");
  EXPECT_EQ(again[1].part, "4096");
  EXPECT_EQ(store.query_scores(other, "passkey", "test", "ndcg_at_1").size(), 1u)
      << "another run's queries stay";
  EXPECT_THROW(store.add_query_results(999, rows), InputError) << "no such run";
  EXPECT_THROW(store.add_query_results(run, {{"", "test", "", "q", {}, {}, {}}}),
               std::invalid_argument);
}

// What the job monitor reads: every job's run (the ended ones on request) and the runs running
// without a job; and what a job was submitted from, from its own run or the nearest run of its
// study folder that records it.
TEST(ResultsStoreTest, MonitoredRunsAndJobSubmissions) {
  TempDir dir;
  ResultsStore store((dir.path() / "monitor.db").string());
  const int64_t e = store.get_or_create_experiment("e");
  const int64_t data =
      store.create_run(e, {"data", "data", {{"study", "/s/study.toml"}, {"profile", "micro"}}});
  const int64_t train = store.create_run(e, {"train", "train", {{"train", {{"lr", 1e-4}}}}});
  const int64_t by_hand = store.create_run(e, {"by-hand", "eval"});
  const int64_t idle = store.create_run(e, {"idle", "eval"});
  for (const int64_t run : {data, train}) {
    JobRecord job;
    job.run_id = run;
    job.executor = "local";
    job.study_dir = "/s/out";
    job.step = run == data ? "corpus/manpages" : "finetune/lmk";
    store.add_job(job);
  }
  ASSERT_TRUE(store.claim_job_end(data));
  store.set_run_status(by_hand, RunStatus::Running);
  std::vector<MonitoredRun> runs = store.monitored_runs(false);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run_id, train);
  ASSERT_TRUE(runs[0].job.has_value());
  EXPECT_EQ(runs[0].job->step, "finetune/lmk");
  EXPECT_EQ(runs[0].experiment, "e");
  EXPECT_EQ(runs[1].run_id, by_hand);
  EXPECT_FALSE(runs[1].job.has_value());
  EXPECT_FALSE(runs[1].since.empty()) << "when it started";
  runs = store.monitored_runs(true);
  ASSERT_EQ(runs.size(), 3u) << "the ended job too, not the idle run";
  EXPECT_EQ(runs[0].run_id, data);
  EXPECT_TRUE(runs[0].job->ended);
  (void)idle;

  const JobSubmission from_other = store.job_submission(train);
  EXPECT_EQ(from_other.study_config, "/s/study.toml") << "the training run's config replaced it";
  EXPECT_EQ(from_other.profile, "micro");
  EXPECT_EQ(from_other.study_dir, "/s/out");
  EXPECT_EQ(from_other.executor, "local");
  EXPECT_TRUE(from_other.error.empty());
  EXPECT_EQ(store.job_submission(by_hand).error,
            "run " + std::to_string(by_hand) + " is not a job");
}

TEST(ResultsStoreTest, KeepsJobsWithTheirRuns) {
  TempDir dir;
  ResultsStore store((dir.path() / "jobs.db").string());
  const int64_t experiment = store.get_or_create_experiment("e");
  const int64_t a = store.create_run(experiment, NewRun{"a", "train", {}, {}});
  const int64_t b = store.create_run(experiment, NewRun{"b", "step", {}, {}});
  JobRecord job;
  job.run_id = a;
  job.executor = "slurm";
  job.study_dir = "/s";
  job.step = "pretrain";
  job.step_key = "k1";
  job.command = {"/bin/lmk", "pretrain", "--config", "a b.toml"};
  job.log_path = "/s/logs/a.log";
  job.outputs = {"/s/x"};
  store.add_job(job);
  JobRecord other = job;
  other.run_id = b;
  other.executor = "local";
  other.study_dir = "/t";
  other.depends_on = {a};
  store.add_job(other);
  EXPECT_FALSE(store.job(a + b + 1).has_value());
  JobRecord read = *store.job(a);
  EXPECT_EQ(read.command, job.command);
  EXPECT_EQ(read.outputs, job.outputs);
  EXPECT_EQ(read.progress_done, -1);
  EXPECT_EQ(read.eta_s, -1);
  EXPECT_FALSE(read.updated_at.empty());
  read.external_id = "123";
  read.progress_done = 5;
  read.progress_total = 10;
  read.eta_s = 2.5;
  read.progress_text = "training loss 3";
  read.attempts = 2;
  read.cancel_requested = true;
  store.update_job(read);
  const JobRecord again = *store.job(a);
  EXPECT_EQ(again.external_id, "123");
  EXPECT_EQ(again.progress_done, 5);
  EXPECT_EQ(again.eta_s, 2.5);
  EXPECT_EQ(again.attempts, 2);
  EXPECT_TRUE(again.cancel_requested);
  EXPECT_EQ(store.job(b)->depends_on, std::vector<int64_t>{a});
  // Filters: a study folder, and jobs not ended.
  EXPECT_EQ(store.jobs().size(), 2u);
  EXPECT_EQ(store.jobs("/t").size(), 1u);
  read.ended = true;
  store.update_job(read);
  EXPECT_EQ(store.jobs("", /*unfinished=*/true).size(), 1u);
  EXPECT_EQ(store.jobs("", true).front().run_id, b);
  // Contested changes apply to a job not ended, once: a start after a cancel is refused, an
  // end is claimed by one caller only, progress writes touch progress only.
  EXPECT_TRUE(store.request_job_cancel(b));
  EXPECT_FALSE(store.mark_job_started(b, "77", "1"));
  EXPECT_TRUE(store.job(b)->external_id.empty());
  store.set_job_progress(b, 3, 9, -1, "x");
  EXPECT_TRUE(store.job(b)->cancel_requested);
  EXPECT_EQ(store.job(b)->progress_done, 3);
  EXPECT_EQ(store.job(b)->eta_s, -1);
  EXPECT_TRUE(store.claim_job_end(b));
  EXPECT_FALSE(store.claim_job_end(b));
  EXPECT_FALSE(store.request_job_cancel(b));
  const int64_t c = store.create_run(experiment, NewRun{"c", "step", {}, {}});
  other.run_id = c;
  store.add_job(other);
  EXPECT_TRUE(store.mark_job_started(c, "88", "123"));
  EXPECT_EQ(store.job(c)->attempts, 1);
  EXPECT_EQ(store.job(c)->external_id, "88");
  // A job of a run that does not exist, or an update of a job never added: errors.
  job.run_id = 999;
  EXPECT_THROW(store.add_job(job), InputError);
  EXPECT_THROW(store.update_job(job), InputError);
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

TEST(ResultsStoreTest, RejectsFilesThatAreNotResultStoresAndLeavesThemUntouched) {
  TempDir dir;
  std::string noise = "SQLite format 2\n";
  for (int i = 0; i < 4096; ++i) noise.push_back(static_cast<char>((i * 7919) % 251));
  const std::string not_sqlite = dir.write("notes.db", noise);
  const std::string foreign = (dir.path() / "foreign.db").string();
  execute_sql(foreign,
              "CREATE TABLE customers (id INTEGER, name TEXT); "
              "INSERT INTO customers VALUES (1, 'x'); PRAGMA user_version = 2;");
  const std::string newer = (dir.path() / "newer.db").string();
  { ResultsStore store(newer); }
  execute_sql(newer, "PRAGMA user_version = 99");
  const std::string empty_db = dir.write("empty.db", "");

  struct Case {
    std::string path, message;
    ResultsStore::OpenMode mode;
  } cases[] = {
      {not_sqlite, "file is not a database", ResultsStore::OpenMode::Create},
      {not_sqlite, "file is not a database", ResultsStore::OpenMode::Existing},
      {foreign, "another program", ResultsStore::OpenMode::Create},
      {foreign, "customers", ResultsStore::OpenMode::Existing},
      {newer, "newer lmk (schema version 99", ResultsStore::OpenMode::Create},
      {empty_db, "empty database", ResultsStore::OpenMode::Existing},
  };
  for (const auto& c : cases) {
    const std::string before = read_file(c.path);
    try {
      ResultsStore store(c.path, c.mode);
      ADD_FAILURE() << c.path << " opened";
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind(c.path + ": ", 0), 0u) << message;
      EXPECT_NE(message.find(c.message), std::string::npos) << message;
    }
    EXPECT_TRUE(read_file(c.path) == before) << c.path << " changed";
    EXPECT_FALSE(fs::exists(c.path + "-wal")) << c.path;
    EXPECT_FALSE(fs::exists(c.path + "-journal")) << c.path;
  }

  const std::string missing = (dir.path() / "missing.db").string();
  EXPECT_THROW(ResultsStore(missing, ResultsStore::OpenMode::Existing), InputError);
  EXPECT_FALSE(fs::exists(missing));
  EXPECT_THROW(ResultsStore(dir.path().string()), InputError);
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

// Processes that find no file create it together: one creates the schema, the rest use it.
TEST(ResultsStoreTest, ProcessesCreateOneFileConcurrently) {
  TempDir dir;
  const std::string path = (dir.path() / "new.db").string();
  const auto codes = run_children(8, [&](int child) {
    ResultsStore store(path);
    store.create_run(store.get_or_create_experiment("race"), {"run" + std::to_string(child)});
  });
  for (size_t child = 0; child < codes.size(); ++child)
    EXPECT_EQ(codes[child], 0) << "child " << child;
  ResultsStore store(path, ResultsStore::OpenMode::Existing);
  EXPECT_EQ(store.list_runs({"race"}).size(), 8u);
}

}  // namespace
}  // namespace lmk
