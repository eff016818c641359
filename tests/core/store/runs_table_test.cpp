// The runs table's query (core/store/runs_table.h) run on a real store's file with plain SQLite,
// as the workbench runs it on its own connection: its columns, wide and long formats, and its
// orders.
#include "core/store/runs_table.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <variant>
#include <vector>

#include "core/store/results_store.h"
#include "tests/support/store_tests.h"

namespace lmk {
namespace {

using testing::RunSelectionTest;

// Runs a runs-table query with plain SQLite: each row's columns as text ("NULL" for null).
std::vector<std::vector<std::string>> run_table(const std::string& path, const SqlQuery& query) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, query.sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  for (size_t i = 0; i < query.bindings.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    if (const auto* text = std::get_if<std::string>(&query.bindings[i]))
      sqlite3_bind_text(stmt, index, text->c_str(), -1, SQLITE_TRANSIENT);
    else if (const auto* number = std::get_if<double>(&query.bindings[i]))
      sqlite3_bind_double(stmt, index, *number);
    else
      sqlite3_bind_int64(stmt, index, std::get<int64_t>(query.bindings[i]));
  }
  std::vector<std::vector<std::string>> rows;
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    rows.emplace_back();
    for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
      const auto* text = sqlite3_column_text(stmt, c);
      rows.back().push_back(text ? reinterpret_cast<const char*>(text) : "NULL");
    }
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return rows;
}

TEST_F(RunSelectionTest, RunsTableColumnsFormatsAndOrders) {
  RunsTableSpec spec;
  spec.param_keys = {"max_length"};
  spec.benchmarks = {{"docs", "test", "docs"}, {"code", "test", "code"}};
  spec.metric = "ndcg_at_10";
  const std::vector<RunsTableColumn> columns = runs_table_columns(spec);
  ASSERT_EQ(columns.size(), 13u);
  EXPECT_EQ(columns[10].name, "max_length");
  EXPECT_EQ(columns[10].kind, RunsTableColumnKind::Param);
  EXPECT_EQ(columns[12].name, "code");
  spec.sort_column = 10;  // max_length: numbers by value, runs without it last
  spec.ascending = false;
  auto rows = run_table(store_.path(), runs_table_query(spec));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0][0], std::to_string(cls_));
  EXPECT_EQ(rows[1][0], std::to_string(lmk_));
  EXPECT_EQ(rows[2][0], std::to_string(train_)) << "no max_length: last";
  EXPECT_EQ(rows[0][12], "0.75");
  EXPECT_EQ(rows[1][12], "NULL");
  spec.sort_column = 11;  // docs: by value, runs without a result last
  spec.ascending = true;
  spec.selection.text = "kind=eval";
  rows = run_table(store_.path(), runs_table_query(spec));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0], std::to_string(cls_));
  // Long format: a row per run and benchmark (a run without any: one row).
  spec.long_format = true;
  spec.selection.text = "";
  spec.sort_column = 0;
  EXPECT_EQ(runs_table_columns(spec).back().name, "score");
  rows = run_table(store_.path(), runs_table_query(spec));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0][11], "docs");
  EXPECT_EQ(rows[3][11], "NULL") << "the training run has no score";
}

}  // namespace
}  // namespace lmk
