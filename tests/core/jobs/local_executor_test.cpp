// The local executor (core/jobs/local_executor.cpp) with real child processes: a process's
// start time from /proc (a name with ") " in it, a zombie), whether a job lives and how it
// ended (its exit file first), the queue running `sh` jobs after their dependencies at most
// max_parallel at once with their environment and log, submit, stop (SIGTERM, SIGKILL after
// the grace period) and refresh of jobs no queue watches.
#include "core/jobs/local_executor.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/util/file.h"
#include "core/util/process.h"
#include "tests/support/job_unit_tests.h"
#include "tests/support/shell.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::kShell;
using testing::ShellPlan;
using testing::TempDir;
using testing::text_of;
using testing::wait_until;

// Field 22 of /proc/PID/stat as the shell reads it: everything up to the last ") " cut off
// (the command name may hold spaces and parentheses), then the 20th field of the rest.
std::string start_time_by_shell(pid_t pid) {
  std::string out =
      testing::run_shell("sed 's/.*) //' /proc/" + std::to_string(pid) + "/stat | cut -d' ' -f20")
          .output;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// A `sleep 30` in a session of its own (or in this process's group); the caller kills and reaps it.
pid_t start_sleeper(ChildSpec::Group group = ChildSpec::Group::Session) {
  ChildSpec child;
  child.argv = {"sleep", "30"};
  child.group = group;
  child.log_path = "/dev/null";
  return start_child(child);
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

// The job in the store of the step `id`.
JobRecord job_of(const ResultsStore& store, const std::string& id) {
  for (const JobRecord& job : store.jobs())
    if (job.step == id) return job;
  throw std::runtime_error("no job " + id);
}

// A process's start time is field 22 of its stat line, also for a command name holding ") ";
// a zombie (ended, not reaped) and a pid that is gone have none.
TEST(ProcessStartTime, Field22OfTheStatLineAndNoneOnceEnded) {
  const std::string own = process_start_time(::getpid());
  EXPECT_FALSE(own.empty());
  EXPECT_EQ(own.find_first_not_of("0123456789"), std::string::npos) << own;
  EXPECT_EQ(own, start_time_by_shell(::getpid()));

  TempDir dir;
  const std::string script = dir.write("x) y", "#!/bin/sh\nsleep 30\n");
  fs::permissions(script, fs::perms::owner_all);
  ChildSpec child;
  child.argv = {script};
  child.group = ChildSpec::Group::Session;
  child.log_path = "/dev/null";
  const pid_t pid = start_child(child);
  // The shell runs the script under its file name once it has exec'd.
  ASSERT_TRUE(
      wait_until([&] { return text_of("/proc/" + std::to_string(pid) + "/comm") == "x) y\n"; }));
  const std::string started = process_start_time(pid);
  EXPECT_FALSE(started.empty());
  EXPECT_EQ(started, start_time_by_shell(pid));

  ::kill(-pid, SIGKILL);
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT), 0);
  EXPECT_EQ(process_start_time(pid), "") << "a zombie";
  ::waitpid(pid, nullptr, 0);
  EXPECT_EQ(process_start_time(pid), "") << "gone";
}

