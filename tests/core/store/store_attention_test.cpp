// The attention unit of the results store (core/store/store_attention.h): attention profiles by
// key, with their runs and models.
#include "core/store/store_attention.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/store/results_store.h"
#include "tests/support/store_tests.h"

namespace lmk {
namespace {

using testing::RunReadsTest;

TEST_F(RunReadsTest, AttentionProfilesByKeyWithTheirRunsAndModels) {
  EXPECT_EQ(store_.attention_profile_keys(),
            (std::vector<std::tuple<std::string, int64_t, int64_t, std::string>>{
                {"docs", 0, 2, "all"}, {"docs", 1, -1, "256"}}));
  const std::vector<RunAttentionBin> bins = store_.attention_profile_bins("docs", 1, -1);
  ASSERT_EQ(bins.size(), 2u);
  EXPECT_EQ(bins[0].run.run_name, "lmk-eval");
  EXPECT_EQ(bins[0].length_group, "256");
  EXPECT_EQ(bins[1].bin_start, 0.5);
  EXPECT_EQ(bins[1].weight, 0.25);
  EXPECT_TRUE(store_.attention_profile_bins("docs", 1, 0).empty());
  EXPECT_EQ(store_.attention_profile_models("docs"), std::vector<std::string>{"/m/a"});
  EXPECT_TRUE(store_.attention_profile_models("other").empty());
}

}  // namespace
}  // namespace lmk
