// Child processes (core/util/process.h): posix_spawn from a ChildSpec (file actions, signal and
// group attributes, the environment), and the wait for its end with captured output and a
// deadline.
#include "core/util/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/util/error.h"
#include "core/util/file.h"

extern char** environ;

namespace lmk {

namespace {

using Clock = std::chrono::steady_clock;

std::string name_of(const ChildSpec& spec) {
  return spec.name.empty() ? spec.argv.front() : spec.name;
}

// A file descriptor, closed when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Moves a descriptor above 0-2 (this process's stdin, stdout or stderr may be closed, and the
// child's are replaced one after another: a copy must not land on one that is replaced later).
int above_stdio(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int error = errno;
  ::close(fd);
  errno = error;
  return moved;
}

void open_log(const ChildSpec& spec, Fd& log) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (spec.append ? O_APPEND : O_TRUNC);
  log.reset(above_stdio(::open(spec.log_path.c_str(), flags, 0644)));
  if (log.get() < 0) throw input_error(spec.log_path, "cannot write the log of " + name_of(spec));
  // As the fork()-based launchers did: what this process has buffered is written out first.
  std::fflush(nullptr);
}

void open_pipe(const ChildSpec& spec, Fd& read_end, Fd& write_end) {
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0)
    throw InputError("cannot create a pipe for " + name_of(spec) + ": " + std::strerror(errno));
  read_end.reset(above_stdio(ends[0]));
  write_end.reset(above_stdio(ends[1]));
  if (read_end.get() < 0 || write_end.get() < 0)
    throw InputError("cannot create a pipe for " + name_of(spec) + ": " + std::strerror(errno));
}

// Starts the child with stdout on out_fd and stderr on err_fd (both above 2, close-on-exec
// here: the copies the child gets are not); 0 and its pid, or the errno of the failed start.
// With CLONE_VFORK underneath, an exec that fails is reported here, not by the child.
int spawn(const ChildSpec& spec, int out_fd, int err_fd, pid_t& pid) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (std::none_of(spec.env.begin(), spec.env.end(),
                     [&](const auto& kv) { return kv.first == name; }))
      environment.push_back(entry);
  }
  for (const auto& [name, value] : spec.env) environment.push_back(name + "=" + value);
  std::vector<char*> envp, args;
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv = spec.argv;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  short flags = 0;
  if (!spec.default_signals.empty()) {
    sigset_t defaults, none;
    sigemptyset(&defaults);
    for (int s : spec.default_signals) sigaddset(&defaults, s);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &none);
    flags |= POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  }
  if (spec.group == ChildSpec::Group::Own) {
    posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  } else if (spec.group == ChildSpec::Group::Session) {
    flags |= POSIX_SPAWN_SETSID;  // glibc >= 2.26
  }
  posix_spawnattr_setflags(&attr, flags);
  const bool search = spec.argv.front().find('/') == std::string::npos;
  const int error = search
                        ? ::posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data())
                        : ::posix_spawn(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return error;
}

}  // namespace

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  return 128 + (WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
}

bool append_to_log(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  (void)!::write(fd, text.data(), text.size());
  ::close(fd);
  return true;
}

pid_t start_child(const ChildSpec& spec) {
  if (spec.argv.empty() || spec.log_path.empty())
    throw std::logic_error("start_child: a program and a log file are needed");
  Fd log;
  open_log(spec, log);
  pid_t pid = -1;
  const int error = spawn(spec, log.get(), log.get(), pid);
  if (error != 0)
    throw InputError("cannot start a process for " + name_of(spec) + ": " + spec.argv.front() +
                     ": " + std::strerror(error));
  return pid;
}

ChildResult run_child(const ChildSpec& spec, double timeout_s, const std::function<void()>& on_wait,
                      double wait_step_s) {
  if (spec.argv.empty()) throw std::logic_error("run_child: no program");
  ChildResult result;
  const bool capture = spec.log_path.empty();
  Fd log, reads[2], writes[2];
  if (capture) {
    open_pipe(spec, reads[0], writes[0]);
    open_pipe(spec, reads[1], writes[1]);
  } else {
    open_log(spec, log);
  }
  pid_t pid = -1;
  const int error = capture ? spawn(spec, writes[0].get(), writes[1].get(), pid)
                            : spawn(spec, log.get(), log.get(), pid);
  // The child has its copies: the pipes see EOF when it (and whatever it started) is done.
  log.reset();
  writes[0].reset();
  writes[1].reset();
  if (error != 0) {
    result.spawn_error = error;
    return result;
  }

  // Infinity (or any number of years) is no deadline; NaN neither.
  const bool bounded = timeout_s < 1e9;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(bounded ? std::max(0.0, timeout_s) : 0.0));
  const auto left_ms = [&]() -> int64_t {
    if (!bounded) return INT64_MAX;
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  };
  const int64_t step_ms = std::max<int64_t>(1, static_cast<int64_t>(wait_step_s * 1000));

  // The output until EOF on both pipes.
  pollfd fds[2] = {{reads[0].get(), POLLIN, 0}, {reads[1].get(), POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = capture ? 2 : 0;
  char buffer[4096];
  while (open_fds > 0) {
    const int64_t left = left_ms();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(std::min(left, step_ms)));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        reads[i].reset();
        fds[i].fd = -1;
        --open_fds;
      }
    }
    if (on_wait) on_wait();
  }

  // Its output is closed (or goes to the log); the process itself gets until the deadline to
  // exit. Checks come quickly at first (a command whose output ended is about to exit), then
  // every wait_step_s.
  int status = 0;
  auto pause = std::chrono::milliseconds(1);
  while (!result.timed_out) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      result.code = exit_code_of(status);
      break;
    }
    if (done < 0 && errno != EINTR) throw InputError("lost the process of " + name_of(spec));
    const int64_t left = left_ms();
    if (left <= 0) {
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::min(pause, std::chrono::milliseconds(left)));
    pause = std::min(pause * 2, std::chrono::milliseconds(step_ms));
    if (on_wait) on_wait();
  }
  if (result.timed_out) {
    if (spec.group != ChildSpec::Group::Same) ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    pid_t reaped;
    while ((reaped = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (reaped == pid) result.code = exit_code_of(status);
  }
  return result;
}

std::string process_start_time(int64_t pid) {
  std::string stat;
  try {
    stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  } catch (const std::exception&) {
    return "";
  }
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 3 && field == "Z") return "";  // a zombie has ended
    if (i == 22) return field;
  }
  return "";
}

}  // namespace lmk