// A job lives while its process (pid and start time) does, or while its process group has
// members; a pid with another start time outside such a group is another process. Its exit
// file says how it ended, read first (even while the process still runs); without one an ended
// job's status is -1.
TEST(LocalJob, AliveByPidAndStartTimeAndEndedByItsExitFile) {
  TempDir dir;
  JobRecord job;
  job.run_id = 5;
  job.study_dir = dir.path().string();
  EXPECT_FALSE(local_job_alive(job)) << "not started";
  for (const char* id : {"0", "-5", "x"}) {
    job.external_id = id;
    EXPECT_FALSE(local_job_alive(job)) << id;
  }

  const pid_t leader = start_sleeper();
  job.external_id = std::to_string(leader);
  job.process_start = process_start_time(leader);
  EXPECT_TRUE(local_job_alive(job));
  EXPECT_EQ(local_job_exit(job), std::nullopt);
  job.process_start = "1";  // its group still has members: the job's command lives on
  EXPECT_TRUE(local_job_alive(job));

  const std::string exit_file = (dir.path() / "jobs" / "5.exit").string();
  fs::create_directories(dir.path() / "jobs");
  std::ofstream(exit_file) << "0\n";
  EXPECT_EQ(local_job_exit(job), 0) << "the exit file first";
  fs::remove(exit_file);

  kill_and_reap(leader);
  EXPECT_FALSE(local_job_alive(job));
  EXPECT_EQ(local_job_exit(job), -1);
  for (const auto& [text, code] : std::vector<std::pair<std::string, int>>{
           {"3\n", 3}, {"143", 143}, {"garbage\n", -1}, {"", -1}, {"1000\n", -1}}) {
    std::ofstream(exit_file) << text;
    EXPECT_EQ(local_job_exit(job), code) << "'" << text << "'";
  }

  // Not in a group of its own: a pid whose start time differs is not the job.
  const pid_t other = start_sleeper(ChildSpec::Group::Same);
  JobRecord reused;
  reused.study_dir = dir.path().string();
  reused.external_id = std::to_string(other);
  reused.process_start = process_start_time(other);
  EXPECT_TRUE(local_job_alive(reused));
  reused.process_start = "1";
  EXPECT_FALSE(local_job_alive(reused));
  kill_and_reap(other);
}

