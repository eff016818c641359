#pragma once

#include <string>
#include <utility>
#include <vector>

namespace lmk {

// The BLAS library LibTorch's matrix products run on.
struct BlasInfo {
  std::string library;     // resolved path of the loaded libblas ("" when none is loaded)
  bool optimized = false;  // false for the reference BLAS (~25x slower on this kind of CPU)
  // OpenBLAS's own threading: "pthreads", "openmp", "sequential", or "" when not OpenBLAS.
  // The OpenMP build is 2-3x slower in the fused attention kernel (docs/BENCHMARKS.md).
  std::string threading;
};

// Finds the BLAS library loaded into this process.
BlasInfo detect_blas();

// Sets LibTorch's intra-op thread count: `threads` when > 0, else $LMK_THREADS when set, else
// all cores (Debian's LibTorch starts with one), divided by $LOCAL_WORLD_SIZE when a launcher
// (torchrun) started several processes on this machine. Returns the count in effect.
int configure_threads(int threads = 0);

// Keeps freed activation memory mapped (glibc otherwise unmaps every multi-MB block, and each
// forward pass page-faults its activations in again: up to 3x slower on long inputs here).
void configure_memory();

// Makes idle worker threads sleep instead of spinning against the threads doing the work on
// the two cores: OpenMP's (OMP_WAIT_POLICY=PASSIVE; measured 1.3-2x slower otherwise) and
// OpenBLAS's pthreads (OPENBLAS_THREAD_TIMEOUT=4: an idle OpenBLAS thread yields for 2^4
// cycles, not 2^28, before it sleeps; 2048-token forwards ~25 % and 512-token training steps
// 12-20 % faster, long inputs 0-8 %: docs/BENCHMARKS.md). Both libraries read their variable when
// loaded, before main(): when either is unset, this sets the unset ones (a user's own values stay)
// and re-executes the program (argv as given). Returns only when no re-execution happened.
void prefer_passive_waiting(char** argv);
// The assignments prefer_passive_waiting makes: the variables above that are unset now.
std::vector<std::pair<std::string, std::string>> passive_waiting_environment();
// "OMP_WAIT_POLICY=..., OPENBLAS_THREAD_TIMEOUT=..." as this process has them ("unset" when
// unset), for benchmark headers.
std::string waiting_settings();

// This machine's host name ("" when it cannot be read), recorded with every run in the store.
std::string host_name();
// The git revision (commit hash) of the source tree this binary was built from, read from its
// .git at run time; "" when it was not built from a checkout or the checkout is gone.
std::string code_revision();

// Graceful stop of long commands (lmk train, lmk pretrain): SIGTERM (Slurm's scancel and
// time limit, kill), SIGINT (Ctrl-C) and SIGUSR1 (sbatch --signal) only record that a stop was
// asked for; the command checks stop_requested() where it can save its state and stop. A
// second SIGINT ends the process at once with exit code 130.
void install_stop_signals();
// True once one of those signals arrived (after install_stop_signals).
bool stop_requested();
// The first signal that asked to stop (SIGTERM, SIGINT or SIGUSR1), 0 when none did.
int stop_signal();

// Returns a warning to print at start-up when LibTorch runs on the reference BLAS, else "".
std::string slow_blas_warning(const BlasInfo& blas);

}  // namespace lmk
