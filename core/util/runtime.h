#pragma once

#include <string>

namespace lmk {

// The BLAS library LibTorch's matrix products run on.
struct BlasInfo {
  std::string library;     // resolved path of the loaded libblas ("" when none is loaded)
  bool optimized = false;  // false for the reference BLAS (~25x slower on this kind of CPU)
};

// Finds the BLAS library loaded into this process.
BlasInfo detect_blas();

// Sets LibTorch's intra-op thread count: `threads` when > 0, else $LMK_THREADS when set, else
// all cores (Debian's LibTorch starts with one). Returns the count in effect.
int configure_threads(int threads = 0);

// Returns a warning to print at start-up when LibTorch runs on the reference BLAS, else "".
std::string slow_blas_warning(const BlasInfo& blas);

}  // namespace lmk
