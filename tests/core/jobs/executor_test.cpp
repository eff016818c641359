// The job system's executor-independent part (core/jobs/executor.cpp), on a real store and
// real `sh` processes: submitting records each step not done once (with its dependencies'
// runs), a job ends once with the status its exit says, progress comes from the newest event
// of its log, cancel ends a scheduled job at once and stops a started one through its
// executor, refresh ends what ended and names the folders it cannot poll, and the jobs table.
#include "core/jobs/executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/jobs/local_executor.h"
#include "core/jobs/slurm_executor.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/progress.h"
#include "tests/support/input_error_tests.h"
#include "tests/support/job_unit_tests.h"
#include "tests/support/shell.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::kShell;
using testing::ShellPlan;
using testing::TempDir;

// The cells of a jobs_table row (columns are two or more spaces apart), by row index after the
// header and rule.
std::vector<std::vector<std::string>> table_rows(const std::string& table) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(table);
  std::string line;
  for (int i = 0; std::getline(lines, line); ++i) {
    if (i < 2) continue;
    line = std::regex_replace(line, std::regex("^ +"), "");
    std::vector<std::string> cells;
    const std::regex gap("  +");
    for (std::sregex_token_iterator it(line.begin(), line.end(), gap, -1), end; it != end; ++it)
      cells.push_back(*it);
    rows.push_back(cells);
  }
  return rows;
}

// Submitting records the steps as SCHEDULED runs with their jobs (command, log, the runs of
// their dependencies), in plan order; a second submission queues nothing twice; a step queued
// for the other executor refuses the submission before anything is recorded.
TEST(SubmitStudy, RecordsEachStepOnceWithItsDependenciesRuns) {
  TempDir dir;
  ShellPlan shell(dir);
  shell.add("a", "echo a > a.txt", {}, {"a.txt"});
  shell.add("b", "exit 0", {"a"});
  shell.add("c", "exit 0");
  ResultsStore store(shell.plan.config.db);
  const Submission first = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
  ASSERT_EQ(first.runs.size(), 3u);
  EXPECT_EQ(first.done_before, 0u);
  EXPECT_EQ(first.already_queued, 0u);
  const std::vector<JobRecord> jobs = store.jobs(shell.plan.config.dir);
  ASSERT_EQ(jobs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const StudyStep& step = shell.plan.steps[i];
    const JobRecord& job = jobs[i];
    EXPECT_EQ(job.run_id, first.runs[i]);
    EXPECT_EQ(job.step, step.id);
    EXPECT_EQ(job.step_key, step.key);
    EXPECT_EQ(job.executor, "local");
    EXPECT_EQ(job.command, (std::vector<std::string>{kShell, "-c", step.args[1]}));
    EXPECT_EQ(job.log_path, step_log_path(shell.plan, step));
    EXPECT_EQ(job.outputs, step.outputs);
    EXPECT_TRUE(job.external_id.empty());
    const RunRecord run = store.get_run(job.run_id);
    EXPECT_EQ(run.status, RunStatus::Scheduled);
    EXPECT_EQ(run.name, step.id);
    EXPECT_EQ(run.kind, "step");
    EXPECT_EQ(run.experiment, "s-full");
    EXPECT_EQ(run.config["step"], step.id);
  }
  EXPECT_TRUE(jobs[0].depends_on.empty());
  EXPECT_EQ(jobs[1].depends_on, std::vector<int64_t>{first.runs[0]});
  EXPECT_TRUE(jobs[2].depends_on.empty());

  const Submission again = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
  EXPECT_EQ(again.runs, first.runs);
  EXPECT_EQ(again.already_queued, 3u);
  EXPECT_EQ(store.jobs().size(), 3u);
  EXPECT_EQ(store.list_runs().size(), 3u);

  const std::string message =
      error_of([&] { submit_study(shell.plan, store, ExecutorKind::Slurm, kShell); });
  EXPECT_EQ(message, "step a is already a local job (run " + std::to_string(first.runs[0]) +
                         ") of this study folder; wait for it or lmk cancel it first");
  EXPECT_EQ(store.list_runs().size(), 3u);
}

