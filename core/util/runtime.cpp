#include "core/util/runtime.h"
#include "core/util/file.h"

#include <ATen/Parallel.h>

#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace lmk {

namespace {

// The first stop signal; written only by the handler, which may run on any thread.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void record_stop_signal(int signal) {
  if (signal == SIGINT && g_stop_signal != 0) ::_exit(130);  // Ctrl-C twice: stop now
  if (g_stop_signal == 0) g_stop_signal = signal;
}

}  // namespace

void install_stop_signals() {
  struct sigaction action = {};
  action.sa_handler = record_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads, writes and sockets (Gloo) carry on
  for (int signal : {SIGTERM, SIGINT, SIGUSR1}) ::sigaction(signal, &action, nullptr);
}

bool stop_requested() {
  return g_stop_signal != 0;
}

int stop_signal() {
  return g_stop_signal;
}

BlasInfo detect_blas() {
  // LibTorch calls sgemm_ from the generic libblas.so.3, which the alternatives system (or
  // LD_LIBRARY_PATH) points at one provider; asking the dynamic linker which library defines
  // sgemm_ names the one that really runs, even when several BLAS libraries are loaded.
  BlasInfo info;
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info where;
  if (!sgemm || !dladdr(sgemm, &where) || !where.dli_fname) return info;
  std::error_code ec;
  const auto resolved = std::filesystem::canonical(where.dli_fname, ec);
  info.library = ec ? std::string(where.dli_fname) : resolved.string();
  for (const char* fast : {"openblas", "mkl", "blis", "atlas"}) {
    if (info.library.find(fast) != std::string::npos) info.optimized = true;
  }
  // Debian's libblas.so.3 from openblas-openmp can still run the pthreads core underneath
  // (libopenblas.so.0 is a separate alternative): ask the core itself.
  if (const auto parallel =
          reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_parallel"))) {
    const int mode = parallel();
    info.threading = mode == 1 ? "pthreads" : mode == 2 ? "openmp" : "sequential";
  }
  return info;
}

int configure_threads(int threads) {
  if (threads <= 0) {
    if (const char* env = std::getenv("LMK_THREADS")) threads = std::atoi(env);
  }
  if (threads <= 0) {
    // torchrun starts LOCAL_WORLD_SIZE processes on this machine: each takes its share.
    int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (const char* local = std::getenv("LOCAL_WORLD_SIZE")) cores /= std::max(1, std::atoi(local));
    threads = std::max(1, cores);
  }
  at::set_num_threads(threads);
  return at::get_num_threads();
}

void configure_memory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

namespace {
constexpr std::pair<const char*, const char*> kPassiveWaiting[] = {
    {"OMP_WAIT_POLICY", "PASSIVE"}, {"OPENBLAS_THREAD_TIMEOUT", "4"}};
}  // namespace

std::vector<std::pair<std::string, std::string>> passive_waiting_environment() {
  std::vector<std::pair<std::string, std::string>> unset;
  for (const auto& [name, value] : kPassiveWaiting)
    if (!std::getenv(name)) unset.emplace_back(name, value);
  return unset;
}

std::string waiting_settings() {
  std::string out;
  for (const auto& [name, value] : kPassiveWaiting) {
    const char* now = std::getenv(name);
    out += (out.empty() ? "" : ", ") + std::string(name) + "=" + (now ? now : "unset");
  }
  return out;
}

void prefer_passive_waiting(char** argv) {
  const auto unset = passive_waiting_environment();
  if (unset.empty()) return;
  for (const auto& [name, value] : unset) ::setenv(name.c_str(), value.c_str(), 1);
  ::execv("/proc/self/exe", argv);
  // exec failed: carry on with the libraries' own waiting.
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : "";
}

std::string slow_blas_warning(const BlasInfo& blas) {
  if (blas.optimized && blas.threading == "openmp") {
    return "warning: OpenBLAS runs its OpenMP build: the attention kernel runs 2-3x slower than "
           "with the pthreads build. Run scripts/setup, or: update-alternatives --set "
           "libopenblas.so.0-x86_64-linux-gnu "
           "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0";
  }
  if (blas.library.empty() || blas.optimized) return "";
  return "warning: LibTorch is using the reference BLAS (" + blas.library +
         "): matrix products run ~25x slower. Run scripts/setup, or make OpenBLAS the active "
         "libblas: update-alternatives --set libblas.so.3-x86_64-linux-gnu "
         "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3";
}

std::string code_revision() {
#ifdef LMK_SOURCE_DIR
  namespace fs = std::filesystem;
  const fs::path head = fs::path(LMK_SOURCE_DIR) / ".git" / "HEAD";
  std::error_code ec;
  if (!fs::exists(head, ec)) return "";
  std::string ref = read_file(head.string());
  while (!ref.empty() && (ref.back() == '\n' || ref.back() == '\r')) ref.pop_back();
  if (ref.rfind("ref: ", 0) == 0) {
    const fs::path target = fs::path(LMK_SOURCE_DIR) / ".git" / ref.substr(5);
    if (!fs::exists(target, ec)) return "";
    ref = read_file(target.string());
    while (!ref.empty() && (ref.back() == '\n' || ref.back() == '\r')) ref.pop_back();
  }
  return ref;
#else
  return "";
#endif
}

}  // namespace lmk
