#include "core/util/runtime.h"

#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <filesystem>

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

}  // namespace
}  // namespace lmk
