#include "core/util/runtime.h"

#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <csignal>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace lmk {
namespace {

TEST(RuntimeTest, DetectsTheLoadedBlas) {
  const BlasInfo blas = detect_blas();
  ASSERT_FALSE(blas.library.empty()) << "LibTorch links libblas.so.3";
  EXPECT_TRUE(std::filesystem::exists(blas.library)) << blas.library;
  EXPECT_EQ(blas.optimized, blas.library.find("openblas") != std::string::npos) << blas.library;
  if (blas.optimized) EXPECT_EQ(blas.threading, "pthreads") << "scripts/setup selects it";
  EXPECT_EQ(slow_blas_warning(blas).empty(), blas.optimized && blas.threading != "openmp");
}

// Sets or unsets the idle-waiting variables for one test, restoring them after.
class WaitingEnvironment {
 public:
  WaitingEnvironment() {
    for (const char* name : kNames)
      if (const char* value = std::getenv(name)) saved_.emplace_back(name, value);
  }
  ~WaitingEnvironment() {
    for (const char* name : kNames) ::unsetenv(name);
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  static constexpr const char* kNames[] = {"OMP_WAIT_POLICY", "OPENBLAS_THREAD_TIMEOUT"};

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST(RuntimeTest, PassiveWaitingSetsOnlyWhatTheUserLeftUnset) {
  WaitingEnvironment restore;
  using Assignments = std::vector<std::pair<std::string, std::string>>;
  ::unsetenv("OMP_WAIT_POLICY");
  ::unsetenv("OPENBLAS_THREAD_TIMEOUT");
  EXPECT_EQ(passive_waiting_environment(),
            (Assignments{{"OMP_WAIT_POLICY", "PASSIVE"}, {"OPENBLAS_THREAD_TIMEOUT", "4"}}));
  EXPECT_EQ(waiting_settings(), "OMP_WAIT_POLICY=unset, OPENBLAS_THREAD_TIMEOUT=unset");
  ::setenv("OPENBLAS_THREAD_TIMEOUT", "9", 1);
  EXPECT_EQ(passive_waiting_environment(), (Assignments{{"OMP_WAIT_POLICY", "PASSIVE"}}));
  ::setenv("OMP_WAIT_POLICY", "ACTIVE", 1);
  EXPECT_TRUE(passive_waiting_environment().empty()) << "nothing to set: no re-execution";
  EXPECT_EQ(waiting_settings(), "OMP_WAIT_POLICY=ACTIVE, OPENBLAS_THREAD_TIMEOUT=9");
}

TEST(RuntimeTest, WarnsAboutOpenBlasInItsOpenMpBuild) {
  BlasInfo openmp{"/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3", true, "openmp"};
  EXPECT_NE(slow_blas_warning(openmp).find("openblas-pthread"), std::string::npos);
  openmp.threading = "pthreads";
  EXPECT_EQ(slow_blas_warning(openmp), "");
}

TEST(RuntimeTest, WarnsAboutTheReferenceBlas) {
  const std::string warning =
      slow_blas_warning({"/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", false});
  EXPECT_NE(warning.find("reference BLAS"), std::string::npos);
  EXPECT_NE(warning.find("scripts/setup"), std::string::npos);
}

TEST(RuntimeTest, SetsTheThreadCount) {
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
TEST(RuntimeTest, ParallelForInLmksOwnCodeRunsOnTheConfiguredThreads) {
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

// The signal tests run in child processes (death tests fork): the handlers and the flag are
// process-wide.
TEST(RuntimeTest, StopSignalsOnlyRecordTheFirstSignal) {
  EXPECT_EXIT(
      {
        install_stop_signals();
        if (stop_requested() || stop_signal() != 0) ::_exit(1);
        std::raise(SIGTERM);  // would end the process without the handler
        if (!stop_requested() || stop_signal() != SIGTERM) ::_exit(2);
        std::raise(SIGUSR1);
        std::raise(SIGTERM);
        ::_exit(stop_signal() == SIGTERM ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(RuntimeTest, ASecondSigintEndsTheProcessWith130) {
  EXPECT_EXIT(
      {
        install_stop_signals();
        std::raise(SIGINT);
        if (stop_signal() != SIGINT) ::_exit(1);
        std::raise(SIGINT);
        ::_exit(0);
      },
      ::testing::ExitedWithCode(130), "");
  EXPECT_EXIT(
      {
        install_stop_signals();
        std::raise(SIGTERM);
        std::raise(SIGINT);  // after SIGTERM too: Ctrl-C while it stops
        ::_exit(0);
      },
      ::testing::ExitedWithCode(130), "");
}

}  // namespace
}  // namespace lmk
