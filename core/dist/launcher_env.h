#pragma once

// Where a process stands in a distributed run, read from its launcher's variables: torchrun's
// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or srun's (SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID, SLURM_JOB_NODELIST, SLURM_JOB_ID), and Slurm's hostlists. No
// LibTorch here (host_name() is core/util/runtime.h's): the process group that joins the
// processes is engine/dist/distributed.h.

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace lmk {

// Where this process stands in a run, as the launcher's variables describe it.
struct DistributedEnv {
  int rank = 0, world_size = 1, local_rank = 0;
  std::string launcher;  // "torchrun", "srun", or "" for a single process
  std::string master_addr;
  int master_port = 0;
  bool single_host = true;             // every process runs on this machine
  double rendezvous_timeout_s = 300;   // $LMK_DIST_TIMEOUT_S
  double collective_timeout_s = 1800;  // $LMK_DIST_COLLECTIVE_TIMEOUT_S
  std::string gloo_interfaces;         // $GLOO_SOCKET_IFNAME (comma-separated)
};

// Reads the launcher's variables through `lookup` (a variable's value, or null when unset):
// torchrun's when RANK or WORLD_SIZE is set, else srun's when SLURM_PROCID and SLURM_NTASKS
// are, else a single process. MASTER_ADDR / MASTER_PORT override srun's defaults (the first host
// of SLURM_JOB_NODELIST; port 20000 + SLURM_JOB_ID % 20000). Also the timeouts and Gloo's
// interfaces (the fields' comments). A missing, non-numeric, out-of-range or inconsistent
// value (RANK >= WORLD_SIZE) is an InputError naming the variable.
DistributedEnv read_distributed_env(const std::function<const char*(const char*)>& lookup);
// The same from this process's environment.
DistributedEnv read_distributed_env();

// The hosts of a Slurm hostlist ("node[01-04,07],gpu5" -> node01 node02 node03 node04 node07
// gpu5; zero padding kept; several bracket groups in one name multiply). Bad syntax, or more
// than max_hosts names, is an InputError naming `where`.
std::vector<std::string> expand_slurm_hostlist(const std::string& hostlist,
                                               const std::string& where = "SLURM_JOB_NODELIST",
                                               size_t max_hosts = 1'000'000);
// The first host of a Slurm hostlist (without expanding the rest).
std::string first_slurm_host(const std::string& hostlist,
                             const std::string& where = "SLURM_JOB_NODELIST");

}  // namespace lmk
