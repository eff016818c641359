#pragma once

// Data-parallel training across processes with PyTorch's c10d: one process per device (or per
// CPU share), joined through a c10d::TCPStore that rank 0 serves, collectives over Gloo (CPU)
// or NCCL (CUDA, when the LibTorch build has it). The launcher's variables say where a process
// stands (core/dist/launcher_env.h, included here): torchrun's (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT) or srun's (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
// SLURM_JOB_NODELIST, SLURM_JOB_ID). Without them (or with a world of one) a run is a single
// process: no process group, and every collective below returns at once.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/dist/launcher_env.h"

namespace lmk {

// The device a process computes on (training, and evaluation under a launcher), resolved in
// this one place and recorded so: parse_device(name) (an InputError naming `option`); plain
// "cuda" is cuda:LOCAL_RANK under a launcher of several processes (one process per GPU), else
// cuda:0; under a launcher an explicit cuda:N must be cuda:LOCAL_RANK, the GPU the NCCL process
// group binds the process to (DistributedContext::join), so the two never disagree. Called by
// the commands before any work, so a bad device is exit 2 at once.
c10::Device process_device(const std::string& name, const std::string& option,
                           const DistributedEnv& env);
// The same with the launcher's variables of this process (read_distributed_env).
c10::Device process_device(const std::string& name, const std::string& option = "device");

// This process's place in a run and the process group it shares with the others.
class DistributedContext {
 public:
  // A single process (world size 1, no process group).
  DistributedContext();
  // Joins the run `env` describes: rank 0 serves the TCPStore, every rank connects, then the
  // process group forms (Gloo on the CPU; NCCL when `cuda`, from the CUDA module, on the GPU of
  // the process's LOCAL_RANK: an InputError before the rendezvous where this build has no CUDA
  // module or that GPU is missing). A world of one joins nothing. Waiting longer than
  // env.rendezvous_timeout_s for the others is an error that says who was waited for and where.
  static DistributedContext join(const DistributedEnv& env, bool cuda = false);
  // The process's context from the launcher's variables (read_distributed_env, then join).
  static DistributedContext from_environment(bool cuda = false);
  // A shared single-process context (the default for code that runs without a launcher).
  static const DistributedContext& single_process();

  ~DistributedContext();
  DistributedContext(DistributedContext&&) noexcept;
  DistributedContext& operator=(DistributedContext&&) noexcept;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int local_rank() const { return local_rank_; }
  // True for rank 0, the process that writes files, the store and progress.
  bool is_main() const { return rank_ == 0; }
  // True when there are other processes (a process group exists).
  bool is_distributed() const { return world_size_ > 1; }

  // Sums a dense tensor over all processes, in place.
  void all_reduce_sum(at::Tensor& tensor) const;
  // The sum over all processes of one number each.
  double sum(double value) const;
  // Replaces each tensor by rank 0's value, in place.
  void broadcast(std::vector<at::Tensor>& tensors) const;
  // Every process's tensor (equal shapes) concatenated along dimension 0, in rank order.
  at::Tensor all_gather(const at::Tensor& tensor) const;
  // Returns when every process has called it.
  void barrier() const;

 private:
  struct Impl;
  int rank_ = 0, world_size_ = 1, local_rank_ = 0;
  std::unique_ptr<Impl> impl_;
};

// Gathers `local` [R, ...] from every process into [world_size * R, ...] (rank order) with a
// gradient: backward sums the incoming gradient over all processes and returns this process's
// rows. Used for cross-device negatives; the result is the gradient of the sum of every
// process's loss (see the .cpp for why that, and not the "replace the local slice" trick).
at::Tensor all_gather_with_gradient(const DistributedContext& dist, const at::Tensor& local);

// Averages the gradients of `parameters` over all processes: flattened into buckets of about
// bucket_bytes, each bucket summed in one all-reduce, divided by the world size and copied back.
// A gradient that no process has stays undefined (the optimizer skips it as in one process);
// one that some process lacks counts as zeros there.
void average_gradients(const DistributedContext& dist, const std::vector<at::Tensor>& parameters,
                       size_t bucket_bytes = 25u << 20);

// Copies rank 0's values of `tensors` (parameters) to every process, in buckets.
void broadcast_parameters(const DistributedContext& dist, const std::vector<at::Tensor>& tensors,
                          size_t bucket_bytes = 25u << 20);

}  // namespace lmk
