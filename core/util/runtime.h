#pragma once

// Process-wide settings and facts every lmk process may need; no LibTorch here (the thread count
// and the BLAS are in engine/util/torch_runtime.h).

#include <string>
#include <utility>
#include <vector>

namespace lmk {

// Keeps freed activation memory mapped (glibc otherwise unmaps every multi-MB block, and each
// forward pass page-faults its activations in again: up to 3x slower on long inputs here).
void configure_memory();

// "OMP_WAIT_POLICY=..." as this process has it ("unset" when unset), for benchmark headers.
// lmk leaves libgomp's waiting as it is: with one OpenMP runtime for LibTorch, MKL and lmk's
// kernels, its default (spin a while, then sleep) measured faster than PASSIVE
// (docs/BENCHMARKS.md, LibTorch 2.11).
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

}  // namespace lmk
