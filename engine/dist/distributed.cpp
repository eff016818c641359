#include "engine/dist/distributed.h"

// LibTorch's c10d headers compile the Gloo process group only when asked; libtorch_cpu.so
// exports ProcessGroupGloo and TCPStore. NCCL lives in libtorch_cuda.so: it comes from the CUDA
// module (engine/util/cuda_loader.h), loaded when a group on CUDA is asked for.
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>

#include "core/util/error.h"
#include "core/util/runtime.h"
#include "engine/embed/embed.h"
#include "engine/util/cuda_loader.h"

namespace lmk {

namespace {

// An exception's message without LibTorch's C++ backtrace.
std::string message_of(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e))
    return c10_error->what_without_backtrace();
  return e.what();
}

std::chrono::milliseconds milliseconds_of(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)));
}

}  // namespace

// --- The process group -----------------------------------------------------------------------

struct DistributedContext::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> group;  // Gloo or NCCL: the collectives used here
  at::Device device = at::kCPU;  // where sum() puts its numbers (NCCL reduces on the GPU)

  // The group ends before the store it talks through (members go in reverse order, but an
  // NCCL group left to its destructor aborts its communicators at exit, with a warning).
  ~Impl() {
    if (!group) return;
    try {
      group->shutdown();
    } catch (const std::exception&) {
      // A peer already gone: nothing left to end cleanly.
    }
    group.reset();
  }
};

namespace {

// Runs a collective; a failure (another process stopped, a timeout) becomes one clear line.
template <typename F>
void collective(const char* what, F&& run) {
  try {
    run();
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("distributed ") + what +
                             " failed (did another process stop?): " + message_of(e));
  }
}

// The Gloo devices: GLOO_SOCKET_IFNAME's interfaces when set, else the address of this host's
// name, else (every process on this machine) the loopback address.
std::vector<std::shared_ptr<::gloo::transport::Device>> gloo_devices(const DistributedEnv& env) {
  std::vector<std::shared_ptr<::gloo::transport::Device>> devices;
  if (!env.gloo_interfaces.empty()) {
    size_t start = 0;
    while (start <= env.gloo_interfaces.size()) {
      const size_t comma =
          std::min(env.gloo_interfaces.find(',', start), env.gloo_interfaces.size());
      const std::string name = env.gloo_interfaces.substr(start, comma - start);
      try {
        devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
      } catch (const std::exception& e) {
        throw input_error("GLOO_SOCKET_IFNAME",
                          "cannot use the interface '" + name + "': " + message_of(e));
      }
      start = comma + 1;
    }
    return devices;
  }
  const std::string host = host_name();
  try {
    devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(host));
    return devices;
  } catch (const std::exception& e) {
    if (!env.single_host) {
      throw InputError("Gloo: the host name '" + host +
                       "' does not resolve to an address of this machine (" + message_of(e) +
                       "): set GLOO_SOCKET_IFNAME to the network interface that connects the "
                       "nodes");
    }
  }
  devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  return devices;
}

}  // namespace

DistributedContext::DistributedContext() = default;
DistributedContext::~DistributedContext() = default;
DistributedContext::DistributedContext(DistributedContext&&) noexcept = default;
DistributedContext& DistributedContext::operator=(DistributedContext&&) noexcept = default;

const DistributedContext& DistributedContext::single_process() {
  static const DistributedContext context;
  return context;
}

c10::Device process_device(const std::string& name, const std::string& option,
                           const DistributedEnv& env) {
  if (env.world_size > 1 && name.rfind("cuda", 0) == 0) {
    const std::string mine = "cuda:" + std::to_string(env.local_rank);
    if (name != "cuda" && name != mine)
      throw input_error(option, "'" + name + "': under a launcher each process computes on the " +
                                    "GPU of its LOCAL_RANK, the one NCCL binds it to (here " +
                                    mine + "); give cuda");
    return parse_device(mine, option + " (LOCAL_RANK " + std::to_string(env.local_rank) + ")");
  }
  if (name == "cuda") return parse_device("cuda:0", option);
  return parse_device(name, option);
}

