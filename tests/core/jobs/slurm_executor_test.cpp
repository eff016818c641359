// The Slurm executor (core/jobs/slurm_executor.cpp): the batch job of a step (data steps as one
// task without a GPU), the client options a folder keeps, and submit / refresh / stop against
// stand-ins of the Slurm programs (sh scripts in [slurm] bin_dir: sbatch hands out ids 101,
// 102, ... and records its arguments, sacct prints the states a test sets, scancel records its
// call), so that every state Slurm can report is reached in well under a second. The client
// against a real cluster is slurm_client_test's; the whole chain through lmk submit,
// slurm_jobs_cli_test's.
#include "core/jobs/slurm_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/job_unit_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::kShell;
using testing::ShellPlan;
using testing::TempDir;
using testing::text_of;

// Stand-ins of sbatch, sacct, squeue and scancel in DIR/bin; their calls go to DIR/bin/calls,
// the states sacct reports (JobIDRaw|State|ExitCode|Reason lines) come from DIR/bin/states.
class FakeSlurm {
 public:
  explicit FakeSlurm(const TempDir& dir) : bin_(dir.path() / "bin") {
    fs::create_directories(bin_);
    write("sbatch", R"(n=$(cat "$here/counter" 2>/dev/null || echo 100); n=$((n + 1))
echo $n > "$here/counter"; echo "sbatch $*" >> "$here/calls"; echo "$n;cluster")");
    write("sacct", R"(echo "sacct $*" >> "$here/calls"
[ "$1" = -c ] && exit 1
cat "$here/states" 2>/dev/null; exit 0)");
    // squeue lists nothing for several ids it does not know.
    write("squeue", R"(echo "squeue $*" >> "$here/calls")");
    write("scancel", R"(echo "scancel $*" >> "$here/calls")");
  }
  SlurmOptions options() const {
    SlurmOptions o;
    o.bin_dir = bin_.string();
    return o;
  }
  void set_states(const std::string& lines) const { std::ofstream(bin_ / "states") << lines; }
  std::string calls() const { return text_of((bin_ / "calls").string()); }
  const fs::path& bin() const { return bin_; }

 private:
  void write(const std::string& name, const std::string& body) const {
    const fs::path path = bin_ / name;
    std::ofstream(path) << "#!/bin/sh\nhere=$(dirname \"$0\")\n" << body << "\n";
    fs::permissions(path, fs::perms::owner_all);
  }
  fs::path bin_;
};

// A recorded job of a `kind` step, as slurm_job sees it.
JobRecord job_for(int64_t run_id, const std::string& step) {
  JobRecord job;
  job.run_id = run_id;
  job.step = step;
  job.study_dir = "/scratch/study";
  job.log_path = "/scratch/study/logs/x.log";
  job.command = {"/opt/lmk", "train", "--config", "a b.toml"};
  return job;
}

// Training and evaluation jobs keep the options' tasks and GPUs; any other step runs as one
// task without a GPU. The job's name has no quotes or spaces; its environment is the job's
// (LMK_RUN_ID "RUN" in a dry run), plus LMK_THREADS = cpus_per_task when that is set.
TEST(SlurmJob, TrainingKeepsTheLayoutDataStepsRunAsOneTask) {
  SlurmOptions options;
  options.nodes = 2;
  options.ntasks_per_node = 4;
  options.gpus_per_node = 4;
  options.cpus_per_task = 8;
  options.partition = "gpu";
  using Env = std::vector<std::pair<std::string, std::string>>;
  for (const char* kind : {"train", "pretrain", "eval"}) {
    const auto [step, spec] = slurm_job(job_for(17, "finetune/lmk var's \"x\""), kind, options);
    EXPECT_EQ(step.nodes, 2) << kind;
    EXPECT_EQ(step.ntasks_per_node, 4) << kind;
    EXPECT_EQ(step.gpus_per_node, 4) << kind;
    EXPECT_EQ(step.partition, "gpu");
    EXPECT_EQ(spec.name, "lmk-17-finetune/lmk_var_s__x_");
    EXPECT_EQ(spec.work_dir, "/scratch/study");
    EXPECT_EQ(spec.log_path, "/scratch/study/logs/x.log");
    EXPECT_EQ(spec.command, job_for(17, "").command);
    EXPECT_EQ(spec.env,
              (Env{{"LMK_PROGRESS_JSON", "1"}, {"LMK_RUN_ID", "17"}, {"LMK_THREADS", "8"}}));
    EXPECT_TRUE(spec.after_ok.empty());
  }
  const auto [data, spec] = slurm_job(job_for(0, "corpus/manpages"), "step", options);
  EXPECT_EQ(data.nodes, 1);
  EXPECT_EQ(data.ntasks_per_node, 1);
  EXPECT_EQ(data.gpus_per_node, 0);
  EXPECT_EQ(data.cpus_per_task, 8);
  EXPECT_EQ(data.partition, "gpu");
  EXPECT_EQ(spec.name, "lmk-RUN-corpus/manpages");
  EXPECT_EQ(spec.env, (Env{{"LMK_PROGRESS_JSON", "1"}, {"LMK_THREADS", "8"}}));
  options.cpus_per_task = 0;
  EXPECT_EQ(slurm_job(job_for(0, "pretrain"), "pretrain", options).second.env,
            (Env{{"LMK_PROGRESS_JSON", "1"}, {"LMK_RUN_ID", "RUN"}}));
}

