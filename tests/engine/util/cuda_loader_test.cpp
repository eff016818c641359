// The CUDA module (engine/util/cuda_loader.h): loaded on demand, it says why it cannot serve, and
// loading it (libtorch_cuda.so registers CUDA with ATen) changes nothing computed on the CPU.
#include "engine/util/cuda_loader.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <unistd.h>

#include <string>

#include "core/util/error.h"
#include "engine/model/encoder.h"

namespace lmk {
namespace {

TEST(CudaModuleTest, LoadsWhereBuiltAndSaysWhyItCannotServeElsewhere) {
  if (!cuda_module_built()) {
    try {
      load_cuda_module("--device");
      ADD_FAILURE() << "a build without CUDA code loaded a CUDA module";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--device: this lmk has no CUDA code", 0), 0u)
          << e.what();
    }
    return;
  }
  const CudaModule& cuda = load_cuda_module("--device");
  EXPECT_TRUE(cuda_module_loaded());
  EXPECT_EQ(&load_cuda_module("--device"), &cuda) << "loaded once";
  std::string why;
  const int devices = cuda.device_count(&why);
  EXPECT_GE(devices, 0);
  if (devices == 0) EXPECT_NE(why.find("CUDA: "), std::string::npos) << why;
  // What the module registered is what ATen now answers.
  EXPECT_EQ(at::hasCUDA(), devices > 0);
}

// A forward and a backward of the tiny encoder on the CPU, as bytes.
std::string cpu_forward_and_backward() {
  Encoder encoder(EncoderConfig::preset("tiny", 50, 0), 3);  // global and local layers
  at::manual_seed(7);
  const at::Tensor ids = at::randint(1, 50, {2, 40}, at::kLong);
  const at::Tensor mask = at::ones({2, 40}, at::kLong);
  const at::Tensor hidden = encoder.forward(ids, mask);
  hidden.pow(2).sum().backward();
  at::Tensor all = hidden.detach().flatten();
  for (const auto& p : encoder.parameters()) all = at::cat({all, p.grad().flatten()});
  return std::string(static_cast<const char*>(all.data_ptr()), all.numel() * sizeof(float));
}

// In a fresh process (the threadsafe death-test style runs the test anew): the same forward and
// backward before and after the module is loaded, bit for bit.
TEST(CudaModuleTest, CpuResultsAreTheSameWithTheModuleLoaded) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        if (cuda_module_loaded()) ::_exit(3);
        const std::string before = cpu_forward_and_backward();
        try {
          load_cuda_module("--device");
        } catch (const InputError&) {
          if (cuda_module_built()) ::_exit(4);
        }
        if (cuda_module_built() != cuda_module_loaded()) ::_exit(5);
        ::_exit(cpu_forward_and_backward() == before ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace lmk
