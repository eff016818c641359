#include "core/util/runtime.h"

#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <filesystem>

namespace lmk {
namespace {

TEST(RuntimeTest, DetectsTheLoadedBlas) {
  const BlasInfo blas = detect_blas();
  ASSERT_FALSE(blas.library.empty()) << "LibTorch links libblas.so.3";
  EXPECT_TRUE(std::filesystem::exists(blas.library)) << blas.library;
  EXPECT_EQ(blas.optimized, blas.library.find("openblas") != std::string::npos) << blas.library;
  EXPECT_EQ(slow_blas_warning(blas).empty(), blas.optimized);
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
}

}  // namespace
}  // namespace lmk