// A folder keeps the client options (command prefix, bin_dir) of its submission; a folder
// without them gives the defaults, an unreadable file is an InputError naming it.
TEST(SlurmClientOptions, SavedInTheFolderAndReadBack) {
  TempDir dir;
  const std::string folder = (dir.path() / "study").string();
  EXPECT_TRUE(load_slurm_client_options(folder).command_prefix.empty());
  EXPECT_EQ(load_slurm_client_options(folder).bin_dir, "");
  SlurmOptions options;
  options.command_prefix = {"ssh", "-p", "2222", "login node"};
  options.bin_dir = "/opt/slurm/bin";
  options.partition = "not kept";
  save_slurm_client_options(folder, options);
  const SlurmOptions loaded = load_slurm_client_options(folder);
  EXPECT_EQ(loaded.command_prefix, options.command_prefix);
  EXPECT_EQ(loaded.bin_dir, "/opt/slurm/bin");
  EXPECT_EQ(loaded.partition, "");
  const std::string file = folder + "/jobs/slurm.json";
  for (const char* bad :
       {"", "{\"bin_dir\": \"/x\"}", "{\"command_prefix\": [], \"bin_dir\": 3}"}) {
    std::ofstream(file) << bad;
    try {
      load_slurm_client_options(folder);
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(file + ": unreadable Slurm client options (", 0), 0u)
          << e.what();
    }
  }
}

// A dry run shows the step's batch script with RUN for the run id it does not have yet.
TEST(SlurmExecutor, DryRunIsTheBatchScriptOfTheStep) {
  TempDir dir;
  ShellPlan shell(dir);
  shell.add("train", "echo hi", {}, {}, "train");
  SlurmOptions options;
  options.gpus_per_node = 2;
  const std::string script =
      SlurmExecutor(options).dry_run(shell.plan, shell.step("train"), "/opt/lmk");
  EXPECT_EQ(script.rfind("# " + shell.plan.config.dir + "/jobs/RUN.sbatch\n#!/bin/bash\n", 0), 0u)
      << script;
  EXPECT_NE(script.find("#SBATCH --gpus-per-node=2\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --job-name=lmk-RUN-train\n"), std::string::npos) << script;
  EXPECT_NE(script.find("export LMK_RUN_ID='RUN'\n"), std::string::npos) << script;
  EXPECT_NE(script.find("'/opt/lmk' '-c' 'echo hi' &\n"), std::string::npos) << script;
}

