// Child processes: the one way lmk starts a program (posix_spawn) — the study's steps, the local
// queue's jobs and the Slurm commands. stdin is /dev/null; stdout and stderr are captured or go
// to a log file; the environment is this process's with some names set; the child stays in the
// caller's process group or gets a group or a session of its own.
#pragma once

#include <sys/types.h>

#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace lmk {

struct ChildSpec {
  // The program and its arguments; an argv[0] without '/' is looked up on PATH (as sh does).
  std::vector<std::string> argv;
  // Set over this process's environment (an entry of the same name is replaced).
  std::vector<std::pair<std::string, std::string>> env;
  // Empty: stdout and stderr are captured (run_child only). Else both go to this file, opened
  // in the parent (created 0644) before the child starts: emptied first, or appended to.
  std::string log_path;
  bool append = false;
  // Same: the caller's process group (a Ctrl-C on its terminal reaches the child too). Own: a
  // group whose id is the child's pid, so kill(-pid) reaches everything it started. Session: a
  // session (and group) of its own, without a controlling terminal.
  enum class Group { Same, Own, Session };
  Group group = Group::Same;
  // Signals reset to SIG_DFL in the child, so that the caller's ignored ones are not inherited
  // (handlers are reset anyway). When given, the child also starts with no signal blocked.
  std::vector<int> default_signals;
  // Names the child in error messages ("job 12"); argv[0] when empty.
  std::string name;
};

struct ChildResult {
  int code = -1;           // exit status, or 128 + signal; -1 when it did not start
  int spawn_error = 0;     // errno of a start that failed (ENOENT: no such program)
  bool timed_out = false;  // killed at the deadline (SIGKILL, its group too unless Group::Same)
  std::string out, err;    // captured output (empty with a log file)
};

// Starts the child with its output in spec.log_path and returns its pid; the caller reaps it
// (waitpid). Throws InputError when the log cannot be opened or the program cannot be started
// (not found, not executable, no process left: the message says which).
pid_t start_child(const ChildSpec& spec);

// Runs the child to its end, capturing its output (or writing it to spec.log_path), and kills
// it after timeout_s seconds (infinity: never). on_wait runs while it waits, at least every
// wait_step_s seconds. A start that fails comes back as spawn_error; throws InputError when the
// log or the pipes cannot be opened, or when the child is lost (reaped by someone else).
ChildResult run_child(const ChildSpec& spec,
                      double timeout_s = std::numeric_limits<double>::infinity(),
                      const std::function<void()>& on_wait = {}, double wait_step_s = 0.1);

// The exit code a shell would show for a waitpid status: the exit status, or 128 + signal.
int exit_code_of(int wait_status);

// The start time of a process (field 22 of /proc/PID/stat), "" when there is none (or it is a
// zombie): with its pid, what tells a process from a later one that reuses the pid.
std::string process_start_time(int64_t pid);

// Appends text to a log file (created 0644 when missing): a line the caller adds to a child's
// log (a header, why the child did not start). False when the file cannot be opened.
bool append_to_log(const std::string& path, const std::string& text);

}  // namespace lmk
