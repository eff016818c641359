// Opening a results store file (core/store/migrations.h): older stores are upgraded by the
// migrations they lack, in one transaction; files that are not results stores (not SQLite,
// another program's database, a newer schema, empty) are refused before anything is written.
#include "core/store/migrations.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/store/results_store.h"
#include "core/store/schema.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/runtime.h"
#include "tests/support/store_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_children;
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

// A version-5 store's runs gain the process columns: a RUNNING run recorded before them has no
// process (pid 0), so no reader can tell it lost and none ends it.
TEST(ResultsStoreTest, AVersion5StoreGetsTheRunsProcess) {
  TempDir dir;
  const std::string path = (dir.path() / "v5.db").string();
  std::string sql = "BEGIN;";
  for (const auto& migration : store_schema::migrations())
    if (migration.version <= 5) sql += migration.sql;
  sql += "PRAGMA application_id = " + std::to_string(store_schema::kApplicationId) +
         "; PRAGMA user_version = 5;"
         "INSERT INTO experiments (name) VALUES ('old');"
         "INSERT INTO runs (experiment_id, name, kind, status, host) VALUES (1, 'r', 'eval', "
         "'RUNNING', '" +
         host_name() + "');";
  execute_sql(path, sql + "COMMIT;");
  ResultsStore store(path, ResultsStore::OpenMode::Existing);
  EXPECT_EQ(store.schema_version(), store_schema::current_version());
  EXPECT_EQ(store.get_run(1).pid, 0);
  EXPECT_EQ(store.get_run(1).process_start, "");
  EXPECT_EQ(store.end_lost_runs(), 0u);
  EXPECT_EQ(store.get_run(1).status, RunStatus::Running);
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

// The message of the InputError usable_version gives for `state` ("accepted" when it gives a
// version).
std::string refusal(const store_schema::FileState& state, ResultsStore::OpenMode mode) {
  try {
    store_schema::usable_version(state, "/stores/r.db", mode);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

// usable_version decides from a file's state alone: an empty file is created (Create) or refused
// (Existing); a store of a known version gives that version; a store without a version, another
// program's database (whatever its version) and a newer schema are refused, each message naming
// the file and what was found.
TEST(MigrationsTest, UsableVersionAcceptsOnlyResultStoresOfAKnownVersion) {
  using store_schema::kApplicationId;
  using Mode = ResultsStore::OpenMode;
  const std::string path = "/stores/r.db";
  const int current = store_schema::current_version();
  EXPECT_EQ(store_schema::usable_version({}, path, Mode::Create), 0);
  for (int version = 1; version <= current; ++version)
    for (const Mode mode : {Mode::Create, Mode::Existing})
      EXPECT_EQ(store_schema::usable_version({kApplicationId, version, "runs"}, path, mode),
                version);

  const auto expect_parts = [&](const std::string& message, std::vector<std::string> parts) {
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;
    for (const std::string& part : parts)
      EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' in " << message;
  };
  expect_parts(refusal({}, Mode::Existing), {"empty database"});
  expect_parts(refusal({kApplicationId, 0, "runs"}, Mode::Create), {"without a schema version"});
  expect_parts(refusal({0, 3, ""}, Mode::Create),
               {"another program", "(no tables", "schema version 3"});
  expect_parts(refusal({0, 0, "customers, orders"}, Mode::Create),
               {"another program", "customers, orders", "schema version 0"});
  const std::string other_id = refusal({0x12345678, current + 1, "t"}, Mode::Create);
  expect_parts(other_id, {"another program"});
  EXPECT_EQ(other_id.find("newer"), std::string::npos) << "another program's file, not ours";
  expect_parts(refusal({kApplicationId, current + 1, "runs"}, Mode::Existing),
               {"newer lmk", "schema version " + std::to_string(current + 1),
                "knows up to " + std::to_string(current)});
}

// On a connection of its own: read_file_state sees a file's id, version and tables (sorted);
// migrate applies only the steps the file lacks, reading its state inside the transaction (a
// file already current gets no step again), and leaves a file it refuses as it was, with no
// transaction open; a file SQLite cannot read is "not a results store".
TEST(MigrationsTest, MigrateAppliesOnlyTheStepsTheFileLacks) {
  using store_schema::kApplicationId;
  using Mode = ResultsStore::OpenMode;
  TempDir dir;
  const std::string path = (dir.path() / "raw.db").string();
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);

  store_schema::FileState state = store_schema::read_file_state(db.get(), path);
  EXPECT_EQ(state.application_id, 0);
  EXPECT_EQ(state.version, 0);
  EXPECT_EQ(state.tables, "");

  const std::string version2 =
      std::string(store_schema::migrations()[0].sql) + store_schema::migrations()[1].sql +
      "PRAGMA application_id = " + std::to_string(kApplicationId) + "; PRAGMA user_version = 2;";
  ASSERT_EQ(sqlite3_exec(db.get(), version2.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  state = store_schema::read_file_state(db.get(), path);
  EXPECT_EQ(state.application_id, kApplicationId);
  EXPECT_EQ(state.version, 2);
  EXPECT_EQ(state.tables,
            "artifacts, attention_profiles, eval_results, experiments, length_histograms, "
            "length_percentiles, metric_latest, metrics, params, runs");

  store_schema::migrate(db.get(), path, Mode::Existing);
  state = store_schema::read_file_state(db.get(), path);
  EXPECT_EQ(state.application_id, kApplicationId);
  EXPECT_EQ(state.version, store_schema::current_version());
  for (const char* table : {"jobs", "eval_queries", "query_metrics"})
    EXPECT_NE(state.tables.find(table), std::string::npos) << table << " in " << state.tables;
  // Each step creates tables that exist now: running one again would fail.
  EXPECT_NO_THROW(store_schema::migrate(db.get(), path, Mode::Existing));
  EXPECT_EQ(store_schema::read_file_state(db.get(), path).tables, state.tables);
  EXPECT_NE(sqlite3_get_autocommit(db.get()), 0) << "no transaction left open";

  const std::string foreign = (dir.path() / "foreign.db").string();
  execute_sql(foreign, "CREATE TABLE customers (id INTEGER)");
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &other), SQLITE_OK);
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> foreign_db(other, sqlite3_close);
  try {
    store_schema::migrate(foreign_db.get(), foreign, Mode::Create);
    ADD_FAILURE() << "another program's database migrated";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("customers"), std::string::npos) << e.what();
  }
  EXPECT_NE(sqlite3_get_autocommit(foreign_db.get()), 0) << "rolled back";
  state = store_schema::read_file_state(foreign_db.get(), foreign);
  EXPECT_EQ(state.application_id, 0);
  EXPECT_EQ(state.version, 0);
  EXPECT_EQ(state.tables, "customers");

  std::string noise = "not SQLite at all\n";
  noise.resize(4096, 'x');
  const std::string not_sqlite = dir.write("noise.db", noise);
  sqlite3* noisy = nullptr;
  ASSERT_EQ(sqlite3_open(not_sqlite.c_str(), &noisy), SQLITE_OK);  // SQLite reads lazily
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> noise_db(noisy, sqlite3_close);
  try {
    store_schema::read_file_state(noise_db.get(), not_sqlite);
    ADD_FAILURE() << "noise read as a database";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(not_sqlite + ": ", 0), 0u) << message;
    EXPECT_NE(message.find("(not a results store)"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace lmk
