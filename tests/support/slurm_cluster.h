#pragma once

// A real single-node Slurm cluster for tests: tests/support/slurm_cluster.sh started in a fresh
// temporary folder by the constructor and stopped by the destructor (daemons, munged and any
// job processes left) or, if the test process crashes or is killed, by the script's watcher,
// so a failing test leaves nothing running. Client commands go through
// run(), which points them at this cluster (SLURM_CONF). Configuration: docs/ARCHITECTURE.md,
// "Slurm in tests".

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include "tests/support/shell.h"

namespace lmk::testing {

class SlurmCluster {
 public:
  // Empty when the cluster can be started here, else why not (for GTEST_SKIP).
  static std::string unavailable() {
    if (run_shell("export PATH=$PATH:/usr/sbin:/sbin && command -v slurmctld && command -v slurmd "
                  "&& command -v munged && command -v sbatch")
            .code != 0)
      return "Slurm is not installed (scripts/setup installs slurmctld, slurmd, slurm-client and "
             "munge)";
    return "";
  }

  // Starts the cluster; throws std::runtime_error with the script's output (log tails) if the
  // node does not come up.
  SlurmCluster() {
    std::string pattern = (std::filesystem::temp_directory_path() / "lmk-slurm-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    std::filesystem::create_directories(work());
    const auto start = std::chrono::steady_clock::now();
    // The script's watcher stops the cluster if this process dies without running ~SlurmCluster.
    const ShellResult r = run_shell("LMK_SLURM_OWNER_PID=" + std::to_string(::getpid()) + " " +
                                    script() + " start " + dir_.string());
    start_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (r.code != 0) {
      stop();
      throw std::runtime_error("slurm_cluster.sh start failed (exit " + std::to_string(r.code) +
                               "):\n" + r.output);
    }
  }
  ~SlurmCluster() {
    stop();
    std::error_code ec;
    if (std::getenv("LMK_KEEP_SLURM_DIR") == nullptr) std::filesystem::remove_all(dir_, ec);
  }
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path conf() const { return dir_ / "slurm.conf"; }
  std::filesystem::path work() const { return dir_ / "work"; }  // jobs' default folder
  double start_seconds() const { return start_seconds_; }

  // Runs a command line against this cluster (SLURM_CONF set), in work().
  ShellResult run(const std::string& command) const {
    return run_shell("cd " + work().string() + " && export SLURM_CONF=" + conf().string() + " && " +
                     command);
  }

  // sbatch ARGS (--parsable added); the job id, or throws with sbatch's output.
  std::string submit(const std::string& args) const {
    const ShellResult r = run("sbatch --parsable " + args);
    std::string id = r.output.substr(0, r.output.find_first_of(";\n"));
    if (r.code != 0 || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
      throw std::runtime_error("sbatch " + args + " failed:\n" + r.output);
    return id;
  }

  // The job's state as squeue shows it (finished jobs stay visible for MinJobAge = 300 s):
  // PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, ...; empty if squeue does not know it.
  std::string state(const std::string& id) const {
    std::string s = run("squeue -h -t all -j " + id + " -o %T").output;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  // Polls until the job's state is one of `states` (space-separated) or `timeout` passes;
  // returns the last state seen.
  std::string wait_for(const std::string& id, const std::string& states,
                       std::chrono::seconds timeout = std::chrono::seconds(30)) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string s;
    for (;;) {
      s = state(id);
      if (!s.empty() && (" " + states + " ").find(" " + s + " ") != std::string::npos) return s;
      if (std::chrono::steady_clock::now() > deadline) return s;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  // The last lines of the daemons' logs, for failure messages.
  std::string logs() const {
    return run_shell("cd " + (dir_ / "log").string() +
                     " && for f in *.log; do echo \"--- $f\"; tail -n 20 \"$f\"; done")
        .output;
  }

  // Stops the daemons (also done by the destructor); the folder stays.
  ShellResult stop() const { return run_shell(script() + " stop " + dir_.string()); }

 private:
  static std::string script() {
    return std::string(LMK_SOURCE_DIR) + "/tests/support/slurm_cluster.sh";
  }

  std::filesystem::path dir_;
  double start_seconds_ = 0;
};

}  // namespace lmk::testing
