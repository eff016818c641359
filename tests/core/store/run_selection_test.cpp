// The filter language (core/store/run_selection.h) run by a real store: each kind of term
// selects what it says, bad terms are named and left out.
#include "core/store/run_selection.h"

#include <gtest/gtest.h>

#include "core/store/results_store.h"
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
