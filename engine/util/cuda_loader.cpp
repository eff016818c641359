#include "engine/util/cuda_loader.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include "core/util/error.h"

#ifndef LMK_CUDA_MODULE_PATH
#define LMK_CUDA_MODULE_PATH ""
#endif

namespace lmk {

namespace {

namespace fs = std::filesystem;

std::atomic<const CudaModule*> loaded{nullptr};

std::vector<std::string> module_candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("LMK_CUDA_MODULE")) paths.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) paths.push_back((exe.parent_path() / "liblmk_cuda.so").string());
  if (*LMK_CUDA_MODULE_PATH) paths.emplace_back(LMK_CUDA_MODULE_PATH);
  return paths;
}

}  // namespace

bool cuda_module_built() {
#ifdef LMK_WITH_CUDA
  return true;
#else
  return false;
#endif
}

bool cuda_module_loaded() {
  return loaded.load() != nullptr;
}

const CudaModule& load_cuda_module(const std::string& option) {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    if (!cuda_module_built()) {
      error =
          "this lmk has no CUDA code: its LibTorch has no CUDA (or it was built with "
          "-DLMK_WITH_CUDA=OFF); use cpu, or build against a CUDA LibTorch (README, Build)";
      return;
    }
    std::string tried;
    for (const std::string& path : module_candidates()) {
      if (!fs::exists(path)) continue;
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        tried += std::string(tried.empty() ? "" : "; ") + dlerror();
        continue;
      }
      using Entry = const CudaModule* (*)();
      const auto entry = reinterpret_cast<Entry>(dlsym(handle, "lmk_cuda_module"));
      if (!entry) {
        tried += (tried.empty() ? "" : "; ") + path + " has no lmk_cuda_module()";
        continue;
      }
      loaded.store(entry());
      return;
    }
    error = tried.empty() ? "cannot find liblmk_cuda.so beside the executable (or set "
                            "LMK_CUDA_MODULE)"
                          : "cannot load the CUDA module: " + tried;
  });
  if (const CudaModule* module = loaded.load()) return *module;
  throw input_error(option, error);
}

}  // namespace lmk
