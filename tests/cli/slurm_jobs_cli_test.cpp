// lmk submit --executor slurm against a real single-node Slurm (tests/support/slurm_cluster.h):
// the sweep of experiments/granularity-sweep.toml (micro) as batch jobs chained by afterok; a
// two-task pretraining (srun, data parallel over Gloo) stopped by the time-limit warning,
// requeued and resumed from its checkpoint; a job requeued from outside (scontrol requeue)
// resuming to the uninterrupted weights; cancelling a running job; a job failing on the
// cluster; and a Slurm that is missing or down.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "core/jobs/executor.h"
#include "core/jobs/study.h"
#include "core/store/results_store.h"
#include "core/util/file.h"
#include "tests/support/job_tests.h"
#include "tests/support/run_lmk.h"
#include "tests/support/slurm_cluster.h"

namespace lmk {
namespace {

using testing::job_of_step;
using testing::Result;
using testing::run_lmk;
using testing::SlurmCluster;
using testing::small_study;
using testing::TempDir;
using testing::wait_running;

const std::string kSweep = std::string(LMK_SOURCE_DIR) + "/experiments/granularity-sweep.toml";

std::string env_of(const TempDir& dir, const SlurmCluster& cluster) {
  return testing::env_of(dir) + " SLURM_CONF=" + cluster.conf().string();
}

std::vector<std::string> start_env(const TempDir& dir, const SlurmCluster& cluster) {
  return {"XDG_STATE_HOME=" + (dir.path() / "state").string(),
          "SLURM_CONF=" + cluster.conf().string()};
}

// `lmk submit CONFIG --executor slurm --wait` started in the background into dir/FOLDER, its
// output in dir/out and dir/err.
struct Submitted {
  pid_t pid;
  std::string study, db, out, err;
};
Submitted submit_to_slurm(const TempDir& dir, const SlurmCluster& cluster,
                          const std::string& config, const std::string& folder) {
  Submitted s;
  s.study = (dir.path() / folder).string();
  s.db = s.study + "/results.db";
  s.out = (dir.path() / "out").string();
  s.err = (dir.path() / "err").string();
  s.pid = testing::start_lmk(
      {"submit", config, "--executor", "slurm", "--wait", "--poll", "1", "--dir", s.study},
      start_env(dir, cluster), s.out, s.err);
  return s;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; ++at) ++n;
  return n;
}

// The batch scripts lmk submit --dry-run prints, each from its shebang to the next.
std::vector<std::string> scripts_of(const std::string& output) {
  std::vector<std::string> scripts;
  for (size_t at = output.find("#!/bin/bash"); at != std::string::npos;) {
    const size_t next = output.find("#!/bin/bash", at + 1);
    scripts.push_back(output.substr(at, next == std::string::npos ? next : next - at));
    at = next;
  }
  return scripts;
}

#define SKIP_WITHOUT_SLURM()                                              \
  do {                                                                    \
    const std::string why = SlurmCluster::unavailable();                  \
    if (!why.empty()) GTEST_SKIP() << why;                                \
    if (::geteuid() != 0) GTEST_SKIP() << "the Slurm fixture needs root"; \
  } while (0)

// A GPU study's batch scripts, without a cluster or a GPU (lmk submit --dry-run): training and
// evaluation run one task per GPU under srun (evaluation with --device), data preparation one
// process without a GPU.
TEST(SlurmJobsCli, AGpuStudyGivesTrainingAndEvaluationEveryGpu) {
  TempDir dir;
  const std::string config = dir.write(
      "gpu.toml",
      "[study]\nname = \"gpu\"\ncorpus = \"builtin\"\ncorpus_limit = 20\ndevice = \"cuda\"\n"
      "[model]\npreset = \"tiny\"\n[pretrain]\nmax_length = 128\nsteps = 10\n"
      "[finetune]\npoolings = [\"cls\", \"lmk:fixed:16\"]\nsteps = 5\n"
      "[eval]\nbenchmarks = [\"documents\"]\nlengths = [128]\n"
      "[slurm]\nnodes = 1\nntasks_per_node = 4\ngpus_per_node = 4\ntime = \"01:00:00\"\n");
  const Result dry = run_lmk("submit " + config + " --executor slurm --dry-run --dir " +
                             (dir.path() / "study").string());
  ASSERT_EQ(dry.code, 0) << dry.output;
  const std::vector<std::string> scripts = scripts_of(dry.output);
  size_t training = 0, evaluations = 0, other = 0;
  for (const std::string& script : scripts) {
    const bool trains = script.find("'train' '--config'") != std::string::npos ||
                        script.find("'pretrain' '--config'") != std::string::npos;
    const bool evaluates = script.find("'eval' '--model'") != std::string::npos;
    if (trains || evaluates) {
      training += trains;
      evaluations += evaluates;
      EXPECT_NE(script.find("#SBATCH --ntasks-per-node=4\n"), std::string::npos) << script;
      EXPECT_NE(script.find("#SBATCH --gpus-per-node=4\n"), std::string::npos) << script;
      EXPECT_NE(script.find("srun --kill-on-bad-exit=1 "), std::string::npos) << script;
      if (evaluates) EXPECT_NE(script.find("'--device' 'cuda'"), std::string::npos) << script;
    } else {
      ++other;
      EXPECT_NE(script.find("#SBATCH --ntasks-per-node=1\n"), std::string::npos) << script;
      EXPECT_EQ(script.find("--gpus-per-node"), std::string::npos) << script;
      EXPECT_EQ(script.find("srun "), std::string::npos) << script;
    }
  }
  EXPECT_EQ(training, 3u) << "pretraining and two fine-tunings\n" << dry.output;
  EXPECT_EQ(evaluations, 2u) << dry.output;
  EXPECT_GT(other, 2u) << dry.output;
  // The training configs (written when the steps run) take the device from the plan: see
  // StudyPlan.TheDeviceReachesTrainingAndEvaluation.
}

// The shipped H100 recipe (experiments/lmk-modernbert-msmarco-h100.toml), as a user runs it:
// the file copied beside stand-ins for the paths it names (a model folder, the training file,
// the dataset folders), lmk submit --dry-run: fine-tuning with the paper's settings and each
// dataset's evaluation on all 8 GPUs of one node under srun, nothing else.
TEST(SlurmJobsCli, TheH100RecipeTrainsAndEvaluatesOnEveryGpuOfTheNode) {
  TempDir dir;
  const std::string recipe =
      read_file(std::string(LMK_SOURCE_DIR) + "/experiments/lmk-modernbert-msmarco-h100.toml");
  const std::string config = dir.write("recipe.toml", recipe);
  std::filesystem::create_directories(dir.path() / "models" / "ModernBERT-base");
  dir.write("models/ModernBERT-base/config.json", "{}");
  std::filesystem::create_directories(dir.path() / "data");
  dir.write("data/msmarco-train.jsonl.gz", "");
  const std::vector<std::string> datasets = {"mldr-en", "passkey",  "needle",        "narrativeqa",
                                             "qmsum",   "2wikimqa", "summ_screen_fd"};
  for (const std::string& name : datasets)
    std::filesystem::create_directories(dir.path() / "data" /
                                        (name == "mldr-en" ? name : "longembed/" + name));
  const Result dry = run_lmk("submit " + config + " --executor slurm --dry-run --dir " +
                             (dir.path() / "study").string());
  ASSERT_EQ(dry.code, 0) << dry.output;
  size_t training = 0;
  std::map<std::string, size_t> evaluated;  // dataset -> evaluations
  for (const std::string& script : scripts_of(dry.output)) {
    if (script.find("'train' '--config'") != std::string::npos) {
      ++training;
      EXPECT_NE(script.find("#SBATCH --nodes=1\n"), std::string::npos) << script;
      EXPECT_NE(script.find("#SBATCH --ntasks-per-node=8\n"), std::string::npos) << script;
      EXPECT_NE(script.find("#SBATCH --gpus-per-node=8\n"), std::string::npos) << script;
      EXPECT_NE(script.find("srun --kill-on-bad-exit=1 "), std::string::npos) << script;
      continue;
    }
    ASSERT_NE(script.find("'eval' '--model'"), std::string::npos)
        << "only fine-tuning and evaluation: " << script;
    EXPECT_NE(script.find("#SBATCH --ntasks-per-node=8\n"), std::string::npos) << script;
    EXPECT_NE(script.find("#SBATCH --gpus-per-node=8\n"), std::string::npos) << script;
    EXPECT_NE(script.find("'--device' 'cuda'"), std::string::npos) << script;
    EXPECT_NE(script.find("srun --kill-on-bad-exit=1 "), std::string::npos) << script;
    for (const std::string& name : datasets) {
      if (script.find("/" + name + "' '--pooling'") == std::string::npos) continue;
      ++evaluated[name];
      EXPECT_EQ(script.find("'--max-length' '8192'") != std::string::npos, name == "mldr-en")
          << script;
    }
    if (script.find("'--pooling' 'lmk'") != std::string::npos)
      EXPECT_NE(script.find("'--granularity' '32'"), std::string::npos) << script;
  }
  EXPECT_EQ(training, 2u) << "CLS and LMK\n" << dry.output;
  for (const std::string& name : datasets) EXPECT_EQ(evaluated[name], 2u) << name;
  // The training configs the steps write: the paper's settings, on the GPU.
  const StudyPlan plan = plan_study(read_study_config(config, "full"));
  for (const StudyStep& step : plan.steps) {
    if (step.kind != "train") continue;
    const std::string toml = step.files.at(0).second;
    for (const std::string& line :
         {"init = \"" + (dir.path() / "models/ModernBERT-base").string() + "\"",
          "train = [\"" + (dir.path() / "data/msmarco-train.jsonl.gz").string() + "\"]",
          std::string("stream = true"), std::string("query_max_length = 128"),
          std::string("passage_max_length = 512"), std::string("batch_size = 256"),
          std::string("learning_rate = 2e-05"), std::string("warmup_ratio = 0.05"),
          std::string("max_steps = 5000"), std::string("temperature = 0.02"),
          std::string("device = \"cuda\"")})
      EXPECT_NE(toml.find(line + "\n"), std::string::npos) << line << " in\n" << toml;
    if (step.id == "finetune/lmk-var")
      EXPECT_NE(toml.find("train_landmarks = \"variable:32,64,128,256\"\n"), std::string::npos)
          << toml;
  }
}

TEST(SlurmJobsCli, TheSweepRunsAsBatchJobsChainedByTheirDependencies) {
  SKIP_WITHOUT_SLURM();
  SlurmCluster cluster;
  TempDir dir;
  const std::string study = (dir.path() / "sweep").string();
  const std::string db = study + "/results.db";
  // --dry-run prints the batch scripts and submits nothing.
  const Result dry =
      run_lmk("submit " + kSweep + " --profile micro --executor slurm --dry-run --dir " + study, "",
              env_of(dir, cluster));
  ASSERT_EQ(dry.code, 0) << dry.output;
  EXPECT_EQ(count(dry.output, "#!/bin/bash"), 27u) << dry.output;
  EXPECT_NE(dry.output.find("#SBATCH --time=00:10:00"), std::string::npos) << dry.output;
  EXPECT_NE(dry.output.find("export LMK_RUN_ID='RUN'"), std::string::npos) << dry.output;
  EXPECT_FALSE(std::filesystem::exists(db));

  const auto start = std::chrono::steady_clock::now();
  const Result r = run_lmk(
      "submit " + kSweep + " --profile micro --executor slurm --wait --poll 1 --dir " + study, "",
      env_of(dir, cluster));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.code, 0) << r.output << "\n" << cluster.logs();
  for (const std::string cell : {"16", "32", "64", "128"})
    EXPECT_NE(r.output.find("granularity=" + cell + ":\nmanpages: "), std::string::npos)
        << r.output;
  const ResultsStore store(db, ResultsStore::OpenMode::Existing);
  const std::vector<JobRecord> jobs = store.jobs(study);
  ASSERT_EQ(jobs.size(), 27u);
  std::set<std::string> ids;
  for (const JobRecord& job : jobs) {
    const RunRecord run = store.get_run(job.run_id);
    EXPECT_EQ(job.executor, "slurm");
    EXPECT_TRUE(std::regex_match(job.external_id, std::regex("[0-9]+"))) << job.external_id;
    EXPECT_TRUE(ids.insert(job.external_id).second);
    EXPECT_TRUE(job.ended);
    EXPECT_EQ(run.status, RunStatus::Finished) << job.step << ": " << run.error_text;
    EXPECT_TRUE(std::filesystem::exists(study + "/jobs/" + std::to_string(job.run_id) + ".sbatch"));
    if (run.kind == "pretrain" || run.kind == "train") {
      EXPECT_GE(store.metric_series(run.id, "loss").size(), 1u) << run.name;
      EXPECT_EQ(job.progress_done, job.progress_total) << run.name;
    }
    if (run.kind == "eval") EXPECT_FALSE(store.eval_results(run.id).empty()) << run.name;
    // The batch script's header line in the log.
    EXPECT_NE(read_file(job.log_path).find("[lmk] job " + job.external_id + " attempt 0"),
              std::string::npos)
        << job.log_path;
  }
  std::cerr << "[ sweep through Slurm: " << jobs.size() << " jobs in " << seconds << " s ]\n";
  // What the local queue would do now: nothing (every step done, whichever executor ran it).
  const Result local =
      run_lmk("submit " + kSweep + " --profile micro --dir " + study, "", testing::env_of(dir));
  ASSERT_EQ(local.code, 0) << local.output;
  EXPECT_NE(local.output.find("0 jobs (0 queued before), 27 steps done before"), std::string::npos)
      << local.output;
}

