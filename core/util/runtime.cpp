#include "core/util/runtime.h"
#include "core/util/file.h"

#include <malloc.h>
#include <unistd.h>

#include <climits>
#include <csignal>
#include <cstdlib>
#include <filesystem>

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

void configure_memory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
}

std::string waiting_settings() {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  return std::string("OMP_WAIT_POLICY=") + (policy ? policy : "unset");
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : "";
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