// A step whose completion is recorded is reused, unless a step it depends on runs again; the
// step after a reused one waits for no run.
TEST(SubmitStudy, ReusesDoneStepsUnlessADependencyRunsAgain) {
  TempDir dir;
  ShellPlan shell(dir);
  shell.add("a", "echo a > a.txt", {}, {"a.txt"});
  shell.add("b", "exit 0", {"a"});
  // b is done, a is not: both run.
  mark_step_done(shell.plan, shell.step("b"), 1);
  {
    ResultsStore store((dir.path() / "one.db").string());
    const Submission s = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
    EXPECT_EQ(s.runs.size(), 2u);
    EXPECT_EQ(s.done_before, 0u);
  }
  // a is done too (its output is there): both are reused.
  std::ofstream(shell.path("a.txt")) << "a\n";
  mark_step_done(shell.plan, shell.step("a"), 1);
  {
    ResultsStore store((dir.path() / "two.db").string());
    const Submission s = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
    EXPECT_TRUE(s.runs.empty());
    EXPECT_EQ(s.done_before, 2u);
  }
  // a done, b not: b alone, waiting for no run.
  fs::remove(shell.path("steps/key-b.done"));
  {
    ResultsStore store((dir.path() / "three.db").string());
    const Submission s = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
    ASSERT_EQ(s.runs.size(), 1u);
    EXPECT_EQ(s.done_before, 1u);
    const JobRecord job = *store.job(s.runs[0]);
    EXPECT_EQ(job.step, "b");
    EXPECT_TRUE(job.depends_on.empty());
    EXPECT_TRUE(fs::exists(shell.path("a.txt"))) << "a reused step's output stays";
  }
}

// Every job's process gets LMK_PROGRESS_JSON=1; the commands that fill a run (train,
// pretrain, eval) also get LMK_RUN_ID, the job's run.
TEST(JobEnvironment, RunIdOnlyForCommandsThatFillARun) {
  JobRecord job;
  job.run_id = 42;
  RunRecord run;
  using Env = std::vector<std::pair<std::string, std::string>>;
  for (const char* kind : {"train", "pretrain", "eval"}) {
    run.kind = kind;
    EXPECT_EQ(job_environment(job, run), (Env{{"LMK_PROGRESS_JSON", "1"}, {"LMK_RUN_ID", "42"}}))
        << kind;
  }
  for (const char* kind : {"step", "", "Train"}) {
    run.kind = kind;
    EXPECT_EQ(job_environment(job, run), (Env{{"LMK_PROGRESS_JSON", "1"}})) << kind;
  }
}

