// The poolings by name (lmkcore): names round-trip, an unknown one names the flag, and which
// poolings read a granularity.
#include "core/pool/pooling_kind.h"

#include <gtest/gtest.h>

#include "core/util/error.h"

namespace lmk {
namespace {

TEST(PoolingKindTest, NamesRoundTripAndUnknownNamesFail) {
  for (const char* name : {"cls", "mean", "lmk", "multicls", "latent", "last", "mean_every_k"})
    EXPECT_STREQ(pooling_name(parse_pooling(name)), name);
  try {
    parse_pooling("LMK");
    ADD_FAILURE() << "names are lower case";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pooling: unknown pooling 'LMK'"), std::string::npos)
        << e.what();
  }
  try {
    parse_pooling("max", "lmk_pooling.json: pooling");  // the caller names where it came from
    ADD_FAILURE() << "max";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("lmk_pooling.json: pooling: unknown pooling", 0), 0u)
        << e.what();
  }
}

TEST(PoolingKindTest, OnlyLayoutAndEveryKPoolingsReadAGranularity) {
  for (Pooling p : {Pooling::Landmark, Pooling::MultiCls, Pooling::MeanEveryK})
    EXPECT_TRUE(reads_granularity(p)) << pooling_name(p);
  for (Pooling p : {Pooling::Cls, Pooling::Mean, Pooling::Latent, Pooling::Last})
    EXPECT_FALSE(reads_granularity(p)) << pooling_name(p);
}

}  // namespace
}  // namespace lmk
