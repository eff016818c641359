#pragma once

// The CUDA code lives in a module, liblmk_cuda.so (engine/cuda), that a process loads only when a
// command asks for a CUDA device: a process on the CPU maps neither libtorch_cuda.so nor the
// CUDA libraries behind it (cuBLAS, cuDNN, NCCL, ...), and starts without them. Loading the
// module loads libtorch_cuda.so, which registers CUDA with ATen; ATen caches its first answer
// about CUDA, so the module is loaded before anything asks (parse_device, DistributedContext).

#include <c10/util/intrusive_ptr.h>

#include <chrono>
#include <string>

namespace c10d {
class Store;
class Backend;
}  // namespace c10d

namespace lmk {

// The module's functions (engine/cuda/cuda_module.cpp).
struct CudaModule {
  // The CUDA devices this process sees; 0 without a driver or a GPU, with the driver's reason
  // in `why`.
  int (*device_count)(std::string* why);
  // Makes `index` the current CUDA device of the calling thread.
  void (*set_device)(int index);
  // c10d's NCCL process group over `store` (the current device's).
  c10::intrusive_ptr<c10d::Backend> (*nccl_group)(const c10::intrusive_ptr<c10d::Store>& store,
                                                  int rank, int world_size,
                                                  std::chrono::milliseconds timeout);
};

// Whether this build has the module (LMK_WITH_CUDA: its LibTorch has CUDA).
bool cuda_module_built();

// Loads liblmk_cuda.so on the first call and returns its functions. An InputError naming
// `option` when this build has no module or it cannot be loaded (the dynamic loader's reason:
// a CUDA library it cannot find). Looked for in $LMK_CUDA_MODULE, beside the executable, then
// in the build tree.
const CudaModule& load_cuda_module(const std::string& option);

// Whether the module is loaded in this process.
bool cuda_module_loaded();

}  // namespace lmk