// finish_job from the exit status of a real `sh` run: 0 with the outputs written is FINISHED
// (and the step done for reuse); 0 without them, a failure or a signal is FAILED with the
// reason and the end of the log; 75 and a cancelled job are KILLED. Only the first call ends
// a job.
TEST(FinishJob, TheExitStatusDecidesAndOnlyTheFirstCallEnds) {
  TempDir dir;
  ShellPlan shell(dir);
  struct Case {
    std::string id, script;
    bool output = false, cancel = false;
    RunStatus status;
    std::string error_start;  // "" : no error text
  };
  const std::string out = shell.path("ok.txt");
  const std::vector<Case> cases = {
      {"ok", "echo fine > '" + out + "'", true, false, RunStatus::Finished, ""},
      {"no-output", "echo silent", true, false, RunStatus::Failed,
       "exited 0 without writing " + shell.path("no-output.txt")},
      {"exit3", "echo boom; exit 3", false, false, RunStatus::Failed, "exit 3; the end of "},
      {"stopped", "exit 75", false, false, RunStatus::Killed,
       "stopped by a signal (exit 75, checkpoint saved); the end of "},
      {"signal", "kill -9 $$", false, false, RunStatus::Failed, "killed by signal 9; the end of "},
      {"cancelled", "echo saving; exit 75", false, true, RunStatus::Killed,
       "cancelled (checkpoint saved); the end of "},
  };
  for (const Case& c : cases)
    shell.add(c.id, c.script, {},
              c.output ? std::vector<std::string>{c.id + ".txt"} : std::vector<std::string>{});
  ResultsStore store(shell.plan.config.db);
  submit_study(shell.plan, store, ExecutorKind::Local, kShell);
  for (const Case& c : cases) {
    JobRecord job;
    for (const JobRecord& j : store.jobs())
      if (j.step == c.id) job = j;
    if (c.cancel) ASSERT_TRUE(store.request_job_cancel(job.run_id));
    fs::create_directories(fs::path(job.log_path).parent_path());
    const testing::ShellResult r =
        testing::run_shell("exec >> " + shell_quote(job.log_path) + " 2>&1; sh -c " +
                           shell_quote(c.script) + "; exit $?");
    EXPECT_TRUE(finish_job(store, job, r.code)) << c.id;
    const RunRecord run = store.get_run(job.run_id);
    EXPECT_EQ(run.status, c.status) << c.id << ": " << run.error_text;
    if (c.error_start.empty()) {
      EXPECT_EQ(run.error_text, "") << c.id;
    } else {
      EXPECT_EQ(run.error_text.rfind(c.error_start, 0), 0u) << c.id << ": " << run.error_text;
      EXPECT_NE(run.error_text.find(job.log_path), std::string::npos) << run.error_text;
    }
    EXPECT_EQ(step_done(shell.plan, shell.step(c.id)), c.status == RunStatus::Finished) << c.id;
    // Ended once: a later call (lmk jobs, a poller) changes nothing.
    EXPECT_FALSE(finish_job(store, job, 0)) << c.id;
    EXPECT_EQ(store.get_run(job.run_id).status, c.status) << c.id;
    EXPECT_TRUE(store.job(job.run_id)->ended);
  }
  const RunRecord boom = store.get_run(store.jobs()[2].run_id);
  EXPECT_NE(boom.error_text.find("\n    boom\n"), std::string::npos) << boom.error_text;
}

// Without an exit status: FAILED (killed?), unless the command recorded its run FINISHED and
// left its outputs; `why` replaces the reason; end_unstarted ends a job that never ran, once.
TEST(FinishJob, AJobWithoutExitStatusAndOneThatNeverRan) {
  TempDir dir;
  ShellPlan shell(dir);
  shell.add("lost", "exit 0");
  shell.add("recorded", "exit 0");
  shell.add("why", "exit 0");
  shell.add("never", "exit 0");
  ResultsStore store(shell.plan.config.db);
  const Submission s = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
  ASSERT_TRUE(finish_job(store, *store.job(s.runs[0]), -1));
  EXPECT_EQ(store.get_run(s.runs[0]).status, RunStatus::Failed);
  EXPECT_EQ(store.get_run(s.runs[0]).error_text.rfind(
                "the process ended without an exit status (killed?); the end of ", 0),
            0u);
  store.set_run_status(s.runs[1], RunStatus::Finished);
  ASSERT_TRUE(finish_job(store, *store.job(s.runs[1]), -1));
  EXPECT_EQ(store.get_run(s.runs[1]).status, RunStatus::Finished);
  EXPECT_TRUE(step_done(shell.plan, shell.step("recorded")));
  ASSERT_TRUE(finish_job(store, *store.job(s.runs[2]), 9, "Slurm job 5 FAILED", RunStatus::Killed));
  EXPECT_EQ(store.get_run(s.runs[2]).status, RunStatus::Killed);
  EXPECT_EQ(store.get_run(s.runs[2]).error_text.rfind("Slurm job 5 FAILED; the end of ", 0), 0u);

  end_unstarted(store, *store.job(s.runs[3]), RunStatus::Failed, "not run: dependency x");
  EXPECT_EQ(store.get_run(s.runs[3]).status, RunStatus::Failed);
  EXPECT_EQ(store.get_run(s.runs[3]).error_text, "not run: dependency x");
  end_unstarted(store, *store.job(s.runs[3]), RunStatus::Killed, "later");
  EXPECT_FALSE(finish_job(store, *store.job(s.runs[3]), 0));
  EXPECT_EQ(store.get_run(s.runs[3]).status, RunStatus::Failed);
  EXPECT_EQ(store.get_run(s.runs[3]).error_text, "not run: dependency x");
}

