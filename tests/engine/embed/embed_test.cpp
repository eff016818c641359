#include "engine/embed/embed.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/CUDAHooksInterface.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "core/util/error.h"
#include "engine/model/encoder.h"
#include "engine/pool/latent_attention.h"
#include "engine/util/cuda_loader.h"
#include "tests/support/small_encoder_config.h"

namespace lmk {
namespace {

TEST(DeviceTest, ParsesCpuAndRejectsWhatIsNotADevice) {
  EXPECT_TRUE(parse_device("cpu").is_cpu());
  for (const char* bad :
       {"", "gpu", "cuda:", "cuda:x", "cuda:-1", "cuda:0x", "cudax", "cuda:+1", "cuda: 1"}) {
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
  prepare_device("cuda");  // as a command does, before it asks ATen about CUDA (at::hasCUDA)
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
  prepare_device("cuda");  // as a command does, before it asks ATen about CUDA (at::hasCUDA)
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

// Building a model asks ATen nothing about CUDA: lmk encode built its Encoder (whose
// at::manual_seed asked ATen for its accelerator, fixing the stub CUDA hooks for the life of the
// process) before it loaded the CUDA module, so CUDA could never be used. In a fresh process (a
// death test re-executes this binary): the models first, then what a command does with its
// device; ATen's CUDA hooks must be the real ones.
TEST(DeviceTest, BuildingAModelLeavesAtensCudaHooksToTheModule) {
  if (!cuda_module_built()) GTEST_SKIP() << "a CPU build (-DLMK_WITH_CUDA=OFF): no CUDA module";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        const Encoder encoder(testing::small_config(Architecture::ModernBert), 7);
        const LatentAttention latent(16, 4, 2, 0, 7);
        prepare_device("cuda");
        const bool real = at::detail::getCUDAHooks().isBuilt();
        std::fprintf(stderr, "ATen's CUDA hooks: %s\n", real ? "the module's" : "the stub");
        std::_Exit(real ? 0 : 3);  // no static destructors
      },
      ::testing::ExitedWithCode(0), "CUDA hooks: the module's");
  // The check parse_device makes: a process that asked too early gets a clear error.
  EXPECT_EXIT(
      {
        at::manual_seed(1);  // asks ATen for its accelerator: the stub is kept
        try {
          parse_device("cuda");
        } catch (const std::logic_error& e) {
          std::fprintf(stderr, "logic_error: %s\n", e.what());
          std::_Exit(std::string(e.what()).find("before the CUDA module") != std::string::npos ? 0
                                                                                               : 4);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "other error: %s\n", e.what());
          std::_Exit(5);
        }
        std::_Exit(6);
      },
      ::testing::ExitedWithCode(0), "before the CUDA module");
}

// The initialization draws from its own generator the stream the global one gave after
// at::manual_seed(seed): a model made before this change is made again bit for bit, and
// building one leaves the global generator alone.
TEST(DeviceTest, AModelsInitializationIsItsSeedsAlone) {
  at::manual_seed(7);
  const at::Tensor global = at::empty({1000}).normal_(0.0, 0.02);
  const at::Generator own = at::make_generator<at::CPUGeneratorImpl>(7);
  EXPECT_TRUE(at::equal(global, at::empty({1000}).normal_(0.0, 0.02, own)));
  at::manual_seed(99);
  const at::Tensor before = at::empty({8}).normal_();
  at::manual_seed(99);
  const Encoder a(testing::small_config(Architecture::ModernBert), 7);
  EXPECT_TRUE(at::equal(at::empty({8}).normal_(), before)) << "the global generator moved";
  const Encoder b(testing::small_config(Architecture::ModernBert), 7);
  const auto others = b.named_parameters();
  for (const auto& item : a.named_parameters())
    EXPECT_TRUE(at::equal(item.value(), others[item.key()])) << item.key();
}

// bf16 autocast as torch.autocast: the cache of bf16 copies of the weights is cleared when the
// guard ends, so the next step computes with the weights the optimizer updated (it kept step 1's
// copies: only embeddings and norms learned, LoRA's B stayed 0 in every forward). CPU autocast
// has the same cache.
TEST(BfloatAutocastTest, TheNextStepSeesTheUpdatedWeights) {
  at::Tensor weight = at::ones({4, 4}).requires_grad_(true);
  const at::Tensor x = at::ones({2, 4});
  at::Tensor first, second;
  {
    const BfloatAutocast autocast(true, c10::kCPU);
    first = at::linear(x, weight);
    EXPECT_EQ(first.scalar_type(), at::kBFloat16);
  }
  {
    const at::NoGradGuard no_grad;
    weight.zero_();  // the optimizer's step
  }
  {
    const BfloatAutocast autocast(true, c10::kCPU);
    second = at::linear(x, weight);
  }
  EXPECT_EQ(first.sum().item<float>(), 32.0f);
  EXPECT_EQ(second.sum().item<float>(), 0.0f) << "the forward used the old weights' bf16 copy";
  EXPECT_FALSE(at::autocast::is_autocast_enabled(c10::kCPU));
  // Nested guards: the cache lives until the outermost ends; the dtype comes back.
  at::autocast::set_autocast_dtype(c10::kCPU, at::kHalf);
  {
    const BfloatAutocast outer(true, c10::kCPU);
    {
      const BfloatAutocast inner(true, c10::kCPU);
      EXPECT_EQ(at::autocast::get_autocast_dtype(c10::kCPU), at::kBFloat16);
    }
    EXPECT_TRUE(at::autocast::is_autocast_enabled(c10::kCPU));
  }
  EXPECT_EQ(at::autocast::get_autocast_dtype(c10::kCPU), at::kHalf);
  at::autocast::set_autocast_dtype(c10::kCPU, at::kBFloat16);
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