TEST(SlurmJobsCli, ATwoTaskTrainingJobStoppedBeforeItsTimeLimitIsRequeuedAndResumes) {
  SKIP_WITHOUT_SLURM();
  SlurmCluster cluster;
  TempDir dir;
  const std::string config =
      small_study(dir, "ddp", 1500, "[slurm]\nntasks_per_node = 2\nsignal_seconds = 60\n");
  const auto [submit, study, db, out, err] = submit_to_slurm(dir, cluster, config, "s");
  const JobRecord job = wait_running(db, "pretrain", 20);
  // lmk jobs shows it running with its progress.
  const Result jobs = run_lmk("jobs --db " + db, "", env_of(dir, cluster));
  EXPECT_NE(jobs.output.find("RUNNING"), std::string::npos) << jobs.output;
  EXPECT_NE(jobs.output.find("/1500 ("), std::string::npos) << jobs.output;
  // The time-limit warning (what --signal=B:USR1@60 sends): the script stops the two tasks,
  // which save a checkpoint and exit 75, and requeues the job.
  ASSERT_EQ(cluster.run("scancel --batch --signal=USR1 " + job.external_id).code, 0);
  // A requeued job waits until its first attempt's credential expires (BeginTime): 11 s with
  // the fixture's cred_expire = 10, 121 s by default. (Moving its start earlier gets it killed:
  // "Job credential revoked".)
  ASSERT_EQ(testing::wait_lmk(submit), 0) << read_file(out) << read_file(err) << "\n"
                                          << read_file(job.log_path);

  const ResultsStore store(db, ResultsStore::OpenMode::Existing);
  const RunRecord run = store.get_run(job.run_id);
  EXPECT_EQ(run.status, RunStatus::Finished) << run.error_text;
  const std::string log = read_file(job.log_path);
  EXPECT_NE(log.find("attempt 0"), std::string::npos) << log;
  EXPECT_NE(log.find("attempt 1"), std::string::npos) << log;
  EXPECT_NE(log.find("requeueing"), std::string::npos) << log;
  EXPECT_NE(log.find("stopped by SIGTERM"), std::string::npos) << log;
  // One run across both attempts, its loss curve over all 1500 steps without a restart, and
  // trained by two processes.
  const std::vector<Metric> loss = store.metric_series(job.run_id, "loss");
  ASSERT_GE(loss.size(), 2u);
  EXPECT_EQ(loss.back().step, 1500);
  for (size_t i = 1; i < loss.size(); ++i) EXPECT_GT(loss[i].step, loss[i - 1].step);
  std::string pretrain_config;
  for (size_t i = 0; i + 1 < job.command.size(); ++i)
    if (job.command[i] == "--config") pretrain_config = job.command[i + 1];
  ASSERT_EQ(pretrain_config.substr(pretrain_config.size() - 5), ".toml");
  const std::string state =
      read_file(pretrain_config.substr(0, pretrain_config.size() - 5) + "/checkpoint/state.json");
  EXPECT_TRUE(std::regex_search(state, std::regex("\"world_size\": *2\\b")))
      << state.substr(0, 400);
  size_t evaluations = 0;
  for (const JobRecord& j : store.jobs(study)) {
    const RunRecord step_run = store.get_run(j.run_id);
    EXPECT_EQ(step_run.status, RunStatus::Finished) << j.step << ": " << step_run.error_text;
    // The evaluation ran as two tasks under srun as well, sharing the encoding; rank 0 recorded.
    if (step_run.kind != "eval") continue;
    ++evaluations;
    EXPECT_EQ(step_run.config.value("processes", 0), 2) << step_run.config.dump();
    EXPECT_FALSE(store.eval_results(j.run_id).empty());
  }
  EXPECT_EQ(evaluations, 1u);

  // Cancelling a running job: scancel, the run KILLED, what depends on it never runs.
  const std::string long_config = small_study(dir, "long", 200000, "[slurm]\nsignal_seconds = 0\n");
  const Submitted second_submit = submit_to_slurm(dir, cluster, long_config, "l");
  const pid_t second = second_submit.pid;
  const std::string& long_study = second_submit.study;
  const JobRecord long_job = wait_running(long_study + "/results.db", "pretrain");
  const Result cancel =
      run_lmk("cancel " + std::to_string(long_job.run_id) + " --db " + long_study + "/results.db",
              "", env_of(dir, cluster));
  ASSERT_EQ(cancel.code, 0) << cancel.output;
  EXPECT_NE(cancel.output.find("scancel " + long_job.external_id), std::string::npos)
      << cancel.output;
  EXPECT_EQ(testing::wait_lmk(second), 1) << read_file(err);
  const ResultsStore long_store(long_study + "/results.db", ResultsStore::OpenMode::Existing);
  EXPECT_EQ(long_store.get_run(long_job.run_id).status, RunStatus::Killed);
  for (const JobRecord& j : long_store.jobs(long_study)) {
    EXPECT_TRUE(j.ended) << j.step;
    if (j.step == "finetune/cls") {
      const RunRecord later = long_store.get_run(j.run_id);
      EXPECT_NE(later.status, RunStatus::Finished) << later.error_text;
      EXPECT_TRUE(later.started_at.empty()) << "it ran";
    }
  }
}