// The progress of a job is its log's newest event: a training step event gives done / total
// and its loss, a progress event its label and detail; an unchanged log is no change, and the
// store gets what changed. A job that exits 0 ends at done = total.
TEST(JobProgress, TheNewestEventOfTheLogIsTheJobsProgress) {
  TempDir dir;
  ShellPlan shell(dir);
  shell.add("train", "exit 0", {}, {}, "train");
  ResultsStore store(shell.plan.config.db);
  const Submission s = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
  JobRecord job = *store.job(s.runs[0]);
  EXPECT_FALSE(read_job_progress(job)) << "no log yet";
  fs::create_directories(fs::path(job.log_path).parent_path());
  // What a command with LMK_PROGRESS_JSON=1 prints, through a real shell.
  const auto print = [&](const std::string& line) {
    ASSERT_EQ(testing::run_shell("printf '%s\\n' " + shell_quote(line) + " >> " +
                                 shell_quote(job.log_path))
                  .code,
              0);
  };
  print("lmk: reading the corpus");
  print(
      R"({"event":"progress","label":"tokenizing","done":5,"total":20,"detail":"1.2k docs/s","eta_s":9})");
  EXPECT_TRUE(read_job_progress(job));
  EXPECT_EQ(job.progress_done, 5);
  EXPECT_EQ(job.progress_total, 20);
  EXPECT_EQ(job.eta_s, 9);
  EXPECT_EQ(job.progress_text, "tokenizing: 1.2k docs/s");
  EXPECT_FALSE(read_job_progress(job)) << "the same event again";
  print(R"({"event":"step","step":3,"total":40,"loss":2.5,"lr":0.001})");
  print("a line that is not an event");
  update_job_progress(store, job);
  const JobRecord stored = *store.job(s.runs[0]);
  EXPECT_EQ(stored.progress_done, 3);
  EXPECT_EQ(stored.progress_total, 40);
  EXPECT_EQ(stored.progress_text, "training loss 2.5");
  ASSERT_TRUE(finish_job(store, stored, 0));
  EXPECT_EQ(store.job(s.runs[0])->progress_done, 40);
  EXPECT_EQ(store.get_run(s.runs[0]).status, RunStatus::Finished);
}

// make_executor picks the code by kind (Slurm options are checked on the way); executor_for
// reads a recorded job's executor name, a Slurm one with its folder's client options.
TEST(MakeExecutor, TheKindSelectsTheExecutor) {
  EXPECT_EQ(make_executor(ExecutorKind::Local, {}, {})->kind(), ExecutorKind::Local);
  EXPECT_EQ(make_executor(ExecutorKind::Slurm, {}, {})->kind(), ExecutorKind::Slurm);
  SlurmOptions bad;
  bad.nodes = 0;
  EXPECT_NE(error_of([&] { make_executor(ExecutorKind::Slurm, bad, {}); }).find("slurm.nodes"),
            std::string::npos);
  EXPECT_NO_THROW(make_executor(ExecutorKind::Local, bad, {})) << "the local queue ignores them";
  TempDir dir;
  JobRecord job;
  job.run_id = 7;
  job.study_dir = dir.path().string();
  job.executor = "local";
  EXPECT_EQ(executor_for(job)->kind(), ExecutorKind::Local);
  job.executor = "slurm";
  EXPECT_EQ(executor_for(job)->kind(), ExecutorKind::Slurm);
  job.executor = "pbs";
  EXPECT_EQ(error_of([&] { executor_for(job); }), "run 7: 'pbs' is not local or slurm");
  // A Slurm folder whose saved client options cannot be read.
  fs::create_directories(dir.path() / "jobs");
  std::ofstream(dir.path() / "jobs" / "slurm.json") << "{\"bin_dir\": 3}";
  job.executor = "slurm";
  EXPECT_NE(
      error_of([&] {
        executor_for(job);
      }).find((dir.path() / "jobs" / "slurm.json").string() + ": unreadable Slurm client options"),
      std::string::npos);
}

