// The filter language (core/store/run_selection.h) run by a real store: each kind of term
// selects what it says, bad terms are named and left out.
#include "core/store/run_selection.h"

#include <gtest/gtest.h>

#include "core/store/results_store.h"
#include "core/store/runs_table.h"
#include "tests/support/store_tests.h"

namespace lmk {
namespace {

using testing::RunSelectionTest;

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

// The runs table's columns are keys by the names they show: its own fields, and in the long
// layout benchmark and split (a run with a result there), not run params of those names.
TEST_F(RunSelectionTest, TheTablesColumnsAreKeysByTheirNames) {
  using Ids = std::vector<int64_t>;
  EXPECT_EQ(select("benchmark=code"), (Ids{cls_}));
  EXPECT_EQ(select("benchmark=docs"), (Ids{lmk_, cls_}));
  EXPECT_EQ(select("benchmark!=code"), (Ids{lmk_, train_})) << "no result on code";
  EXPECT_EQ(select("benchmark=d*"), (Ids{lmk_, cls_}));
  EXPECT_EQ(select("split=test"), (Ids{lmk_, cls_}));
  EXPECT_EQ(select("split=dev"), (Ids{}));
  RunsTableSpec spec;
  spec.metric = "ndcg_at_10";
  spec.long_format = true;
  for (const RunsTableColumn& column : runs_table_columns(spec)) {
    if (column.kind == RunsTableColumnKind::Param || column.kind == RunsTableColumnKind::Metric)
      continue;
    const std::string term = column.name + (column.name == "id" ? "=1" : "=x");
    const SqlCondition c = run_selection_condition({term});
    EXPECT_TRUE(c.error.empty()) << column.name << ": " << c.error;
    EXPECT_EQ(c.sql.find("params"), std::string::npos) << column.name << ": " << c.sql;
    EXPECT_NO_THROW(select(term)) << column.name;
  }
}

TEST_F(RunSelectionTest, BadTermsAreNamedAndLeftOut) {
  SqlCondition c = run_selection_condition({"max_length>big pooling=lmk"});
  EXPECT_EQ(c.error, "'max_length>big': > needs a number");
  EXPECT_EQ(select("max_length>big pooling=lmk"), (std::vector<int64_t>{lmk_}));
  EXPECT_EQ(run_selection_condition({"id=x"}).error, "'id=x': id needs a number");
  EXPECT_EQ(run_selection_condition({"=lmk"}).error, "'=lmk': no key before =");
  EXPECT_EQ(run_selection_condition({}).sql, "1");
}

}  // namespace
}  // namespace lmk
