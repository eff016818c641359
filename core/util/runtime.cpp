#include "core/util/runtime.h"

#include <ATen/Parallel.h>

#include <cstdlib>
#include <fstream>
#include <thread>

namespace lmk {

BlasInfo detect_blas() {
  // LibTorch links the generic libblas.so.3, which the alternatives system points at one
  // provider; the mapping in /proc/self/maps names the file really loaded.
  BlasInfo info;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const bool is_blas = path.find("libblas") != std::string::npos ||
                         path.find("libopenblas") != std::string::npos ||
                         path.find("libmkl") != std::string::npos ||
                         path.find("libblis") != std::string::npos;
    if (!is_blas) continue;
    info.library = path;
    info.optimized = path.find("openblas") != std::string::npos ||
                     path.find("mkl") != std::string::npos || path.find("blis") != std::string::npos;
    if (info.optimized) break;
  }
  return info;
}

int configure_threads(int threads) {
  if (threads <= 0) {
    if (const char* env = std::getenv("LMK_THREADS")) threads = std::atoi(env);
  }
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  at::set_num_threads(threads);
  return at::get_num_threads();
}

std::string slow_blas_warning(const BlasInfo& blas) {
  if (blas.library.empty() || blas.optimized) return "";
  return "warning: LibTorch is using the reference BLAS (" + blas.library +
         "): matrix products run ~25x slower. Run scripts/setup, or make OpenBLAS the active "
         "libblas: update-alternatives --set libblas.so.3-x86_64-linux-gnu "
         "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3";
}

}  // namespace lmk