// cancel_job: a run without a job is refused; a scheduled job ends KILLED at once; a started
// local job (a real process run by a queue) is stopped with SIGTERM; an ended one is left.
TEST(CancelJob, EndsAScheduledJobAtOnceAndStopsAStartedOne) {
  TempDir dir;
  ShellPlan shell(dir);
  const std::string ready = shell.path("ready");
  // Saves its "checkpoint" and exits 75 on TERM, as training does: the signal sets a flag the
  // loop reads (so a second TERM, from the queue seeing the cancel too, changes nothing), and it
  // waits in the `wait` builtin, which a trapped signal interrupts at once.
  shell.add("long", "trap 'stop=1' TERM; touch '" + ready +
                        "'; while [ -z \"$stop\" ]; do sleep 0.05 & wait $!; done; echo saving; "
                        "exit 75");
  shell.add("later", "exit 0", {"long"});
  ResultsStore store(shell.plan.config.db);
  const Submission s = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
  const int64_t plain =
      store.create_run(store.get_or_create_experiment("by-hand"), NewRun{"by hand", "eval"});
  EXPECT_EQ(error_of([&] { cancel_job(store, plain, 1); }),
            "run " + std::to_string(plain) + " (by hand) is not a job (lmk submit makes jobs)");

  // The second job waits for the first, which the queue starts.
  LocalQueueOptions options;
  options.grace_s = 60;
  testing::QueueThread queue(shell.plan, options);
  // Started for the store too: the process may touch its file before the queue records it.
  ASSERT_TRUE(testing::wait_until(
      [&] { return fs::exists(ready) && !store.job(s.runs[0])->external_id.empty(); }));
  EXPECT_EQ(cancel_job(store, s.runs[1], 1),
            "run " + std::to_string(s.runs[1]) + " (later): cancelled before it started");
  EXPECT_EQ(store.get_run(s.runs[1]).status, RunStatus::Killed);
  EXPECT_EQ(store.get_run(s.runs[1]).error_text, "cancelled before it started");

  const std::string stopped = cancel_job(store, s.runs[0], 10);
  EXPECT_EQ(stopped.rfind("run " + std::to_string(s.runs[0]) + " (long): stopped in ", 0), 0u)
      << stopped;
  EXPECT_EQ(stopped.substr(stopped.size() - 8), ", KILLED") << stopped;
  const RunRecord run = store.get_run(s.runs[0]);
  EXPECT_EQ(run.status, RunStatus::Killed);
  EXPECT_EQ(run.error_text.rfind("cancelled (checkpoint saved); the end of ", 0), 0u)
      << run.error_text;
  EXPECT_NE(run.error_text.find("    saving\n"), std::string::npos) << run.error_text;
  queue.join();
  EXPECT_EQ(cancel_job(store, s.runs[0], 1),
            "run " + std::to_string(s.runs[0]) + " is already KILLED");
}