// submit keeps the client options in the folder, submits each step after its dependencies'
// jobs (afterok), with each step's own layout, and returns without waiting; refresh then ends a
// completed job (FINISHED, done for reuse), marks a running one RUNNING with its log's
// progress, and leaves a pending one.
TEST(SlurmExecutor, SubmitChainsTheJobsAndRefreshFollowsThem) {
  TempDir dir;
  FakeSlurm slurm(dir);
  ShellPlan shell(dir);
  shell.add("prep", "true", {}, {"prep.txt"});
  shell.add("train", "true", {"prep"}, {}, "train");
  shell.add("eval", "true", {"train"}, {}, "eval");
  SlurmOptions options = slurm.options();
  options.ntasks_per_node = 2;
  options.gpus_per_node = 2;
  SlurmExecutor executor(options);
  ResultsStore store(shell.plan.config.db);
  const StudyFolderLock lock(shell.plan.config.dir);
  size_t recorded = 0;
  const Submission s =
      executor.submit(shell.plan, store, lock, kShell, [&](const Submission& submission) {
        recorded = submission.runs.size();
        EXPECT_EQ(slurm.calls().find("sbatch"), std::string::npos) << "recorded before submitted";
      });
  EXPECT_EQ(recorded, 3u);
  ASSERT_EQ(s.runs.size(), 3u);
  EXPECT_EQ(load_slurm_client_options(shell.plan.config.dir).bin_dir, options.bin_dir);
  const auto script = [&](int64_t run) {
    return shell.path("jobs/" + std::to_string(run) + ".sbatch");
  };
  const std::string calls = slurm.calls();
  EXPECT_NE(calls.find("sbatch --parsable " + script(s.runs[0]) + "\n"), std::string::npos)
      << calls;
  EXPECT_NE(calls.find("sbatch --parsable --dependency=afterok:101 --kill-on-invalid-dep=yes " +
                       script(s.runs[1]) + "\n"),
            std::string::npos)
      << calls;
  EXPECT_NE(calls.find("sbatch --parsable --dependency=afterok:102 --kill-on-invalid-dep=yes " +
                       script(s.runs[2]) + "\n"),
            std::string::npos)
      << calls;
  EXPECT_NE(text_of(script(s.runs[0])).find("#SBATCH --ntasks-per-node=1\n"), std::string::npos);
  EXPECT_EQ(text_of(script(s.runs[0])).find("--gpus-per-node"), std::string::npos);
  EXPECT_NE(text_of(script(s.runs[1])).find("#SBATCH --ntasks-per-node=2\n"), std::string::npos);
  EXPECT_NE(text_of(script(s.runs[1])).find("#SBATCH --gpus-per-node=2\n"), std::string::npos);
  EXPECT_NE(
      text_of(script(s.runs[1])).find("export LMK_RUN_ID='" + std::to_string(s.runs[1]) + "'\n"),
      std::string::npos);
  for (size_t i = 0; i < 3; ++i) {
    const JobRecord job = *store.job(s.runs[i]);
    EXPECT_EQ(job.external_id, std::to_string(101 + i));
    EXPECT_EQ(job.attempts, 1);
    EXPECT_EQ(store.get_run(s.runs[i]).status, RunStatus::Scheduled);
  }

  std::ofstream(shell.path("prep.txt")) << "prepared\n";
  const std::string train_log = store.job(s.runs[1])->log_path;
  fs::create_directories(fs::path(train_log).parent_path());
  std::ofstream(train_log) << R"({"event":"step","step":2,"total":8,"loss":3.25})"
                           << "\n";
  slurm.set_states("101|COMPLETED|0:0|None\n102|RUNNING|0:0|None\n103|PENDING|0:0|Dependency\n");
  EXPECT_EQ(executor.refresh(store, shell.plan.config.dir), std::vector<int64_t>{s.runs[0]});
  EXPECT_EQ(store.get_run(s.runs[0]).status, RunStatus::Finished);
  EXPECT_TRUE(step_done(shell.plan, shell.step("prep")));
  EXPECT_EQ(store.get_run(s.runs[1]).status, RunStatus::Running);
  const JobRecord train = *store.job(s.runs[1]);
  EXPECT_EQ(train.progress_done, 2);
  EXPECT_EQ(train.progress_total, 8);
  EXPECT_EQ(train.progress_text, "training loss 3.25");
  EXPECT_EQ(store.get_run(s.runs[2]).status, RunStatus::Scheduled);
  EXPECT_FALSE(store.job(s.runs[2])->ended);
}

