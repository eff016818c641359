#include "engine/util/torch_runtime.h"

#include <ATen/Context.h>
#include <ATen/Functions.h>
#include <ATen/Parallel.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

namespace lmk {

namespace {

std::string resolved(const std::string& path) {
  std::error_code ec;
  const auto canonical = std::filesystem::canonical(path, ec);
  return ec ? path : canonical.string();
}

}  // namespace

BlasInfo detect_blas() {
  // Asking the dynamic linker which library defines sgemm_ names the one that really runs.
  BlasInfo info;
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info where;
  if (!sgemm || !dladdr(sgemm, &where) || !where.dli_fname) return info;
  info.library = resolved(where.dli_fname);
  const std::string file = std::filesystem::path(info.library).filename().string();
  if (at::hasMKL() && file.rfind("libtorch_cpu", 0) == 0) {
    info.name = "MKL";
  } else {
    info.name = file;
  }
  for (const char* fast : {"MKL", "mkl", "openblas", "blis"})
    if (info.name.find(fast) != std::string::npos) info.optimized = true;
  return info;
}

std::vector<std::string> other_blas_libraries() {
  const std::string own = detect_blas().library;
  std::set<std::string> found;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string file = std::filesystem::path(path).filename().string();
    for (const char* blas : {"libblas", "libopenblas", "liblapack", "libblis", "libflexiblas",
                             "libmkl_", "libcblas", "libatlas"}) {
      if (file.rfind(blas, 0) == 0 && resolved(path) != own) found.insert(resolved(path));
    }
  }
  return {found.begin(), found.end()};
}

std::string slow_blas_warning(const BlasInfo& blas, const std::vector<std::string>& others) {
  // A LibTorch with MKL inside: sgemm_ resolving elsewhere means a library loaded before it
  // (LD_PRELOAD, or a dependency of its own) now answers LibTorch's own BLAS calls.
  std::vector<std::string> second = others;
  if (at::hasMKL() && !blas.library.empty() && blas.name != "MKL")
    second.insert(second.begin(), blas.library);
  if (!second.empty()) {
    std::string list;
    for (const std::string& library : second) list += (list.empty() ? "" : ", ") + library;
    return "warning: a second BLAS is loaded beside LibTorch's own" +
           std::string(at::hasMKL() ? " (MKL)" : "") + ": " + list +
           " (it can take LibTorch's calls and crash it: pytorch issue #182263; lmk loads none "
           "itself: look at LD_PRELOAD and LD_LIBRARY_PATH)";
  }
  if (blas.optimized) return "";
  return "warning: LibTorch's matrix products run on " +
         (blas.library.empty() ? std::string("no BLAS") : "the BLAS " + blas.library) +
         " (~25x slower than MKL here): build against the PyPI wheel's LibTorch (scripts/setup)";
}

void prepare_vector_math() {
  // The functions ATen routes to VML for contiguous float / double tensors (aten/src/ATen/cpu/
  // vml.h); one element runs on the calling thread alone.
  using Unary = at::Tensor (*)(const at::Tensor&);
  static const Unary functions[] = {at::abs,  at::acos,  at::asin,  at::atan,  at::cos,
                                    at::sin,  at::tan,   at::tanh,  at::erf,   at::erfc,
                                    at::exp,  at::expm1, at::log,   at::log10, at::log1p,
                                    at::log2, at::sqrt,  at::rsqrt, at::trunc, at::reciprocal};
  for (const at::ScalarType type : {at::kFloat, at::kDouble}) {
    const at::Tensor half = at::full({1}, 0.5, at::TensorOptions().dtype(type));
    for (const Unary f : functions) (void)f(half);
  }
}

int configure_threads(int threads) {
  prepare_vector_math();
  if (threads <= 0) {
    if (const char* env = std::getenv("LMK_THREADS")) threads = std::atoi(env);
  }
  if (threads <= 0) {
    // torchrun starts LOCAL_WORLD_SIZE processes on this machine: each takes its share.
    int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (const char* local = std::getenv("LOCAL_WORLD_SIZE")) cores /= std::max(1, std::atoi(local));
    threads = std::max(1, cores);
  }
  at::set_num_threads(threads);
  return at::get_num_threads();
}

}  // namespace lmk
