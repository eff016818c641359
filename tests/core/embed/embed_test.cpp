#include "core/embed/embed.h"

#include <gtest/gtest.h>

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include "core/pool/latent_attention.h"
#include "core/util/error.h"

namespace lmk {
namespace {

TEST(DeviceTest, ParsesCpuAndRejectsWhatIsNotADevice) {
  EXPECT_TRUE(parse_device("cpu").is_cpu());
  for (const char* bad : {"", "gpu", "cuda:", "cuda:x", "cuda:-1", "cuda:0x", "cudax"}) {
    try {
      parse_device(bad);
      ADD_FAILURE() << bad;
    } catch (const FieldError& e) {
      EXPECT_EQ(e.field(), "device") << bad;  // the command line says --device (LmkCliTest)
      EXPECT_EQ(std::string(e.what()).rfind("device: '", 0), 0u) << e.what();
    }
  }
}

TEST(DeviceTest, ErrorsNameTheOptionTheDeviceCameFrom) {
  try {
    parse_device("gpu", "[train] device");
    ADD_FAILURE() << "gpu";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("[train] device"), std::string::npos) << e.what();
  }
  if (at::hasCUDA()) {  // a device past the machine's: named, with how many there are
    const int count = at::detail::getCUDAHooks().getNumGPUs();
    try {
      parse_device("cuda:" + std::to_string(count));
      ADD_FAILURE() << "cuda:" << count;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("CUDA device(s)"), std::string::npos) << e.what();
    }
  }
}

TEST(DeviceTest, CudaNeedsALibTorchBuiltWithIt) {
  if (at::hasCUDA()) {
    EXPECT_TRUE(parse_device("cuda:0").is_cuda());
    EXPECT_EQ(parse_device("cuda:0").index(), 0);
    return;
  }
  try {
    parse_device("cuda:1");
    ADD_FAILURE() << "no CUDA here";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA"), std::string::npos) << e.what();
  }
}

// The pooling policy in one place: the layout each pooling reads, its options and what it records.
TEST(PoolingPlanTest, LayoutOptionsAndRecordPerPooling) {
  PoolingSettings folder;
  folder.landmarks.eval = LandmarkSpec::parse("fixed:24");
  folder.landmarks.train = LandmarkSpec::parse("variable:8,16");
  PoolingPlan lmk = plan_pooling(Pooling::Landmark, 0, folder, nullptr, true);
  EXPECT_EQ(lmk.landmarks.to_string(), "fixed:24");  // the folder's eval layout
  EXPECT_EQ(lmk.train_landmarks.to_string(), "variable:8,16");
  EXPECT_EQ(lmk.granularity, 24);
  EXPECT_EQ(lmk.record(),
            (nlohmann::json{{"pooling", "lmk"}, {"granularity", 24}, {"landmarks", "fixed:24"}}));
  EXPECT_TRUE(lmk.options.normalize);
  lmk = plan_pooling(Pooling::Landmark, 64, folder, nullptr, false);
  EXPECT_EQ(lmk.landmarks.to_string(), "fixed:64");
  EXPECT_EQ(lmk.train_landmarks.to_string(), "variable:8,16");
  EXPECT_EQ(lmk.granularity, 64);
  EXPECT_EQ(lmk.options.every_k, 64);
  EXPECT_FALSE(lmk.options.normalize);
  // A layout whose g is not one number records 0 and says which layout it was.
  folder.landmarks.eval = LandmarkSpec::parse("sentence:48");
  lmk = plan_pooling(Pooling::Landmark, 0, folder, nullptr, true);
  EXPECT_EQ(lmk.granularity, 0);
  EXPECT_EQ(lmk.record().at("landmarks"), "sentence:48");

  const PoolingPlan multicls = plan_pooling(Pooling::MultiCls, 0, folder, nullptr, true);
  EXPECT_EQ(multicls.landmarks.to_string(), "multicls:" + std::to_string(kDefaultGranularity));
  EXPECT_EQ(multicls.train_landmarks.to_string(), multicls.landmarks.to_string());
  EXPECT_EQ(multicls.granularity, kDefaultGranularity);
  EXPECT_TRUE(multicls.reads_positions());

  const PoolingPlan every_k = plan_pooling(Pooling::MeanEveryK, 8, folder, nullptr, true);
  EXPECT_EQ(every_k.landmarks.mode, LandmarkMode::None);
  EXPECT_EQ(every_k.options.every_k, 8);
  EXPECT_EQ(every_k.granularity, 8);
  EXPECT_FALSE(every_k.reads_positions());

  for (Pooling p : {Pooling::Cls, Pooling::Mean, Pooling::Last}) {
    const PoolingPlan plan = plan_pooling(p, 16, folder, nullptr, true);
    EXPECT_EQ(plan.landmarks.mode, LandmarkMode::None) << pooling_name(p);
    EXPECT_EQ(plan.granularity, 0) << pooling_name(p);
    EXPECT_EQ(plan.record().count("landmarks"), 0u) << pooling_name(p);
  }
}

// What attention capture queries per pooling: the pooled positions (landmarks, MultiCLS's
// CLS tokens), the last token for `last` (a decoder's final EOS), position 0 for the others.
TEST(PoolingPlanTest, QueryPositionsAreThePooledTokens) {
  const PoolingSettings folder;
  TokenizedText input;
  input.ids = {2, 5, 3, 6, 3};
  input.pool_positions = {2, 4};
  EXPECT_EQ(plan_pooling(Pooling::Landmark, 2, folder, nullptr, true).query_positions(input),
            (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(plan_pooling(Pooling::Last, 0, folder, nullptr, true).query_positions(input),
            (std::vector<int64_t>{4}));
  for (const Pooling other : {Pooling::Cls, Pooling::Mean, Pooling::MeanEveryK})
    EXPECT_EQ(plan_pooling(other, 0, folder, nullptr, true).query_positions(input),
              (std::vector<int64_t>{0}))
        << pooling_name(other);
  input.pool_positions.clear();  // a layout without landmarks: position 0 stands in
  EXPECT_EQ(plan_pooling(Pooling::Landmark, 2, folder, nullptr, true).query_positions(input),
            (std::vector<int64_t>{0}));
}

TEST(PoolingPlanTest, RejectsANegativeGranularityAndLatentWithoutWeights) {
  const PoolingSettings folder;
  try {
    plan_pooling(Pooling::Landmark, -1, folder, nullptr, true);
    ADD_FAILURE() << "negative granularity";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("granularity: must be >= 0"), std::string::npos)
        << e.what();
  }
  try {
    plan_pooling(Pooling::Latent, 0, folder, nullptr, true, "models/a");
    ADD_FAILURE() << "latent without weights";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("models/a"), std::string::npos) << e.what();
  }
  const LatentAttention latent(16, 4, 2, 0, 1);
  EXPECT_EQ(plan_pooling(Pooling::Latent, 0, folder, &latent, true).options.latent, &latent);
}

}  // namespace
}  // namespace lmk
