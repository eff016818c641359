// Tests of core/util/process (start_child, run_child): real child processes — output, exit
// codes, environment, PATH, timeouts, log files, process groups and sessions, signals.
#include "core/util/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

ChildResult sh(const std::string& script, ChildSpec spec = {}, double timeout_s = 10) {
  spec.argv = {"sh", "-c", script};
  return run_child(spec, timeout_s);
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Sets an environment variable for the scope, then restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(RunChild, CapturesStdoutAndStderrApartWithTheExitStatus) {
  const ChildResult r = sh("echo out; echo err >&2; echo more; exit 3");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.spawn_error, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "out\nmore\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(sh("exit 0").code, 0);
  // More than a pipe holds (64 KiB) on both: read while the child writes, not after.
  const ChildResult big = sh("head -c 300000 /dev/zero | tr '\\0' a; head -c 200000 /dev/zero >&2");
  EXPECT_EQ(big.code, 0);
  EXPECT_EQ(big.out, std::string(300000, 'a'));
  EXPECT_EQ(big.err.size(), 200000u);
}

TEST(RunChild, AKillingSignalIs128PlusItsNumber) {
  EXPECT_EQ(sh("kill -KILL $$").code, 128 + SIGKILL);
  EXPECT_EQ(sh("kill -TERM $$").code, 128 + SIGTERM);
  int status = 0;
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(7);
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(exit_code_of(status), 7);
}

TEST(RunChild, StdinIsDevNull) {
  // This process's stdin holds a line for the duration: the child must not read it.
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  ASSERT_EQ(::write(ends[1], "leaked\n", 7), 7);
  ::close(ends[1]);
  const int saved = ::dup(0);
  ASSERT_GE(saved, 0);
  ::dup2(ends[0], 0);
  ::close(ends[0]);
  const ChildResult r = sh("readlink /proc/$$/fd/0; cat; echo end");
  ::dup2(saved, 0);
  ::close(saved);
  EXPECT_EQ(r.out, "/dev/null\nend\n");
}

TEST(RunChild, EnvironmentIsThisProcessesWithTheGivenNamesReplaced) {
  const ScopedEnv kept("LMK_PROCESS_TEST_KEPT", "kept");
  const ScopedEnv replaced("LMK_PROCESS_TEST_SET", "parent");
  ChildSpec spec;
  spec.env = {{"LMK_PROCESS_TEST_SET", "child"}, {"LMK_PROCESS_TEST_NEW", "new"}};
  const ChildResult r = sh(
      "echo \"$LMK_PROCESS_TEST_KEPT $LMK_PROCESS_TEST_SET $LMK_PROCESS_TEST_NEW\"; "
      "env | grep -c '^LMK_PROCESS_TEST_SET='",
      spec);
  EXPECT_EQ(r.out, "kept child new\n1\n") << r.err;
}

TEST(RunChild, AProgramNameIsLookedUpOnPathAndAMissingOneIsASpawnError) {
  testing::TempDir dir;
  const std::string program = dir.write("lmk-process-test-program", "#!/bin/sh\necho found \"$@\"\n");
  fs::permissions(program, fs::perms::owner_all);
  const char* old_path = std::getenv("PATH");
  const ScopedEnv path("PATH", dir.path().string() + ":" + (old_path ? old_path : "/usr/bin:/bin"));
  ChildSpec spec;
  spec.argv = {"lmk-process-test-program", "a b"};
  ChildResult r = run_child(spec, 10);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "found a b\n");

  spec.argv = {"lmk-no-such-program"};
  r = run_child(spec, 10);
  EXPECT_EQ(r.spawn_error, ENOENT);
  EXPECT_EQ(r.code, -1);
  EXPECT_FALSE(r.timed_out);
  // A name with '/' is a path: not looked up, not found from another folder.
  spec.argv = {"./lmk-process-test-program"};
  r = run_child(spec, 10);
  EXPECT_EQ(r.spawn_error, ENOENT);
  spec.argv = {program};
  EXPECT_EQ(run_child(spec, 10).out, "found\n");
  // Found but not executable.
  const std::string plain = dir.write("plain", "echo no\n");
  spec.argv = {plain};
  EXPECT_EQ(run_child(spec, 10).spawn_error, EACCES);
}

