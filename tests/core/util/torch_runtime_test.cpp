#include "core/util/torch_runtime.h"

#include <gtest/gtest.h>

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

namespace lmk {
namespace {

// One BLAS: LibTorch's own (the wheel's MKL, inside libtorch_cpu.so), and no other BLAS library
// mapped into the process (pytorch issue #182263: a second one can take LibTorch's calls).
TEST(TorchRuntimeTest, TheOnlyBlasIsLibTorchsOwn) {
  const BlasInfo blas = detect_blas();
  ASSERT_FALSE(blas.library.empty()) << "LibTorch exports sgemm_";
  EXPECT_TRUE(std::filesystem::exists(blas.library)) << blas.library;
  EXPECT_EQ(blas.name,
            at::hasMKL() ? "MKL" : std::filesystem::path(blas.library).filename().string());
  if (at::hasMKL()) {
    EXPECT_EQ(std::filesystem::path(blas.library).filename(), "libtorch_cpu.so") << blas.library;
  }
  EXPECT_TRUE(blas.optimized) << blas.library;
  EXPECT_EQ(other_blas_libraries(), std::vector<std::string>{});
  EXPECT_EQ(slow_blas_warning(blas, other_blas_libraries()), "");
}

TEST(TorchRuntimeTest, WarnsAboutASlowOrASecondBlas) {
  const BlasInfo reference{"/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", "libblas.so.3", false};
  const std::string answered = slow_blas_warning(reference, {});
  if (at::hasMKL()) {
    // LibTorch has MKL, so another library answering sgemm_ took LibTorch's own calls.
    EXPECT_NE(answered.find("a second BLAS"), std::string::npos) << answered;
  } else {
    EXPECT_NE(answered.find("~25x slower"), std::string::npos) << answered;
  }
  EXPECT_NE(answered.find("libblas.so.3"), std::string::npos) << answered;
  if (!at::hasMKL()) EXPECT_NE(slow_blas_warning({}, {}).find("no BLAS"), std::string::npos);
  const std::string second = slow_blas_warning({"/x/libtorch_cpu.so", "MKL", true},
                                               {"/usr/lib/x86_64-linux-gnu/libopenblas.so.0"});
  EXPECT_NE(second.find("a second BLAS"), std::string::npos) << second;
  EXPECT_NE(second.find("libopenblas.so.0"), std::string::npos) << second;
  EXPECT_EQ(slow_blas_warning({"/x/libtorch_cpu.so", "MKL", true}, {}), "");
}

TEST(TorchRuntimeTest, SetsTheThreadCount) {
  EXPECT_EQ(configure_threads(1), 1);
  EXPECT_EQ(at::get_num_threads(), 1);
  ::setenv("LMK_THREADS", "2", 1);
  EXPECT_EQ(configure_threads(0), 2);
  ::unsetenv("LMK_THREADS");
  EXPECT_GE(configure_threads(0), 1);
  // Two processes started by torchrun on this machine share its cores.
  const int all = configure_threads(0);
  ::setenv("LOCAL_WORLD_SIZE", "2", 1);
  EXPECT_EQ(configure_threads(0), std::max(1, all / 2));
  ::unsetenv("LOCAL_WORLD_SIZE");
}

// at::parallel_for is inline (`#pragma omp parallel` in ATen's header): it runs on the threads
// configure_threads sets only where lmk's own code is compiled with OpenMP (core/CMakeLists.txt).
// This test is compiled as the attention kernels are; without the flag every range ran on the
// calling thread.
TEST(TorchRuntimeTest, ParallelForInLmksOwnCodeRunsOnTheConfiguredThreads) {
  ASSERT_EQ(configure_threads(2), 2);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  at::parallel_for(0, 2, 1, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(threads.size(), 2u);
  configure_threads(0);
}

}  // namespace
}  // namespace lmk
