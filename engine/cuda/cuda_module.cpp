// liblmk_cuda.so: lmk's CUDA code, loaded by engine/util/cuda_loader.cpp when a command asks for
// a CUDA device. It links libtorch_cuda.so (whose loading registers CUDA with ATen) and c10d's
// NCCL process group; nothing else in lmk does.
#include <c10/cuda/CUDAFunctions.h>
#include <cuda_runtime_api.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "engine/util/cuda_loader.h"

namespace {

int device_count(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (why) *why = std::string("CUDA: ") + cudaGetErrorString(status);
    return 0;
  }
  if (count == 0 && why) *why = "CUDA: no device";
  return count;
}

void set_device(int index) {
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
}

c10::intrusive_ptr<c10d::Backend> nccl_group(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                             int world_size, std::chrono::milliseconds timeout) {
  auto options = c10d::ProcessGroupNCCL::Options::create();
  options->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, world_size, options);
}

const lmk::CudaModule kModule{device_count, set_device, nccl_group};

}  // namespace

extern "C" __attribute__((visibility("default"))) const lmk::CudaModule* lmk_cuda_module() {
  return &kModule;
}
