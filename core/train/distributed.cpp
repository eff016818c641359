#include "core/train/distributed.h"

// LibTorch's c10d headers compile the Gloo (and NCCL) process groups only when asked; Debian's
// libtorch_cpu.so exports ProcessGroupGloo and TCPStore (and links libgloo.so.0 itself), so no
// other library is linked for them. NCCL exists only in CUDA builds of LibTorch: CMake checks
// for it and defines LMK_WITH_NCCL (core/CMakeLists.txt).
#ifndef USE_C10D_GLOO
#define USE_C10D_GLOO
#endif
#if defined(LMK_WITH_NCCL) && !defined(USE_C10D_NCCL)
#define USE_C10D_NCCL
#endif

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef LMK_WITH_NCCL
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "core/util/error.h"
#include "core/util/runtime.h"

namespace lmk {

namespace {

// LibTorch 2.x splits a process group into a dispatching ProcessGroup and its backends
// (ProcessGroupGloo and ProcessGroupNCCL became backends); 1.13's process groups are the
// backends themselves. Either has the collectives used here with the same signatures.
#if TORCH_VERSION_MAJOR >= 2
using ProcessGroupType = c10d::Backend;
#else
using ProcessGroupType = c10d::ProcessGroup;
#endif

// An exception's message without LibTorch's C++ backtrace.
std::string message_of(const std::exception& e) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&e))
    return c10_error->what_without_backtrace();
  return e.what();
}

std::chrono::milliseconds milliseconds_of(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)));
}

// The integer in variable `name` (the whole text, base 10) within [low, high].
int64_t integer_variable(const char* name, const std::string& text, int64_t low, int64_t high) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    throw input_error(name, "'" + text + "' is not an integer");
  if (value < low || value > high) {
    throw input_error(name, text + " is out of range (" + std::to_string(low) + " to " +
                                std::to_string(high) + ")");
  }
  return value;
}

// A positive number of seconds in variable `name`.
double seconds_variable(const char* name, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(value > 0) || !std::isfinite(value))
    throw input_error(name, "'" + text + "' is not a positive number of seconds");
  return value;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

}  // namespace

// --- Slurm hostlists -------------------------------------------------------------------------

namespace {

// One bracket range "lo-hi" (or one number), printed with `width` digits (Slurm keeps the
// zero padding of the lower bound: "01-10" -> 01 02 ... 10).
struct NumberRange {
  uint64_t low = 0, high = 0;
  size_t width = 0;
};

// A host name pattern: literal text and bracket groups, in order ("rack[1-2]-n[01-04]").
struct HostPattern {
  std::vector<std::string> literals;             // literals[i] comes before groups[i]
  std::vector<std::vector<NumberRange>> groups;  // one more literal than groups
};

std::string padded(uint64_t number, size_t width) {
  std::string text = std::to_string(number);
  if (text.size() < width) text.insert(0, width - text.size(), '0');
  return text;
}

uint64_t parse_bound(const std::string& text, const std::string& where, const std::string& list) {
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    throw input_error(where, "'" + list + "': '" + text + "' is not a number in a host range");
  return value;
}

// Splits a hostlist at the commas outside brackets and parses each name pattern.
std::vector<HostPattern> parse_hostlist(const std::string& list, const std::string& where) {
  std::vector<HostPattern> patterns;
  HostPattern current;
  current.literals.emplace_back();
  size_t i = 0;
  auto finish = [&] {
    if (current.groups.empty() && current.literals.back().empty())
      throw input_error(where, "'" + list + "': an empty host name");
    patterns.push_back(std::move(current));
    current = HostPattern();
    current.literals.emplace_back();
  };
  while (i < list.size()) {
    const char c = list[i];
    if (c == ',') {
      finish();
      ++i;
    } else if (c == '[') {
      const size_t close = list.find(']', i);
      if (close == std::string::npos) throw input_error(where, "'" + list + "': '[' without ']'");
      std::vector<NumberRange> ranges;
      const std::string inside = list.substr(i + 1, close - i - 1);
      size_t start = 0;
      while (start <= inside.size()) {
        const size_t comma = std::min(inside.find(',', start), inside.size());
        const std::string item = inside.substr(start, comma - start);
        const size_t dash = item.find('-');
        NumberRange range;
        const std::string low = item.substr(0, dash);
        range.low = parse_bound(low, where, list);
        range.high =
            dash == std::string::npos ? range.low : parse_bound(item.substr(dash + 1), where, list);
        range.width = low.size();
        if (range.high < range.low)
          throw input_error(where, "'" + list + "': the range " + item + " runs backwards");
        ranges.push_back(range);
        start = comma + 1;
      }
      current.groups.push_back(std::move(ranges));
      current.literals.emplace_back();
      i = close + 1;
    } else if (c == ']' || std::isspace(static_cast<unsigned char>(c))) {
      throw input_error(where, "'" + list + "': unexpected '" + std::string(1, c) + "'");
    } else {
      current.literals.back() += c;
      ++i;
    }
  }
  finish();
  return patterns;
}

}  // namespace

