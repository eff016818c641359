#pragma once

// Runs the built lmk binary from CLI tests: exit code and everything it printed.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/shell.h"
#include "tests/support/test_tokenizers.h"

namespace lmk::testing {

using Result = ShellResult;

// Environment for the tests' lmk processes: one thread (the tests run two at a time on the two
// cores). kQuickEnv is the same as shell assignments (run_lmk's env).
inline const std::vector<std::string> kQuickEnvironment = {"LMK_THREADS=1"};
inline const std::string kQuickEnv = [] {
  std::string env;
  for (const std::string& assignment : kQuickEnvironment)
    env += (env.empty() ? "" : " ") + assignment;
  return env;
}();

// Runs the build tree's `program ARGS` (a shell fragment; program relative to the build folder)
// with stdin from `input` and `env` assignments in front.
inline Result run_built(const std::string& program, const std::string& args,
                        const std::string& input = "", const std::string& env = "") {
  TempDir dir;
  const std::string in = dir.write("stdin.txt", input);
  return run_shell(env + " " + std::string(LMK_BINARY_DIR) + "/" + program + " " + args + " < " +
                   in);
}

// Runs `lmk ARGS` (a shell fragment) with stdin from `input` and `env` assignments in front.
inline Result run_lmk(const std::string& args, const std::string& input = "",
                      const std::string& env = "") {
  return run_built("app/lmk", args, input, env);
}

// Starts `lmk ARGS` in the background with `env` ("NAME=value") added to this process's
// environment and kQuickEnv's settings, stdout and stderr into files; returns its pid (signal
// it, then wait_lmk).
inline pid_t start_lmk(const std::vector<std::string>& args, const std::vector<std::string>& env,
                       const std::string& stdout_file, const std::string& stderr_file) {
  // Everything the child needs is built before fork(): it only opens files and execs.
  const std::string lmk = std::string(LMK_BINARY_DIR) + "/app/lmk";
  std::vector<std::string> environment = kQuickEnvironment;
  environment.insert(environment.end(), env.begin(), env.end());
  for (char** e = environ; *e; ++e) environment.emplace_back(*e);  // earlier entries win
  std::vector<char*> argv = {const_cast<char*>(lmk.c_str())}, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execve(lmk.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

// The exit code of a process started by start_lmk (128 + signal when a signal ended it).
inline int wait_lmk(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Waits until `file` contains `text` (true), or `pid` has ended or `timeout` passed (false).
inline bool wait_for_text(const std::string& file, const std::string& text, pid_t pid,
                          std::chrono::seconds timeout = std::chrono::seconds(120)) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    if (content.str().find(text) != std::string::npos) return true;
    siginfo_t info = {};
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
        info.si_pid != 0) {
      // Ended (or not our child): one last look, then give up.
      std::ifstream again(file, std::ios::binary);
      std::stringstream last;
      last << again.rdbuf();
      return last.str().find(text) != std::string::npos;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace lmk::testing