TEST(RunChild, ATimeoutKillsTheChildAndWhatItStartedInItsOwnGroup) {
  ChildSpec spec;
  spec.group = ChildSpec::Group::Own;
  const auto start = Clock::now();
  // The background sleep keeps the output open: only the deadline ends this.
  const ChildResult r = sh("sleep 30 & echo $!; wait", spec, 0.2);
  const double took = seconds_since(start);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.code, 128 + SIGKILL);
  EXPECT_GE(took, 0.15);
  EXPECT_LT(took, 1.5);
  // The grandchild went with the group (it may be a zombie for a moment, till init reaps it).
  const std::string sleeper = "/proc/" + std::to_string(std::atoi(r.out.c_str())) + "/stat";
  ASSERT_GT(std::atoi(r.out.c_str()), 0) << r.out;
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::ifstream in(sleeper);
    const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    gone = !in || stat.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the background sleep outlived the timeout";

  // A child that closed its output but does not exit is killed at the deadline too.
  const auto again = Clock::now();
  const ChildResult quiet = sh("exec >&- 2>&-; exec sleep 30", {}, 0.2);
  EXPECT_TRUE(quiet.timed_out);
  EXPECT_EQ(quiet.code, 128 + SIGKILL);
  EXPECT_LT(seconds_since(again), 1.5);
}