// A job requeued from outside in the middle of training (`scontrol requeue`, as a preemption
// or an operator would): Slurm stops it (TERM: lmk writes a checkpoint and exits 75) and starts
// it again; the new attempt resumes from the checkpoint, and the model ends on the weights of
// the same pretraining run uninterrupted, byte for byte.
TEST(SlurmJobsCli, ATrainingJobRequeuedMidRunResumesToTheUninterruptedWeights) {
  SKIP_WITHOUT_SLURM();
  SlurmCluster cluster;
  TempDir dir;
  const std::string config = small_study(dir, "rq", 1500, "[slurm]\nsignal_seconds = 0\n");
  const auto [submit, study, db, out, err] = submit_to_slurm(dir, cluster, config, "s");
  const JobRecord job = wait_running(db, "pretrain", 20);
  ASSERT_FALSE(job.external_id.empty());
  ASSERT_EQ(cluster.run("scontrol requeue " + job.external_id).code, 0);
  ASSERT_EQ(testing::wait_lmk(submit), 0) << read_file(out) << read_file(err) << "\n"
                                          << read_file(job.log_path);
  const std::string log = read_file(job.log_path);
  EXPECT_NE(log.find("attempt 1"), std::string::npos) << log;
  EXPECT_NE(log.find("stopped by SIGTERM"), std::string::npos) << log;
  const ResultsStore store(db, ResultsStore::OpenMode::Existing);
  EXPECT_EQ(store.get_run(job.run_id).status, RunStatus::Finished)
      << store.get_run(job.run_id).error_text;
  // One loss curve over both attempts, never starting again: the second resumed.
  const std::vector<Metric> loss = store.metric_series(job.run_id, "loss");
  ASSERT_FALSE(loss.empty());
  EXPECT_EQ(loss.back().step, 1500);
  for (size_t i = 1; i < loss.size(); ++i) EXPECT_GT(loss[i].step, loss[i - 1].step);
  // The same pretraining, uninterrupted, in this process's thread count (the job's: sbatch
  // exports the submitting environment, LMK_THREADS=1).
  std::string pretrain_config;
  for (size_t i = 0; i + 1 < job.command.size(); ++i)
    if (job.command[i] == "--config") pretrain_config = job.command[i + 1];
  ASSERT_FALSE(pretrain_config.empty());
  const std::string job_dir = pretrain_config.substr(0, pretrain_config.size() - 5);
  std::string text = read_file(pretrain_config);
  text = std::regex_replace(text, std::regex("\ndir = [^\n]*"),
                            "\ndir = \"" + (dir.path() / "reference").string() + "\"");
  text = std::regex_replace(text, std::regex("\ndb = [^\n]*"), "");
  text = std::regex_replace(text, std::regex("\n(experiment|run_name) = [^\n]*"), "");
  const std::string reference = dir.write("reference.toml", text);
  const Result r = run_lmk("pretrain --config " + reference, "", testing::kQuickEnv);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(read_file(job_dir + "/last/model.safetensors") ==
              read_file((dir.path() / "reference/last/model.safetensors").string()))
      << "the requeued job's weights differ from the uninterrupted run's";
}