// One refresh for every way a Slurm job ends: a failure with its exit code, a cancel (KILLED),
// a job waiting on a failed dependency (scancelled, FAILED), jobs Slurm forgot (the batch
// script's last word in the log decides, else FAILED), and a job being requeued after it
// stopped with a checkpoint (left running although Slurm shows it CANCELLED).
TEST(SlurmExecutor, RefreshEndsEachJobAsSlurmSays) {
  TempDir dir;
  FakeSlurm slurm(dir);
  ShellPlan shell(dir);
  for (const char* id :
       {"failed", "cancelled", "dependency", "forgotten-ok", "forgotten", "requeued"})
    shell.add(id, "true");
  ResultsStore store(shell.plan.config.db);
  const Submission s = submit_study(shell.plan, store, ExecutorKind::Slurm, kShell);
  SlurmClient client(slurm.options());
  submit_slurm_jobs(shell.plan, store, client, slurm.options());
  const auto log = [&](size_t i, const std::string& text) {
    const std::string path = store.job(s.runs[i])->log_path;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
  };
  log(0, "training...\nboom\n[lmk] the command exited with 3\n");
  log(3, "[lmk] job 104 attempt 0 on node1\n[lmk] the command exited with 0\n");
  log(4, "[lmk] job 105 attempt 0 on node1\n");
  log(5,
      "[lmk] job 106 attempt 0 on node1\n[lmk] USR1 received: stopping the command\n"
      "[lmk] the command exited with 75\n"
      "[lmk] stopped before the time limit with a checkpoint: requeueing\n");
  // 104 and 105 are known to no one (squeue lists nothing either).
  slurm.set_states(
      "101|FAILED|3:0|NonZeroExitCode\n102|CANCELLED by 0|0:15|None\n"
      "103|PENDING|0:0|DependencyNeverSatisfied\n106|CANCELLED|0:15|None\n");
  SlurmExecutor executor(slurm.options());
  std::vector<int64_t> ended = executor.refresh(store, "");
  std::sort(ended.begin(), ended.end());
  EXPECT_EQ(ended, (std::vector<int64_t>{s.runs[0], s.runs[1], s.runs[2], s.runs[3], s.runs[4]}));
  const auto error_start = [&](size_t i, RunStatus status, const std::string& start) {
    const RunRecord run = store.get_run(s.runs[i]);
    EXPECT_EQ(run.status, status) << shell.plan.steps[i].id << ": " << run.error_text;
    EXPECT_EQ(run.error_text.rfind(start, 0), 0u)
        << shell.plan.steps[i].id << ": " << run.error_text;
  };
  error_start(0, RunStatus::Failed, "Slurm job 101 FAILED (NonZeroExitCode), exit 3; the end of ");
  EXPECT_NE(store.get_run(s.runs[0]).error_text.find("    boom\n"), std::string::npos);
  error_start(1, RunStatus::Killed, "Slurm job 102 CANCELLED; the end of ");
  error_start(2, RunStatus::Failed,
              "not run: a dependency failed (Slurm job 103 PENDING (DependencyNeverSatisfied)); "
              "the end of ");
  EXPECT_NE(slurm.calls().find("scancel 103\n"), std::string::npos) << slurm.calls();
  error_start(3, RunStatus::Finished, "");
  error_start(4, RunStatus::Failed,
              "Slurm job 105 unknown: Slurm no longer knows the job; the end of ");
  EXPECT_FALSE(store.job(s.runs[5])->ended);
  EXPECT_EQ(store.get_run(s.runs[5]).status, RunStatus::Scheduled);
}

// A job whose dependency ended without finishing is not submitted (FAILED, naming it); a
// failing sbatch stops with its message and leaves the job SCHEDULED; stop is scancel.
TEST(SlurmExecutor, BlockedDependencyFailingSbatchAndStop) {
  TempDir dir;
  FakeSlurm slurm(dir);
  ShellPlan shell(dir);
  shell.add("a", "true");
  shell.add("b", "true", {"a"});
  ResultsStore store(shell.plan.config.db);
  const Submission s = submit_study(shell.plan, store, ExecutorKind::Slurm, kShell);
  ASSERT_TRUE(store.claim_job_end(s.runs[0]));
  store.set_run_status(s.runs[0], RunStatus::Failed, "it failed");
  SlurmClient client(slurm.options());
  submit_slurm_jobs(shell.plan, store, client, slurm.options());
  EXPECT_EQ(slurm.calls(), "") << "nothing submitted";
  EXPECT_EQ(store.get_run(s.runs[1]).status, RunStatus::Failed);
  EXPECT_EQ(store.get_run(s.runs[1]).error_text, "not run: dependency a is FAILED");

  TempDir other;
  ShellPlan second(other);
  second.add("c", "true");
  const int64_t c = submit_study(second.plan, store, ExecutorKind::Slurm, kShell).runs[0];
  const fs::path refusing = other.path() / "refusing";
  fs::create_directories(refusing);
  std::ofstream(refusing / "sbatch")
      << "#!/bin/sh\necho 'sbatch: error: invalid partition specified: gpu' >&2\nexit 1\n";
  fs::permissions(refusing / "sbatch", fs::perms::owner_all);
  SlurmOptions options;
  options.bin_dir = refusing.string();
  SlurmClient refused(options);
  const std::string script = second.path("jobs/" + std::to_string(c) + ".sbatch");
  try {
    submit_slurm_jobs(second.plan, store, refused, options);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "sbatch " + script +
                                         " failed (exit 1): sbatch: error: invalid partition "
                                         "specified: gpu");
  }
  EXPECT_TRUE(store.job(c)->external_id.empty());
  EXPECT_EQ(store.get_run(c).status, RunStatus::Scheduled);

  submit_slurm_jobs(second.plan, store, client, slurm.options());
  const JobRecord started = *store.job(c);
  EXPECT_EQ(started.external_id, "101");
  EXPECT_EQ(SlurmExecutor(slurm.options()).stop(store, started, 30),
            "run " + std::to_string(c) + " (c): scancel 101");
  EXPECT_NE(slurm.calls().find("scancel 101\n"), std::string::npos) << slurm.calls();
}

}  // namespace
}  // namespace lmk
