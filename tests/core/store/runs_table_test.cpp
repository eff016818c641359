// The runs table's query (core/store/runs_table.h) run on a real store's file with plain SQLite:
// its columns, wide and long formats, and its orders; and the store's pages of it, which the
// workbench's table reads, against the same plain SQLite.
#include "core/store/runs_table.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <optional>
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

// The store's pages (ResultsStore::runs_table_page, what the workbench's table reads) put
// together are the query's rows as plain SQLite returns them, value for value and in order, for
// pages of 1, 2 and 3 rows, wide and long; each value keeps its storage class.
TEST_F(RunSelectionTest, RunsTablePagesAreTheQuerysRows) {
  for (int64_t extra = 0; extra < 5; ++extra)
    store_.create_run(store_.get_or_create_experiment("gamma"),
                      {"r" + std::to_string(extra), "eval", {{"max_length", 100 + extra}}});
  RunsTableSpec spec;
  spec.param_keys = {"max_length", "pooling"};
  spec.benchmarks = {{"docs", "test", "docs"}, {"code", "test", "code"}};
  spec.metric = "ndcg_at_10";
  spec.sort_column = 10;
  const auto text_of = [](const std::optional<SqlValue>& value) -> std::string {
    if (!value) return "NULL";
    if (const auto* text = std::get_if<std::string>(&*value)) return *text;
    if (const auto* number = std::get_if<int64_t>(&*value)) return std::to_string(*number);
    char printed[32];
    std::snprintf(printed, sizeof printed, "%.15g", std::get<double>(*value));
    return printed;
  };
  for (const bool long_format : {false, true}) {
    spec.long_format = long_format;
    const SqlQuery query = runs_table_query(spec);
    const auto expected = run_table(store_.path(), query);
    ASSERT_EQ(expected.size(), long_format ? 9u : 8u);
    for (const int64_t size : {1, 2, 3}) {
      std::vector<std::vector<std::string>> paged;
      for (int64_t offset = 0;; offset += size) {
        const std::vector<RunsTableRow> page = store_.runs_table_page(query, offset, size);
        ASSERT_LE(static_cast<int64_t>(page.size()), size);
        for (const RunsTableRow& row : page) {
          paged.emplace_back();
          for (const auto& value : row) paged.back().push_back(text_of(value));
        }
        if (static_cast<int64_t>(page.size()) < size) break;
      }
      EXPECT_EQ(paged, expected) << "pages of " << size << (long_format ? ", long" : "");
    }
  }
  const std::vector<RunsTableRow> first = store_.runs_table_page(runs_table_query(spec), 0, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<int64_t>(*first[0][0])) << "the id is an integer";
  EXPECT_TRUE(std::holds_alternative<std::string>(*first[0][1])) << "the experiment is text";
  EXPECT_TRUE(std::holds_alternative<std::string>(*first[0][10])) << "params are stored as text";
  EXPECT_EQ(store_.runs_table_page(runs_table_query(spec), 100, 10).size(), 0u);
}

}  // namespace
}  // namespace lmk