TEST(RunChild, OutputToALogFileEmptiedFirstOrAppendedTo) {
  testing::TempDir dir;
  const std::string log = dir.write("step.log", "before\n");
  ChildSpec spec;
  spec.log_path = log;
  ChildResult r = sh("echo one; echo two >&2; exit 4", spec);
  EXPECT_EQ(r.code, 4);
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(r.err.empty());
  EXPECT_EQ(read_file(log), "one\ntwo\n");
  spec.append = true;
  r = sh("echo three", spec);
  EXPECT_EQ(read_file(log), "one\ntwo\nthree\n");
  // A new log is created 0644 (under this process's umask).
  const mode_t mask = ::umask(022);
  spec.log_path = (dir.path() / "new.log").string();
  spec.append = false;
  EXPECT_EQ(sh("echo new", spec).code, 0);
  ::umask(mask);
  EXPECT_EQ(fs::status(spec.log_path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
  EXPECT_TRUE(append_to_log(spec.log_path, "added\n"));
  EXPECT_EQ(read_file(spec.log_path), "new\nadded\n");
  EXPECT_FALSE(append_to_log((dir.path() / "no/such/folder/x.log").string(), "x"));

  // A log that cannot be opened is an error naming it, before anything runs.
  spec.log_path = (dir.path() / "no/such/folder/x.log").string();
  spec.name = "step 9";
  try {
    sh("touch " + (dir.path() / "ran").string(), spec);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(spec.log_path + ": cannot write the log of step 9"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "ran"));
  // A spawn error leaves the (emptied) log for the caller to say why.
  spec.log_path = log;
  spec.argv = {"/no/such/program"};
  r = run_child(spec);
  EXPECT_EQ(r.spawn_error, ENOENT);
  EXPECT_EQ(read_file(log), "");
}

TEST(RunChild, OnWaitIsCalledWhileTheChildRuns) {
  testing::TempDir dir;
  ChildSpec spec;
  spec.argv = {"sh", "-c", "sleep 0.2"};
  int calls = 0;
  EXPECT_EQ(run_child(spec, 10, [&] { ++calls; }, 0.02).code, 0);
  EXPECT_GE(calls, 5);  // 0.2 s, at least every 0.02 s
  spec.log_path = (dir.path() / "log").string();
  calls = 0;
  EXPECT_EQ(run_child(spec, 10, [&] { ++calls; }, 0.02).code, 0);
  EXPECT_GE(calls, 5);
}

// pid, process group and session of the shell itself (fields 1, 5 and 6 of its stat).
std::vector<long> ids_of_child(ChildSpec::Group group) {
  ChildSpec spec;
  spec.group = group;
  const ChildResult r = sh("cat /proc/$$/stat", spec);
  std::istringstream fields(r.out.substr(r.out.rfind(')') + 2));
  std::string state;
  long parent = 0, pgid = 0, sid = 0;
  fields >> state >> parent >> pgid >> sid;
  return {std::atol(r.out.c_str()), pgid, sid};
}

TEST(RunChild, ProcessGroupSameOwnOrSession) {
  std::vector<long> ids = ids_of_child(ChildSpec::Group::Same);
  EXPECT_EQ(ids[1], ::getpgrp());
  EXPECT_EQ(ids[2], ::getsid(0));
  ids = ids_of_child(ChildSpec::Group::Own);
  EXPECT_EQ(ids[1], ids[0]);
  EXPECT_EQ(ids[2], ::getsid(0));
  ids = ids_of_child(ChildSpec::Group::Session);
  EXPECT_EQ(ids[1], ids[0]);
  EXPECT_EQ(ids[2], ids[0]);
}

TEST(StartChild, ASessionLeaderWritingToItsLogReapedByTheCaller) {
  testing::TempDir dir;
  const std::string log = dir.write("job.log", "=== header\n");
  ChildSpec spec;
  spec.argv = {"sh", "-c", "echo started; sleep 0.1; echo err >&2; exit 5"};
  spec.log_path = log;
  spec.append = true;
  spec.group = ChildSpec::Group::Session;
  const pid_t pid = start_child(spec);
  ASSERT_GT(pid, 0);
  EXPECT_EQ(::getsid(pid), pid);
  EXPECT_EQ(::getpgid(pid), pid);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_EQ(exit_code_of(status), 5);
  EXPECT_EQ(read_file(log), "=== header\nstarted\nerr\n");

  spec.argv = {"/no/such/program"};
  spec.name = "job 3";
  try {
    start_child(spec);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start a process for job 3: /no/such/program"),
              std::string::npos)
        << e.what();
  }
  spec.log_path.clear();
  EXPECT_THROW(start_child(spec), std::logic_error);
}

TEST(RunChild, DefaultSignalsUndoWhatTheCallerIgnoresOrBlocks) {
  // This process ignores SIGTERM: a child inherits that (sh cannot even trap it back) ...
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ASSERT_EQ(::sigaction(SIGTERM, &ignore, &old), 0);
  const ChildResult ignored = sh("kill -TERM $$; echo survived");
  // ... unless the signal is reset to its default for it.
  ChildSpec spec;
  spec.default_signals = {SIGTERM};
  const ChildResult reset = sh("kill -TERM $$; echo survived", spec);
  ::sigaction(SIGTERM, &old, nullptr);
  EXPECT_EQ(ignored.code, 0);
  EXPECT_EQ(ignored.out, "survived\n");
  EXPECT_EQ(reset.code, 128 + SIGTERM);
  EXPECT_EQ(reset.out, "");

  // Blocked here (the mask is inherited: the signal would wait till the child is gone) ...
  sigset_t usr1, previous;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(::sigprocmask(SIG_BLOCK, &usr1, &previous), 0);
  const ChildResult blocked = sh("kill -USR1 $$; echo survived");
  // ... the child of a spec with default signals starts with nothing blocked.
  spec.default_signals = {SIGUSR1};
  const ChildResult unblocked = sh("kill -USR1 $$; echo survived", spec);
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  EXPECT_EQ(blocked.code, 0);
  EXPECT_EQ(blocked.out, "survived\n");
  EXPECT_EQ(unblocked.code, 128 + SIGUSR1) << unblocked.out;
  EXPECT_EQ(unblocked.out, "");
}

}  // namespace
}  // namespace lmk
