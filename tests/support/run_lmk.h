#pragma once

// Runs the built lmk binary from CLI tests: exit code and everything it printed.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "tests/support/test_tokenizers.h"

namespace lmk::testing {

struct Result {
  int code;
  std::string output;  // stdout and stderr
};

// Runs `lmk ARGS` (a shell fragment) with stdin from `input` and `env` assignments in front.
inline Result run_lmk(const std::string& args, const std::string& input = "",
                      const std::string& env = "") {
  TempDir dir;
  const std::string in = dir.write("stdin.txt", input);
  const std::string command =
      env + " " + std::string(LMK_BINARY_DIR) + "/app/lmk " + args + " < " + in + " 2>&1";
  Result r{-1, ""};
  FILE* pipe = popen(command.c_str(), "r");
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) r.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace lmk::testing