std::vector<std::string> expand_slurm_hostlist(const std::string& hostlist,
                                               const std::string& where, size_t max_hosts) {
  std::vector<std::string> hosts;
  for (const HostPattern& pattern : parse_hostlist(hostlist, where)) {
    // The names of one pattern: every combination of its groups, the last group fastest.
    std::vector<std::string> names = {pattern.literals[0]};
    for (size_t g = 0; g < pattern.groups.size(); ++g) {
      std::vector<std::string> longer;
      for (const std::string& prefix : names) {
        for (const NumberRange& range : pattern.groups[g]) {
          for (uint64_t n = range.low; n <= range.high; ++n) {
            if (hosts.size() + longer.size() >= max_hosts)
              throw input_error(where, "'" + hostlist + "' names more than " +
                                           std::to_string(max_hosts) + " hosts");
            longer.push_back(prefix + padded(n, range.width) + pattern.literals[g + 1]);
          }
        }
      }
      names = std::move(longer);
    }
    hosts.insert(hosts.end(), names.begin(), names.end());
  }
  return hosts;
}

std::string first_slurm_host(const std::string& hostlist, const std::string& where) {
  const HostPattern first = parse_hostlist(hostlist, where).front();
  std::string host = first.literals[0];
  for (size_t g = 0; g < first.groups.size(); ++g)
    host += padded(first.groups[g][0].low, first.groups[g][0].width) + first.literals[g + 1];
  return host;
}

// --- The launcher's variables ----------------------------------------------------------------

DistributedEnv read_distributed_env(const std::function<const char*(const char*)>& lookup) {
  auto get = [&](const char* name) -> std::optional<std::string> {
    const char* value = lookup(name);
    if (!value || !*value) return std::nullopt;
    return std::string(value);
  };
  constexpr int64_t kMaxWorld = 1 << 20;
  DistributedEnv env;
  if (const auto t = get("LMK_DIST_TIMEOUT_S"))
    env.rendezvous_timeout_s = seconds_variable("LMK_DIST_TIMEOUT_S", *t);
  if (const auto t = get("LMK_DIST_COLLECTIVE_TIMEOUT_S"))
    env.collective_timeout_s = seconds_variable("LMK_DIST_COLLECTIVE_TIMEOUT_S", *t);
  if (const auto names = get("GLOO_SOCKET_IFNAME")) env.gloo_interfaces = *names;

  const auto rank = get("RANK"), world = get("WORLD_SIZE");
  const auto slurm_rank = get("SLURM_PROCID"), slurm_world = get("SLURM_NTASKS");
  std::optional<bool> single_host;
  if (rank || world) {
    env.launcher = "torchrun";
    if (!world)
      throw input_error("WORLD_SIZE",
                        "not set, but RANK is (set both, or neither for one process)");
    env.world_size = static_cast<int>(integer_variable("WORLD_SIZE", *world, 1, kMaxWorld));
    if (!rank && env.world_size > 1)
      throw input_error("RANK", "not set, but WORLD_SIZE is " + *world);
    env.rank = rank ? static_cast<int>(integer_variable("RANK", *rank, 0, kMaxWorld)) : 0;
    if (env.rank >= env.world_size) {
      throw input_error("RANK", *rank + " is not below WORLD_SIZE (" + *world +
                                    "): ranks run from 0 to WORLD_SIZE - 1");
    }
    const auto local = get("LOCAL_RANK");
    env.local_rank =
        local ? static_cast<int>(integer_variable("LOCAL_RANK", *local, 0, kMaxWorld)) : env.rank;
    if (const auto local_world = get("LOCAL_WORLD_SIZE")) {
      const int64_t n = integer_variable("LOCAL_WORLD_SIZE", *local_world, 1, env.world_size);
      if (env.local_rank >= n)
        throw input_error("LOCAL_RANK", std::to_string(env.local_rank) +
                                            " is not below LOCAL_WORLD_SIZE (" + *local_world +
                                            ")");
      single_host = n == env.world_size;
    }
    if (env.world_size > 1) {
      const auto addr = get("MASTER_ADDR"), port = get("MASTER_PORT");
      if (!addr)
        throw input_error("MASTER_ADDR",
                          "not set: the host of rank 0 (WORLD_SIZE is " + *world + ")");
      if (!port) throw input_error("MASTER_PORT", "not set: the TCP port rank 0 listens on");
      env.master_addr = *addr;
      env.master_port = static_cast<int>(integer_variable("MASTER_PORT", *port, 1, 65535));
    }
  } else if (slurm_rank && slurm_world) {
    env.launcher = "srun";
    env.world_size = static_cast<int>(integer_variable("SLURM_NTASKS", *slurm_world, 1, kMaxWorld));
    env.rank = static_cast<int>(integer_variable("SLURM_PROCID", *slurm_rank, 0, kMaxWorld));
    if (env.rank >= env.world_size) {
      throw input_error("SLURM_PROCID",
                        *slurm_rank + " is not below SLURM_NTASKS (" + *slurm_world + ")");
    }
    if (const auto local = get("SLURM_LOCALID"))
      env.local_rank = static_cast<int>(integer_variable("SLURM_LOCALID", *local, 0, kMaxWorld));
    if (env.world_size > 1) {
      if (const auto addr = get("MASTER_ADDR")) {
        env.master_addr = *addr;
      } else if (const auto nodes = get("SLURM_JOB_NODELIST")) {
        env.master_addr = first_slurm_host(*nodes, "SLURM_JOB_NODELIST");
      } else if (const auto step_nodes = get("SLURM_NODELIST")) {
        env.master_addr = first_slurm_host(*step_nodes, "SLURM_NODELIST");
      } else {
        throw input_error("SLURM_JOB_NODELIST",
                          "not set: rank 0's host is unknown (set MASTER_ADDR)");
      }
      if (const auto port = get("MASTER_PORT")) {
        env.master_port = static_cast<int>(integer_variable("MASTER_PORT", *port, 1, 65535));
      } else if (const auto job = get("SLURM_JOB_ID")) {
        // A port per job, so two jobs sharing a node do not meet at one store.
        env.master_port =
            static_cast<int>(20000 + integer_variable("SLURM_JOB_ID", *job, 0, INT64_MAX) % 20000);
      } else {
        throw input_error("MASTER_PORT", "not set, and no SLURM_JOB_ID to derive it from");
      }
      for (const char* name : {"SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES", "SLURM_NNODES"}) {
        if (const auto nodes = get(name)) {
          single_host = integer_variable(name, *nodes, 1, kMaxWorld) == 1;
          break;
        }
      }
    }
  }
  if (env.world_size > 1) {
    env.single_host =
        single_host.value_or(is_loopback(env.master_addr) || env.master_addr == host_name());
  }
  return env;
}