c10::Device process_device(const std::string& name, const std::string& option) {
  return process_device(name, option, read_distributed_env());
}

DistributedContext DistributedContext::from_environment(bool cuda) {
  return join(read_distributed_env(), cuda);
}

DistributedContext DistributedContext::join(const DistributedEnv& env, bool cuda) {
  DistributedContext context;
  if (env.world_size <= 1) return context;
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  const std::string who =
      "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size);
  // NCCL is in the CUDA module, and each rank takes the GPU of its LOCAL_RANK: both are checked
  // before the rendezvous, so a rank that cannot run says so at once.
  const CudaModule* cuda_module = nullptr;
  if (cuda) {
    cuda_module = &load_cuda_module("NCCL process group (--device cuda)");
    std::string why;
    const int devices = cuda_module->device_count(&why);
    if (env.local_rank >= devices) {
      throw InputError(
          "distributed on CUDA: " + who + " (LOCAL_RANK " + std::to_string(env.local_rank) +
          ") needs cuda:" + std::to_string(env.local_rank) + ", and this machine has " +
          std::to_string(devices) + " CUDA device(s)" + (why.empty() ? "" : " (" + why + ")"));
    }
  }
  const auto rendezvous_timeout = milliseconds_of(env.rendezvous_timeout_s);
  const std::string timeout_text =
      std::to_string(static_cast<int64_t>(std::llround(env.rendezvous_timeout_s))) +
      " s (LMK_DIST_TIMEOUT_S)";

  auto impl = std::make_unique<Impl>();
  try {
    c10d::TCPStoreOptions options;
    options.port = static_cast<uint16_t>(env.master_port);
    options.isServer = env.rank == 0;
    options.numWorkers = static_cast<size_t>(env.world_size);
    options.waitWorkers = false;  // the arrival count below waits, with a clearer error
    options.timeout = rendezvous_timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
  } catch (const std::exception& e) {
    if (env.rank == 0) {
      throw InputError("distributed rendezvous: rank 0 cannot serve the TCPStore at " + where +
                       " (MASTER_ADDR:MASTER_PORT): " + message_of(e));
    }
    throw InputError("distributed rendezvous: " + who + " could not reach rank 0's TCPStore at " +
                     where + " within " + timeout_text +
                     ": is rank 0 running, with the same MASTER_ADDR and MASTER_PORT? (" +
                     message_of(e) + ")");
  }
  // Every process counts itself in; the last one to arrive tells the others.
  try {
    if (impl->store->add("lmk/arrived", 1) == env.world_size)
      impl->store->set("lmk/all-arrived", std::vector<uint8_t>{1});
    impl->store->wait({"lmk/all-arrived"}, rendezvous_timeout);
  } catch (const std::exception& e) {
    std::string arrived = "not all";
    try {
      arrived = std::to_string(impl->store->add("lmk/arrived", 0));
    } catch (const std::exception&) {
    }
    throw InputError("distributed rendezvous timed out after " + timeout_text + ": " + arrived +
                     " of WORLD_SIZE " + std::to_string(env.world_size) + " processes arrived at " +
                     where +
                     "; start every rank with the same MASTER_ADDR, MASTER_PORT and WORLD_SIZE");
  }

  const auto collective_timeout = milliseconds_of(env.collective_timeout_s);
  // The group's own keys apart from the rendezvous' ("lmk/arrived"), as torch's
  // init_process_group keeps each group under a prefix.
  const auto group_store = c10::make_intrusive<c10d::PrefixStore>("lmk/group/", impl->store);
  try {
    if (cuda_module) {
      cuda_module->set_device(env.local_rank);
      impl->group =
          cuda_module->nccl_group(group_store, env.rank, env.world_size, collective_timeout);
      impl->device = at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
      // Bound to this process's GPU, as init_process_group(device_id=...) binds it: NCCL's
      // barriers and its lazy communicators then use it instead of guessing one.
      impl->group->setBoundDeviceId(impl->device);
    } else {
      auto options = c10d::ProcessGroupGloo::Options::create(collective_timeout);
      options->devices = gloo_devices(env);
      impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(group_store, env.rank,
                                                                env.world_size, options);
    }
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError("distributed rendezvous: " + who + " could not connect to the others (" +
                     where + "): " + message_of(e));
  }
  context.rank_ = env.rank;
  context.world_size_ = env.world_size;
  context.local_rank_ = env.local_rank;
  context.impl_ = std::move(impl);
  return context;
}

