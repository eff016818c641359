// The results store's schema (core/store/schema.h): the migrations numbered in order, each
// taking the database of the version before it to its own, and the tables, constraints and
// cascades the store relies on.
#include "core/store/schema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/store/results_store.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::TempDir;

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

// The tables of an open database, sorted.
std::set<std::string> tables_of(sqlite3* db) {
  std::set<std::string> tables;
  sqlite3_exec(
      db, "SELECT name FROM sqlite_master WHERE type = 'table'",
      [](void* out, int, char** values, char**) {
        static_cast<std::set<std::string>*>(out)->insert(values[0]);
        return 0;
      },
      &tables, nullptr);
  return tables;
}

// The number of rows `sql` returns.
int row_count(sqlite3* db, const std::string& sql) {
  int rows = 0;
  sqlite3_exec(
      db, sql.c_str(),
      [](void* out, int, char**, char**) {
        ++*static_cast<int*>(out);
        return 0;
      },
      &rows, nullptr);
  return rows;
}

// The application id spells "LMKW"; versions run 1, 2, ... without gaps, the current one is the
// last, and each step's SQL, run on a database at the version before it, succeeds and adds the
// tables its version introduces (version 5 only recomputes scores).
TEST(SchemaTest, MigrationsAreNumberedInOrderAndEachBuildsOnTheOneBefore) {
  EXPECT_EQ(store_schema::kApplicationId, ('L' << 24) | ('M' << 16) | ('K' << 8) | 'W');
  const std::vector<store_schema::Migration>& migrations = store_schema::migrations();
  ASSERT_FALSE(migrations.empty());
  for (size_t i = 0; i < migrations.size(); ++i)
    EXPECT_EQ(migrations[i].version, static_cast<int>(i) + 1);
  EXPECT_EQ(store_schema::current_version(), migrations.back().version);

  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &raw), SQLITE_OK);
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  const std::vector<std::set<std::string>> added = {
      {"experiments", "runs", "params", "metrics", "metric_latest", "artifacts"},
      {"eval_results", "attention_profiles", "length_histograms", "length_percentiles"},
      {"jobs"},
      {"eval_queries", "query_metrics"},
      {},    // 5: the 'all' rows recomputed from the per-query results
      {}};   // 6: runs.pid and runs.process_start (the process a run ran in)
  ASSERT_EQ(migrations.size(), added.size()) << "a new version: say what it adds here";
  std::set<std::string> before;
  for (size_t i = 0; i < migrations.size(); ++i) {
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(db.get(), migrations[i].sql, nullptr, nullptr, &error), SQLITE_OK)
        << "version " << migrations[i].version << ": " << (error ? error : "");
    std::set<std::string> expected = before;
    expected.insert(added[i].begin(), added[i].end());
    const std::set<std::string> after = tables_of(db.get());
    EXPECT_EQ(after, expected) << "version " << migrations[i].version;
    before = after;
  }
}

// What the store's writers rely on from the schema: a run's status and a job's executor are one
// of the known names, a run has one value per parameter, and deleting a run deletes what belongs
// to it (params, metrics, results, jobs, per-query rows and their metrics) but not the runs it
// was the parent of.
TEST(SchemaTest, ConstraintsAndCascadesKeepRowsWithTheirRuns) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &raw), SQLITE_OK);
  const std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  for (const auto& migration : store_schema::migrations())
    ASSERT_EQ(sqlite3_exec(db.get(), migration.sql, nullptr, nullptr, nullptr), SQLITE_OK);
  const auto run = [&](const std::string& sql) {
    return sqlite3_exec(db.get(), sql.c_str(), nullptr, nullptr, nullptr);
  };
  ASSERT_EQ(run("PRAGMA foreign_keys = ON;"
                "INSERT INTO experiments (name) VALUES ('e');"
                "INSERT INTO runs (id, experiment_id, name, kind) VALUES (1, 1, 'a', 'train');"
                "INSERT INTO runs (id, experiment_id, name, kind, parent_run_id) "
                "VALUES (2, 1, 'b', 'eval', 1);"),
            SQLITE_OK);
  EXPECT_EQ(run("INSERT INTO runs (experiment_id, name, kind, status) VALUES (1, 'c', 'x', "
                "'DONE')"),
            SQLITE_CONSTRAINT);
  EXPECT_EQ(run("INSERT INTO jobs (run_id, executor, study_dir, step, step_key) "
                "VALUES (1, 'pbs', '/s', 'x', 'k')"),
            SQLITE_CONSTRAINT);
  EXPECT_EQ(run("INSERT INTO experiments (name) VALUES ('e')"), SQLITE_CONSTRAINT);
  ASSERT_EQ(run("INSERT INTO params VALUES (1, 'lr', '0.1');"
                "INSERT INTO metrics (run_id, key, step, value) VALUES (1, 'loss', 0, 1.5);"
                "INSERT INTO metric_latest VALUES (1, 'loss', 0, 1.5, 't');"
                "INSERT INTO artifacts (run_id, kind, path) VALUES (1, 'checkpoint', '/c');"
                "INSERT INTO eval_results (run_id, dataset, split, metric, value) "
                "VALUES (1, 'd', 'test', 'm', 0.5);"
                "INSERT INTO attention_profiles (run_id, dataset, length_group, layer, bin, "
                "bin_start, bin_end, weight) VALUES (1, 'd', '512', 0, 0, 0, 1, 1);"
                "INSERT INTO jobs (run_id, executor, study_dir, step, step_key) "
                "VALUES (1, 'local', '/s', 'x', 'k');"
                "INSERT INTO eval_queries (id, run_id, dataset, split, query_id) "
                "VALUES (7, 1, 'd', 'test', 'q1');"
                "INSERT INTO query_metrics VALUES (7, 'm', 1.0);"),
            SQLITE_OK);
  EXPECT_EQ(run("INSERT INTO params VALUES (1, 'lr', '0.2')"), SQLITE_CONSTRAINT);
  EXPECT_EQ(run("INSERT INTO query_metrics VALUES (99, 'm', 1.0)"), SQLITE_CONSTRAINT)
      << "a metric of no query";

  ASSERT_EQ(run("DELETE FROM runs WHERE id = 1"), SQLITE_OK);
  for (const char* table : {"params", "metrics", "metric_latest", "artifacts", "eval_results",
                            "attention_profiles", "jobs", "eval_queries", "query_metrics"})
    EXPECT_EQ(row_count(db.get(), std::string("SELECT 1 FROM ") + table), 0) << table;
  EXPECT_EQ(row_count(db.get(), "SELECT 1 FROM runs WHERE id = 2 AND parent_run_id IS NULL"), 1)
      << "the child run stays, without its parent";
}

}  // namespace
}  // namespace lmk