DistributedEnv read_distributed_env() {
  return read_distributed_env([](const char* name) -> const char* { return std::getenv(name); });
}

// --- The process group -----------------------------------------------------------------------

struct DistributedContext::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<ProcessGroupType> group;
  at::Device device = at::kCPU;  // where sum() puts its numbers (NCCL reduces on the GPU)
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

bool nccl_available() {
#ifdef LMK_WITH_NCCL
  return true;
#else
  return false;
#endif
}

DistributedContext::DistributedContext() = default;
DistributedContext::~DistributedContext() = default;
DistributedContext::DistributedContext(DistributedContext&&) noexcept = default;
DistributedContext& DistributedContext::operator=(DistributedContext&&) noexcept = default;

const DistributedContext& DistributedContext::single_process() {
  static const DistributedContext context;
  return context;
}

DistributedContext DistributedContext::from_environment(bool cuda) {
  return join(read_distributed_env(), cuda);
}

DistributedContext DistributedContext::join(const DistributedEnv& env, bool cuda) {
  DistributedContext context;
  if (env.world_size <= 1) return context;
  if (cuda && !nccl_available()) {
    throw InputError(
        "distributed training on CUDA needs c10d's ProcessGroupNCCL, which this LibTorch build "
        "does not have (Debian's LibTorch is CPU-only): build against a CUDA LibTorch "
        "(docs/USER-GUIDE.md), or train on the CPU over Gloo");
  }
  const std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  const std::string who =
      "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size);
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
  try {
    if (cuda) {
#ifdef LMK_WITH_NCCL
      c10::cuda::set_device(static_cast<c10::DeviceIndex>(env.local_rank));
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = collective_timeout;
      impl->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl->store, env.rank,
                                                                env.world_size, options);
      impl->device = at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
#endif
    } else {
      auto options = c10d::ProcessGroupGloo::Options::create(collective_timeout);
      options->devices = gloo_devices(env);
      impl->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, env.rank,
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

void DistributedContext::all_reduce_sum(at::Tensor& tensor) const {
  if (!is_distributed()) return;
  TORCH_CHECK(tensor.is_contiguous(), "all_reduce_sum: a contiguous tensor expected");
  collective("all-reduce", [&] {
    std::vector<at::Tensor> tensors = {tensor};
    impl_->group->allreduce(tensors)->wait();
  });
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
      std::vector<at::Tensor> one = {tensor};
      impl_->group->broadcast(one)->wait();
    }
  });
}

at::Tensor DistributedContext::all_gather(const at::Tensor& tensor) const {
  if (!is_distributed()) return tensor;
  std::vector<at::Tensor> inputs = {tensor.contiguous()};
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < world_size_; ++r) outputs[0].push_back(at::empty_like(inputs[0]));
  collective("all-gather", [&] { impl_->group->allgather(outputs, inputs)->wait(); });
  return at::cat(outputs[0], 0);
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