// The collectives take tensors on any device: NCCL works on the GPU only, so a tensor elsewhere
// (the CPU's flags and losses) is copied to the group's device and its result back; with Gloo
// (the CPU) nothing is copied.
void DistributedContext::all_reduce_sum(at::Tensor& tensor) const {
  if (!is_distributed()) return;
  TORCH_CHECK(tensor.is_contiguous(), "all_reduce_sum: a contiguous tensor expected");
  at::Tensor work = tensor.to(impl_->device);  // the tensor itself when it is there
  collective("all-reduce", [&] {
    std::vector<at::Tensor> tensors = {work};
    impl_->group->allreduce(tensors)->wait();
  });
  if (!work.is_same(tensor)) tensor.copy_(work);
}

double DistributedContext::sum(double value) const {
  if (!is_distributed()) return value;
  at::Tensor total = at::full({1}, value, at::TensorOptions(at::kDouble).device(impl_->device));
  all_reduce_sum(total);
  return total.cpu().item<double>();
}

void DistributedContext::broadcast(std::vector<at::Tensor>& tensors) const {
  if (!is_distributed()) return;
  collective("broadcast", [&] {
    for (at::Tensor& tensor : tensors) {
      TORCH_CHECK(tensor.is_contiguous(), "broadcast: contiguous tensors expected");
      at::Tensor work = tensor.to(impl_->device);
      std::vector<at::Tensor> one = {work};
      impl_->group->broadcast(one)->wait();
      if (!work.is_same(tensor)) tensor.copy_(work);
    }
  });
}

at::Tensor DistributedContext::all_gather(const at::Tensor& tensor) const {
  if (!is_distributed()) return tensor;
  std::vector<at::Tensor> inputs = {tensor.to(impl_->device).contiguous()};
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < world_size_; ++r) outputs[0].push_back(at::empty_like(inputs[0]));
  collective("all-gather", [&] { impl_->group->allgather(outputs, inputs)->wait(); });
  return at::cat(outputs[0], 0).to(tensor.device());  // where the tensor was
}

void DistributedContext::barrier() const {
  if (!is_distributed()) return;
  collective("barrier", [&] { impl_->group->barrier()->wait(); });
}

// --- Cross-device negatives ------------------------------------------------------------------

namespace {

// The backward of all_gather_with_gradient. Every process's loss L_r reads every process's
// passages, so the gradient of the global loss L = sum_r L_r with respect to this process's
// passages p_k is sum_r dL_r/dp_k: the k-th slice of the gradient that *each* process holds for
// the gathered tensor. Summing those gradients over processes (one all-reduce) and keeping this
// process's slice gives exactly that. The common shortcut (gather detached copies, put the local
// tensor with its graph back in its own slice) keeps only dL_k/dp_k: the terms of the other
// processes' queries against these passages are lost, so the parameter gradient, even after
// averaging, is not the gradient of the combined batch's loss.
class AllGatherBackward : public torch::autograd::Node {
 public:
  AllGatherBackward(const DistributedContext& dist, at::Tensor gathered_shape_like)
      : dist_(dist),
        sizes_(gathered_shape_like.sizes().vec()),
        options_(gathered_shape_like.options()) {}