// refresh_jobs ends a local job whose process ended while no queue watched (its exit file
// says how), and names, without touching their jobs, a Slurm folder that cannot be polled (its
// saved Slurm programs are missing) and one whose saved client options are unreadable.
TEST(RefreshJobs, EndsWhatEndedAndNamesTheFoldersItCannotPoll) {
  TempDir dir;
  ShellPlan local(dir);
  local.add("gone", "exit 4");
  TempDir other;
  ShellPlan slurm(other);
  slurm.add("queued", "exit 0");
  TempDir third;
  ShellPlan broken(third);
  broken.add("queued", "exit 0");
  ResultsStore store((dir.path() / "all.db").string());
  const int64_t gone = submit_study(local.plan, store, ExecutorKind::Local, kShell).runs[0];
  const int64_t queued = submit_study(slurm.plan, store, ExecutorKind::Slurm, kShell).runs[0];
  const int64_t unreadable = submit_study(broken.plan, store, ExecutorKind::Slurm, kShell).runs[0];
  // The job's shell ran `exit 4`, wrote its status where the queue's shell writes it, and is gone.
  const std::string exit_file = local.path("jobs/" + std::to_string(gone) + ".exit");
  fs::create_directories(fs::path(exit_file).parent_path());
  const testing::ShellResult shell_run =
      testing::run_shell("sh -c 'exit 4'; echo $? > " + shell_quote(exit_file) + "; echo $$");
  ASSERT_TRUE(
      store.mark_job_started(gone, shell_run.output.substr(0, shell_run.output.find('\n')), ""));
  // The Slurm folders: programs that are not there, and options that do not parse.
  SlurmOptions options;
  options.bin_dir = (other.path() / "no-slurm").string();
  save_slurm_client_options(slurm.plan.config.dir, options);
  ASSERT_TRUE(store.mark_job_started(queued, "1234", ""));
  fs::create_directories(broken.path("jobs"));
  std::ofstream(broken.path("jobs/slurm.json")) << "not json";
  ASSERT_TRUE(store.mark_job_started(unreadable, "1235", ""));

  std::vector<std::string> warnings;
  const std::vector<int64_t> ended =
      refresh_jobs(store, [&](const std::string& line) { warnings.push_back(line); });
  EXPECT_EQ(ended, std::vector<int64_t>{gone});
  EXPECT_EQ(store.get_run(gone).status, RunStatus::Failed);
  EXPECT_EQ(store.get_run(gone).error_text.rfind("exit 4; the end of ", 0), 0u);
  ASSERT_EQ(warnings.size(), 2u);
  std::sort(warnings.begin(), warnings.end());
  const std::string slurm_warning = "cannot poll the Slurm jobs of " + slurm.plan.config.dir +
                                    ": " + options.bin_dir + "/squeue not found";
  const std::string broken_warning = "cannot refresh the jobs of " + broken.plan.config.dir + ": " +
                                     broken.path("jobs/slurm.json") +
                                     ": unreadable Slurm client options";
  EXPECT_EQ(warnings[0].rfind(slurm_warning, 0), 0u) << warnings[0];
  EXPECT_EQ(warnings[1].rfind(broken_warning, 0), 0u) << warnings[1];
  for (const int64_t run : {queued, unreadable}) {
    EXPECT_EQ(store.get_run(run).status, RunStatus::Scheduled);
    EXPECT_FALSE(store.job(run)->ended);
  }
}

// The jobs table: a row per job with its executor, job id ("-" before it starts), status,
// progress as done/total (percent), the ETA of a running job, and the latest line (the first
// line of a failure's error, cut at 60 characters).
TEST(JobsTable, ARowPerJobWithProgressAndTheLatestWord) {
  TempDir dir;
  ShellPlan shell(dir);
  shell.add("waiting", "exit 0");
  shell.add("running", "exit 0");
  shell.add("failed", "exit 0");
  ResultsStore store(shell.plan.config.db);
  const Submission s = submit_study(shell.plan, store, ExecutorKind::Local, kShell);
  ASSERT_TRUE(store.mark_job_started(s.runs[1], "4321", ""));
  store.set_run_status(s.runs[1], RunStatus::Running);
  store.set_job_progress(s.runs[1], 3, 4, 125, "training loss 2.5");
  ASSERT_TRUE(store.mark_job_started(s.runs[2], "4322", ""));
  store.set_job_progress(s.runs[2], 1, 3, 10, "tokenizing");
  ASSERT_TRUE(store.claim_job_end(s.runs[2]));
  const std::string long_reason(70, 'x');
  store.set_run_status(s.runs[2], RunStatus::Failed, long_reason + "\nthe end of the log");
  const std::string table = jobs_table(store, store.jobs());
  const auto rows = table_rows(table);
  ASSERT_EQ(rows.size(), 3u) << table;
  using Row = std::vector<std::string>;
  EXPECT_EQ(table_rows("\n\n" + table.substr(0, table.find('\n')))[0],
            (Row{"RUN", "STEP", "EXECUTOR", "JOB", "STATUS", "PROGRESS", "ETA", "LATEST"}));
  EXPECT_EQ(rows[0],
            (Row{std::to_string(s.runs[0]), "waiting", "local", "-", "SCHEDULED", "-", "-", "-"}));
  EXPECT_EQ(rows[1], (Row{std::to_string(s.runs[1]), "running", "local", "4321", "RUNNING",
                          "3/4 (75%)", "2m05s", "training loss 2.5"}));
  EXPECT_EQ(rows[2], (Row{std::to_string(s.runs[2]), "failed", "local", "4322", "FAILED",
                          "1/3 (33%)", "-", std::string(57, 'x') + "..."}));
}

}  // namespace
}  // namespace lmk