// The queue starts a job once its dependencies finished, at most max_parallel at once, each as
// `sh -c` with LMK_PROGRESS_JSON, LMK_THREADS (and LMK_RUN_ID for a training step), output
// appended to its log under a header, its exit status in DIR/jobs/RUN.exit; it ends each job
// by that status, fails the jobs after a failed one without running them, and returns how many
// did not finish.
TEST(LocalQueue, RunsJobsAfterTheirDependenciesOneAtATime) {
  TempDir dir;
  ShellPlan shell(dir);
  const std::string trace = shell.path("trace");
  const auto traced = [&](const std::string& id, const std::string& body) {
    return "echo start " + id + " >> '" + trace + "'; (" + body + "); code=$?; echo end " + id +
           " >> '" + trace + "'; exit $code";
  };
  shell.add("a",
            traced("a",
                   "echo \"env: $LMK_PROGRESS_JSON ${LMK_THREADS:-none} "
                   "${LMK_RUN_ID:-none}\"; echo a > '" +
                       shell.path("a.txt") + "'"),
            {}, {"a.txt"}, "train");
  shell.add("b", traced("b", "echo b failed here; exit 3"), {"a"});
  shell.add("c", traced("c", "true"), {"b"});
  shell.add("d", traced("d", "echo \"env: $LMK_PROGRESS_JSON ${LMK_RUN_ID:-none}\""));
  ResultsStore store(shell.plan.config.db);
  const Submission s = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
  ASSERT_EQ(s.runs.size(), 4u);
  std::vector<std::string> reports;
  LocalQueueOptions options;
  options.max_parallel = 1;
  options.poll_s = 0.02;
  options.report = [&](const std::string& line, bool transient) {
    if (!transient) reports.push_back(line);
  };
  const StudyFolderLock lock(shell.plan.config.dir);
  EXPECT_EQ(run_local_queue(shell.plan, store, lock, options), 2u);

  // One at a time: every start is followed by its own end.
  std::istringstream lines(text_of(trace));
  std::vector<std::string> order;
  for (std::string line; std::getline(lines, line);) order.push_back(line);
  ASSERT_EQ(order.size(), 6u) << text_of(trace);
  for (size_t i = 0; i < order.size(); i += 2)
    EXPECT_EQ("end" + order[i].substr(5), order[i + 1]) << text_of(trace);
  const auto position = [&](const std::string& line) {
    return std::find(order.begin(), order.end(), line) - order.begin();
  };
  EXPECT_LT(position("end a"), position("start b"));
  EXPECT_EQ(position("start c"), static_cast<long>(order.size())) << "c never ran";

  const JobRecord a = job_of(store, "a"), b = job_of(store, "b"), c = job_of(store, "c"),
                  d = job_of(store, "d");
  const char* threads_env = std::getenv("LMK_THREADS");
  const std::string threads =
      threads_env ? threads_env : std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(text_of(a.log_path), "=== lmk job: run " + std::to_string(a.run_id) +
                                     " (a), attempt 1\nenv: 1 " + threads + " " +
                                     std::to_string(a.run_id) + "\n");
  EXPECT_NE(text_of(d.log_path).find("env: 1 none\n"), std::string::npos) << text_of(d.log_path);
  EXPECT_EQ(store.get_run(a.run_id).status, RunStatus::Finished);
  EXPECT_TRUE(step_done(shell.plan, shell.step("a")));
  EXPECT_EQ(store.get_run(d.run_id).status, RunStatus::Finished);
  EXPECT_EQ(text_of(shell.path("jobs/" + std::to_string(a.run_id) + ".exit")), "0\n");
  EXPECT_EQ(text_of(shell.path("jobs/" + std::to_string(b.run_id) + ".exit")), "3\n");
  const RunRecord failed = store.get_run(b.run_id);
  EXPECT_EQ(failed.status, RunStatus::Failed);
  EXPECT_EQ(failed.error_text.rfind("exit 3; the end of " + b.log_path + ":\n", 0), 0u)
      << failed.error_text;
  EXPECT_NE(failed.error_text.find("    b failed here\n"), std::string::npos) << failed.error_text;
  EXPECT_EQ(store.get_run(c.run_id).status, RunStatus::Failed);
  EXPECT_EQ(store.get_run(c.run_id).error_text, "not run: dependency b is FAILED");
  EXPECT_TRUE(c.external_id.empty());
  EXPECT_EQ(c.attempts, 0);
  for (const JobRecord& job : {a, b, d}) {
    EXPECT_EQ(job.attempts, 1) << job.step;
    EXPECT_FALSE(job.external_id.empty()) << job.step;
  }
  for (const JobRecord& job : store.jobs()) EXPECT_TRUE(job.ended) << job.step;

  const std::string all = [&] {
    std::string text;
    for (const std::string& line : reports) text += line + "\n";
    return text;
  }();
  EXPECT_NE(all.find("job " + std::to_string(a.run_id) + " a: started (pid "), std::string::npos)
      << all;
  EXPECT_NE(all.find("job " + std::to_string(a.run_id) + " a: FINISHED\n"), std::string::npos)
      << all;
  EXPECT_NE(all.find("job " + std::to_string(b.run_id) + " b: FAILED — exit 3; the end of"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("job " + std::to_string(c.run_id) +
                     " c: FAILED — not run: dependency b is FAILED\n"),
            std::string::npos)
      << all;
}

// The header promises "the number of jobs that did not finish (failed or killed)": a job
// cancelled before it started ends KILLED and counts (the queue counted only the jobs it saw
// end itself).
TEST(LocalQueue, ACancelledJobCountsAsNotFinished) {
  TempDir dir;
  ShellPlan shell(dir);
  shell.add("a", "exit 0");
  ResultsStore store(shell.plan.config.db);
  const Submission s = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
  ASSERT_TRUE(store.request_job_cancel(s.runs[0]));
  LocalQueueOptions options;
  options.poll_s = 0.02;
  const StudyFolderLock lock(shell.plan.config.dir);
  const size_t not_finished = run_local_queue(shell.plan, store, lock, options);
  EXPECT_EQ(store.get_run(s.runs[0]).status, RunStatus::Killed);
  EXPECT_EQ(not_finished, 1u);
}

// submit records the jobs, tells `recorded` before any starts, and returns once they are all
// over; a second submit finds them done. dry_run is the command line, its words quoted for sh.
TEST(LocalExecutor, SubmitRecordsThenRunsUntilAllAreOverAndDryRunQuotesForSh) {
  TempDir dir;
  ShellPlan shell(dir);
  shell.add("a", "echo a > '" + shell.path("a.txt") + "'", {}, {"a.txt"});
  shell.add("b", "test -f '" + shell.path("a.txt") + "'", {"a"});
  ResultsStore store(shell.plan.config.db);
  LocalQueueOptions options;
  options.poll_s = 0.02;
  LocalExecutor executor(options);
  const StudyFolderLock lock(shell.plan.config.dir);
  bool told = false;
  const Submission s =
      executor.submit(shell.plan, store, lock, kShell, [&](const Submission& recorded) {
        told = true;
        EXPECT_EQ(recorded.runs.size(), 2u);
        for (const JobRecord& job : store.jobs()) EXPECT_TRUE(job.external_id.empty()) << job.step;
      });
  EXPECT_TRUE(told);
  ASSERT_EQ(s.runs.size(), 2u);
  for (const int64_t run : s.runs) {
    EXPECT_EQ(store.get_run(run).status, RunStatus::Finished) << store.get_run(run).error_text;
    EXPECT_TRUE(store.job(run)->ended);
  }
  const Submission again = executor.submit(shell.plan, store, lock, kShell, {});
  EXPECT_TRUE(again.runs.empty());
  EXPECT_EQ(again.done_before, 2u);

  StudyStep step;
  step.args = {"<%s>\\n", "a b", "it's", "$HOME", "`id`", "*", ""};
  const std::string line = executor.dry_run(shell.plan, step, "printf");
  EXPECT_EQ(testing::run_shell(line).output, "<a b>\n<it's>\n<$HOME>\n<`id`>\n<*>\n<>\n") << line;
  EXPECT_EQ(default_parallel_jobs(), std::max<int64_t>(1, std::thread::hardware_concurrency() / 2));
}

// stop on started jobs (a queue runs them): SIGTERM to the group, and a job that saves its
// checkpoint and exits 75 ends KILLED at once; a job that ignores SIGTERM gets SIGKILL after
// the grace period and ends KILLED too; stop returns once the job has ended.
TEST(LocalExecutor, StopSendsTermThenKillAfterTheGracePeriod) {
  TempDir dir;
  ShellPlan shell(dir);
  const std::string ready_a = shell.path("ready-a"), ready_b = shell.path("ready-b");
  // TERM sets a flag the loop reads, as lmk's handler does (a second TERM, from the queue seeing
  // the cancel too, changes nothing); `wait` lets the trap run at once.
  shell.add("saves", "trap 'stop=1' TERM; touch '" + ready_a +
                         "'; while [ -z \"$stop\" ]; do sleep 0.05 & wait $!; done; "
                         "echo checkpoint written; exit 75");
  shell.add("ignores", "trap '' TERM; touch '" + ready_b + "'; while :; do sleep 0.05; done");
  ResultsStore store(shell.plan.config.db);
  const Submission s = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
  LocalQueueOptions options;
  options.max_parallel = 2;
  options.grace_s = 60;  // the queue's own SIGKILL never comes in this test
  // The job's command outlives its killed shell for a moment: orphaned, it is reaped by init,
  // which in some containers takes a second or never happens. Here the queue's reaping of its
  // children takes them (as a proper init would at once).
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  testing::QueueThread queue(shell.plan, options);
  // Started for the store too: a process may touch its file before the queue records it.
  ASSERT_TRUE(wait_until([&] {
    return fs::exists(ready_a) && fs::exists(ready_b) &&
           !store.job(s.runs[0])->external_id.empty() && !store.job(s.runs[1])->external_id.empty();
  }));
  LocalExecutor executor({});

  ASSERT_TRUE(store.request_job_cancel(s.runs[0]));
  const std::string saved = executor.stop(store, *store.job(s.runs[0]), 10);
  EXPECT_EQ(saved.rfind("run " + std::to_string(s.runs[0]) + " (saves): stopped in ", 0), 0u)
      << saved;
  EXPECT_EQ(saved.substr(saved.size() - 8), ", KILLED") << saved;
  const RunRecord first = store.get_run(s.runs[0]);
  EXPECT_EQ(first.status, RunStatus::Killed);
  EXPECT_EQ(first.error_text.rfind("cancelled (checkpoint saved); the end of ", 0), 0u)
      << first.error_text;
  EXPECT_NE(first.error_text.find("    checkpoint written\n"), std::string::npos);

  ASSERT_TRUE(store.request_job_cancel(s.runs[1]));
  const JobRecord ignoring = *store.job(s.runs[1]);
  const std::string killed = executor.stop(store, ignoring, 0.2);
  EXPECT_EQ(killed.rfind("run " + std::to_string(s.runs[1]) + " (ignores): SIGKILL after ", 0), 0u)
      << killed;
  EXPECT_EQ(killed.substr(killed.size() - 8), ", KILLED") << killed;
  EXPECT_FALSE(local_job_alive(ignoring));
  EXPECT_EQ(store.get_run(s.runs[1]).status, RunStatus::Killed);
  queue.join();
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  // A job that had ended already: nothing to signal.
  EXPECT_EQ(executor.stop(store, *store.job(s.runs[0]), 1),
            "run " + std::to_string(s.runs[0]) + ": its process had ended");
}

// refresh, with no queue on the folder: a job whose process ended is ended by its exit file,
// a live one gets its log's progress in the store, a Slurm job is not its business; while the
// folder's queue runs (its lock is held) it leaves the folder alone.
TEST(LocalExecutor, RefreshEndsWhatNoQueueWatchesUnlessTheQueueRuns) {
  TempDir dir;
  ShellPlan shell(dir);
  shell.add("gone", "exit 4");
  shell.add("alive", "sleep 30");
  ResultsStore store(shell.plan.config.db);
  const Submission s = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
  ShellPlan other_plan(dir);
  other_plan.plan.steps.clear();
  other_plan.add("slurm-step", "exit 0");
  const int64_t slurm_run =
      submit_study(other_plan.plan, store, ExecutorKind::Slurm, kShell).runs[0];
  ASSERT_TRUE(store.mark_job_started(slurm_run, "77", ""));

  // gone: its shell ran `exit 4`, wrote the status where the queue's shell does, and ended.
  const std::string exit_file = shell.path("jobs/" + std::to_string(s.runs[0]) + ".exit");
  fs::create_directories(fs::path(exit_file).parent_path());
  const std::string pid =
      testing::run_shell("sh -c 'exit 4'; echo $? > '" + exit_file + "'; echo $$").output;
  ASSERT_TRUE(store.mark_job_started(s.runs[0], pid.substr(0, pid.find('\n')), ""));
  // alive: a process that runs, and a step event in its log.
  const pid_t live = start_sleeper();
  ASSERT_TRUE(store.mark_job_started(s.runs[1], std::to_string(live), process_start_time(live)));
  const JobRecord alive = *store.job(s.runs[1]);
  fs::create_directories(fs::path(alive.log_path).parent_path());
  std::ofstream(alive.log_path) << R"({"event":"step","step":7,"total":9,"loss":1.5})"
                                << "\n";

  LocalExecutor executor({});
  {
    const StudyFolderLock queue_runs(shell.plan.config.dir);
    EXPECT_TRUE(executor.refresh(store, "").empty());
    EXPECT_FALSE(store.job(s.runs[0])->ended);
    EXPECT_EQ(store.job(s.runs[1])->progress_done, -1);
  }
  EXPECT_EQ(executor.refresh(store, shell.plan.config.dir), std::vector<int64_t>{s.runs[0]});
  EXPECT_EQ(store.get_run(s.runs[0]).status, RunStatus::Failed);
  EXPECT_EQ(store.get_run(s.runs[0]).error_text.rfind("exit 4; the end of ", 0), 0u);
  const JobRecord progressed = *store.job(s.runs[1]);
  EXPECT_FALSE(progressed.ended);
  EXPECT_EQ(progressed.progress_done, 7);
  EXPECT_EQ(progressed.progress_total, 9);
  EXPECT_EQ(progressed.progress_text, "training loss 1.5");
  EXPECT_FALSE(store.job(slurm_run)->ended);
  kill_and_reap(live);
}

}  // namespace
}  // namespace lmk