TEST(SlurmJobsCli, AMissingOrDownSlurmKeepsRunsScheduledAndAFailingJobEndsFailedWithItsLog) {
  SKIP_WITHOUT_SLURM();
  SlurmCluster cluster;
  TempDir dir;
  // sbatch not found: a clear error, the runs recorded and still SCHEDULED.
  const std::string empty = (dir.path() / "no-slurm-here").string();
  std::filesystem::create_directories(empty);
  const std::string missing =
      small_study(dir, "missing", 10, "[slurm]\nbin_dir = \"" + empty + "\"\n");
  const std::string study = (dir.path() / "m").string();
  const Result r =
      run_lmk("submit " + missing + " --executor slurm --dir " + study, "", env_of(dir, cluster));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sbatch not found"), std::string::npos) << r.output;
  {
    const ResultsStore store(study + "/results.db", ResultsStore::OpenMode::Existing);
    const auto jobs = store.jobs(study);
    EXPECT_EQ(jobs.size(), 9u);
    for (const JobRecord& job : jobs) {
      EXPECT_EQ(store.get_run(job.run_id).status, RunStatus::Scheduled) << job.step;
      EXPECT_FALSE(job.ended);
      EXPECT_TRUE(job.external_id.empty());
    }
  }
  // A job that fails on the cluster: FAILED with its exit status and the end of its log; the
  // jobs after it never run.
  const std::string corpus = (dir.path() / "empty-corpus").string();
  std::filesystem::create_directories(corpus);
  const std::string failing =
      dir.write("failing.toml", "[study]\nname = \"f\"\ncorpus = \"" + corpus +
                                    "\"\n[finetune]\npoolings = [\"cls\"]\n[eval]\nbenchmarks = "
                                    "[\"passages\"]\n");
  const std::string fstudy = (dir.path() / "f").string();
  const Result f =
      run_lmk("submit " + failing + " --executor slurm --wait --poll 1 --dir " + fstudy, "",
              env_of(dir, cluster));
  EXPECT_EQ(f.code, 1) << f.output;
  {
    const ResultsStore store(fstudy + "/results.db", ResultsStore::OpenMode::Existing);
    size_t failed_with_log = 0;
    for (const JobRecord& job : store.jobs(fstudy)) {
      const RunRecord run = store.get_run(job.run_id);
      EXPECT_TRUE(job.ended) << job.step;
      EXPECT_NE(run.status, RunStatus::Finished) << job.step;
      if (run.error_text.find("exit ") != std::string::npos &&
          run.error_text.find("the end of " + job.log_path) != std::string::npos &&
          run.error_text.find("lmk: error") != std::string::npos)
        ++failed_with_log;
    }
    EXPECT_GE(failed_with_log, 1u);
  }
  // The controller down: sbatch's own reason, and the runs stay SCHEDULED for a later submit.
  cluster.stop();
  const std::string down = small_study(dir, "down", 10);
  const std::string dstudy = (dir.path() / "d").string();
  const Result d =
      run_lmk("submit " + down + " --executor slurm --dir " + dstudy, "", env_of(dir, cluster));
  EXPECT_EQ(d.code, 2) << d.output;
  EXPECT_NE(d.output.find("Unable to contact slurm controller"), std::string::npos) << d.output;
  const ResultsStore store(dstudy + "/results.db", ResultsStore::OpenMode::Existing);
  for (const JobRecord& job : store.jobs(dstudy))
    EXPECT_EQ(store.get_run(job.run_id).status, RunStatus::Scheduled) << job.step;
  // lmk jobs still lists them, saying it cannot poll.
  const Result jobs = run_lmk("jobs --db " + dstudy + "/results.db", "", env_of(dir, cluster));
  EXPECT_EQ(jobs.code, 0) << jobs.output;
  EXPECT_NE(jobs.output.find("SCHEDULED"), std::string::npos) << jobs.output;
}

}  // namespace
}  // namespace lmk
