// The filter language (core/store/run_selection.h) run by a real store: each kind of term
// selects what it says, bad terms are named and left out; and the runs table's query
// (core/store/runs_table.h) run on the same file with plain SQLite: its columns, wide and long
// formats, and its orders.
#include "core/store/run_selection.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <variant>

#include "core/store/results_store.h"
#include "core/store/runs_table.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::TempDir;

class RunSelectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int64_t a = store_.get_or_create_experiment("alpha");
    const int64_t b = store_.get_or_create_experiment("Beta");
    lmk_ = store_.create_run(a, {"lmk-32", "eval", {{"pooling", "lmk"}, {"max_length", 512}}});
    cls_ = store_.create_run(a, {"cls", "eval", {{"pooling", "cls"}, {"max_length", 2048}}});
    train_ = store_.create_run(b, {"ft [x]", "train", {{"train", {{"pooling", "lmk"}}}}});
    store_.set_run_status(cls_, RunStatus::Finished);
    store_.add_eval_results(lmk_, {{"docs", "test", "ndcg_at_10", 0.5}});
    store_.add_eval_results(
        cls_, {{"docs", "test", "ndcg_at_10", 0.25}, {"code", "test", "ndcg_at_10", 0.75}});
  }

  std::vector<int64_t> select(const std::string& text, const std::string& status = "",
                              int64_t experiment = -1) const {
    return store_.selected_runs({text, status, experiment});
  }

  TempDir dir_;
  ResultsStore store_{(dir_.path() / "r.db").string()};
  int64_t lmk_ = 0, cls_ = 0, train_ = 0;
};

TEST_F(RunSelectionTest, EachKindOfTermSelectsWhatItSays) {
  using Ids = std::vector<int64_t>;
  EXPECT_EQ(select(""), (Ids{lmk_, cls_, train_}));
  EXPECT_EQ(select("pooling=lmk"), (Ids{lmk_}));
  EXPECT_EQ(select("*pooling=lmk"), (Ids{lmk_, train_})) << "a * in the key: train.pooling too";
  EXPECT_EQ(select("pooling!=lmk"), (Ids{cls_, train_})) << "a run without the param is not lmk";
  EXPECT_EQ(select("max_length>=1024"), (Ids{cls_}));
  EXPECT_EQ(select("max_length<1024 pooling=lmk"), (Ids{lmk_})) << "terms are AND-ed";
  EXPECT_EQ(select("name=lmk-*"), (Ids{lmk_}));
  EXPECT_EQ(select("name=\"ft [x]\""), (Ids{train_})) << "quotes keep the space; [ is literal";
  EXPECT_EQ(select("id=" + std::to_string(cls_)), (Ids{cls_}));
  EXPECT_EQ(select("id!=" + std::to_string(cls_)), (Ids{lmk_, train_}));
  EXPECT_EQ(select("status=finished"), (Ids{cls_})) << "status in any case";
  EXPECT_EQ(select("kind=train"), (Ids{train_}));
  EXPECT_EQ(select("experiment=Beta"), (Ids{train_}));
  EXPECT_EQ(select("BETA"), (Ids{train_})) << "free text: the experiment's name, any case";
  EXPECT_EQ(select("cls"), (Ids{cls_})) << "free text: the run's name";
  EXPECT_EQ(select("", "SCHEDULED"), (Ids{lmk_, train_}));
  EXPECT_EQ(select("", "", store_.get_run(train_).experiment_id), (Ids{train_}));
  EXPECT_EQ(store_.count_runs({"pooling=*"}), 2);
}

TEST_F(RunSelectionTest, BadTermsAreNamedAndLeftOut) {
  SqlCondition c = run_selection_condition({"max_length>big pooling=lmk"});
  EXPECT_EQ(c.error, "'max_length>big': > needs a number");
  EXPECT_EQ(select("max_length>big pooling=lmk"), (std::vector<int64_t>{lmk_}));
  EXPECT_EQ(run_selection_condition({"id=x"}).error, "'id=x': id needs a number");
  EXPECT_EQ(run_selection_condition({"=lmk"}).error, "'=lmk': no key before =");
  EXPECT_EQ(run_selection_condition({}).sql, "1");
}

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
