#pragma once

// Runs shell command lines from tests: exit code and everything printed.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace lmk::testing {

struct ShellResult {
  int code;
  std::string output;  // stdout and stderr
};

// Runs a /bin/sh command line (stdin /dev/null unless the line redirects it): its exit code
// (128 + signal when a signal ended it), stdout and stderr.
inline ShellResult run_shell(const std::string& command) {
  ShellResult r{-1, ""};
  FILE* pipe = ::popen(("(" + command + ") < /dev/null 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    r.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace lmk::testing