  std::string name() const override { return "lmk::AllGatherBackward"; }

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    // Every process must join the all-reduce, even one whose loss did not use the gathered rows.
    at::Tensor total = grads[0].defined() ? grads[0].contiguous().clone()
                                          : at::zeros(sizes_, options_);  // [W * R, ...]
    dist_.all_reduce_sum(total);
    const int64_t rows = sizes_[0] / dist_.world_size();
    return {total.narrow(0, dist_.rank() * rows, rows)};  // [R, ...]
  }

 private:
  const DistributedContext& dist_;
  std::vector<int64_t> sizes_;
  at::TensorOptions options_;
};

}  // namespace

at::Tensor all_gather_with_gradient(const DistributedContext& dist, const at::Tensor& local) {
  if (!dist.is_distributed()) return local;
  at::Tensor gathered;
  {
    at::NoGradGuard no_grad;
    gathered = dist.all_gather(local.detach());  // [W * R, ...]
  }
  if (local.requires_grad() && at::GradMode::is_enabled()) {
    auto node = std::shared_ptr<AllGatherBackward>(new AllGatherBackward(dist, gathered),
                                                   torch::autograd::deleteNode);
    node->set_next_edges(torch::autograd::collect_next_edges(local));
    torch::autograd::set_history(gathered, node);
  }
  return gathered;
}

// --- Gradients and parameters ----------------------------------------------------------------

namespace {

// Calls visit(flat, members) for consecutive runs of `tensors` of one dtype holding up to
// bucket_bytes (a larger tensor is a bucket of its own); flat is their concatenation (a copy).
// After visit, flat's values are copied back into the members.
template <typename F>
void for_each_bucket(const std::vector<at::Tensor>& tensors, size_t bucket_bytes, F&& visit) {
  size_t first = 0;
  while (first < tensors.size()) {
    size_t last = first, bytes = 0;
    while (last < tensors.size() && tensors[last].scalar_type() == tensors[first].scalar_type() &&
           (last == first || bytes + tensors[last].nbytes() <= bucket_bytes)) {
      bytes += tensors[last].nbytes();
      ++last;
    }
    std::vector<at::Tensor> flat_parts;
    for (size_t i = first; i < last; ++i) flat_parts.push_back(tensors[i].reshape({-1}));
    at::Tensor flat = at::cat(flat_parts);
    visit(flat);
    int64_t offset = 0;
    for (size_t i = first; i < last; ++i) {
      const int64_t n = tensors[i].numel();
      tensors[i].copy_(flat.narrow(0, offset, n).view_as(tensors[i]));
      offset += n;
    }
    first = last;
  }
}

}  // namespace

void average_gradients(const DistributedContext& dist, const std::vector<at::Tensor>& parameters,
                       size_t bucket_bytes) {
  if (!dist.is_distributed()) return;
  at::NoGradGuard no_grad;
  // Which gradients exist on any process (an unused parameter has none in one process).
  at::Tensor defined = at::zeros({static_cast<int64_t>(parameters.size())}, at::kFloat);
  float* anywhere = defined.data_ptr<float>();
  for (size_t i = 0; i < parameters.size(); ++i) anywhere[i] = parameters[i].grad().defined();
  dist.all_reduce_sum(defined);
  std::vector<at::Tensor> grads;
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (anywhere[i] == 0) continue;
    at::Tensor parameter = parameters[i];
    if (!parameter.grad().defined()) parameter.mutable_grad() = at::zeros_like(parameter);
    grads.push_back(parameter.grad());
  }
  const double world = dist.world_size();
  for_each_bucket(grads, bucket_bytes, [&](at::Tensor& flat) {
    dist.all_reduce_sum(flat);
    flat.div_(world);
  });
}

void broadcast_parameters(const DistributedContext& dist, const std::vector<at::Tensor>& tensors,
                          size_t bucket_bytes) {
  if (!dist.is_distributed()) return;
  at::NoGradGuard no_grad;
  for_each_bucket(tensors, bucket_bytes, [&](at::Tensor& flat) {
    std::vector<at::Tensor> one = {flat};
    dist.broadcast(one);
  });
}

}  // namespace lmk
