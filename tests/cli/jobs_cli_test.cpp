// lmk submit --executor local, lmk jobs, lmk cancel, lmk logs through the real binary: the
// sweep of experiments/granularity-sweep.toml (micro) through the local queue, cancelling a
// training job (checkpoint, KILLED) and continuing it, a queue that dies while its jobs live
// on (re-attached by a second queue) or die with it (FAILED with the end of their log), and
// bad input.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <sstream>
#include <thread>

#include "core/jobs/local_executor.h"
#include "core/store/results_store.h"
#include "core/util/file.h"
#include "tests/support/job_tests.h"
#include "tests/support/run_lmk.h"

namespace lmk {
namespace {

using testing::env_of;
using testing::job_of_step;
using testing::Result;
using testing::run_lmk;
using testing::small_study;
using testing::TempDir;
using testing::wait_running;

const std::string kSweep = std::string(LMK_SOURCE_DIR) + "/experiments/granularity-sweep.toml";

TEST(JobsCli, TheSweepRunsThroughTheLocalQueueAndASecondSubmitReusesIt) {
  TempDir dir;
  const std::string study = (dir.path() / "sweep").string();
  const std::string db = study + "/results.db";
  const std::string args = "submit " + kSweep + " --profile micro --executor local --dir " + study;
  const Result r = run_lmk(args, "", env_of(dir) + " LMK_THREADS=2");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("4 sweep cells, 27 steps"), std::string::npos) << r.output;
  // One table per cell, every cell a number for both poolings.
  for (const std::string cell : {"16", "32", "64", "128"})
    EXPECT_NE(r.output.find("granularity=" + cell + ":\nmanpages: "), std::string::npos)
        << r.output;

  const ResultsStore store(db, ResultsStore::OpenMode::Existing);
  const std::vector<JobRecord> jobs = store.jobs(study);
  ASSERT_EQ(jobs.size(), 27u);
  RunFilter filter;
  filter.experiment = "granularity-sweep-micro";
  // The commands filled the runs the submission made: no other runs.
  EXPECT_EQ(store.list_runs(filter).size(), 27u);
  std::set<std::string> runs;
  for (const JobRecord& job : jobs) {
    const RunRecord run = store.get_run(job.run_id);
    EXPECT_TRUE(job.ended) << job.step;
    EXPECT_EQ(run.status, RunStatus::Finished) << job.step << ": " << run.error_text;
    EXPECT_EQ(job.attempts, 1) << job.step;
    runs.insert(run.name);
    if (run.kind == "pretrain" || run.kind == "train") {
      EXPECT_GE(store.metric_series(run.id, "loss").size(), 1u) << run.name;
      // Its config is the training command's (adopted through LMK_RUN_ID).
      EXPECT_TRUE(store.run_params(run.id).count("train.batch_size")) << run.name;
      // Progress read from the job's log.
      EXPECT_GT(job.progress_total, 0) << run.name;
      EXPECT_EQ(job.progress_done, job.progress_total) << run.name;
    }
    if (run.kind == "eval") EXPECT_FALSE(store.eval_results(run.id).empty()) << run.name;
    EXPECT_TRUE(std::filesystem::exists(study + "/steps/" + job.step_key + ".done")) << job.step;
  }
  // The CLS evaluations do not read the granularity: one per benchmark, shared by the cells;
  // the LMK ones one per cell.
  EXPECT_TRUE(runs.count("cls/manpages-passages"));
  EXPECT_TRUE(runs.count("granularity=16/lmk-32/manpages-passages"));
  EXPECT_TRUE(runs.count("granularity=128/lmk-32/manpages-documents"));
  EXPECT_FALSE(runs.count("granularity=16/cls/manpages-passages"));
  // The granularity is chosen on dev: LMK is evaluated on it too, and the choice is reported.
  EXPECT_TRUE(runs.count("granularity=128/lmk-32/manpages-documents:dev"));
  EXPECT_FALSE(runs.count("cls/manpages-documents:dev"));
  EXPECT_NE(r.output.find("granularity chosen on dev, scored on test"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("lmk-32 (g best on test: oracle)"), std::string::npos) << r.output;

  const Result again = run_lmk(args, "", env_of(dir));
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("0 jobs (0 queued before), 27 steps done before"), std::string::npos)
      << again.output;
  EXPECT_EQ(store.jobs(study).size(), 27u);

  // lmk jobs: nothing unfinished; --all lists them; without --db the last submit's store.
  const Result none = run_lmk("jobs", "", env_of(dir));
  ASSERT_EQ(none.code, 0) << none.output;
  EXPECT_NE(none.output.find("no unfinished jobs"), std::string::npos) << none.output;
  const Result all = run_lmk("jobs --all --db " + db, "", env_of(dir));
  ASSERT_EQ(all.code, 0) << all.output;
  size_t finished = 0;
  for (size_t at = 0; (at = all.output.find("FINISHED", at)) != std::string::npos; ++at) ++finished;
  EXPECT_EQ(finished, 27u) << all.output;
  EXPECT_NE(all.output.find(" pretrain "), std::string::npos) << all.output;
  // lmk logs: the pretraining's log, its last line the command's summary.
  int64_t pretrain = 0;
  for (const JobRecord& job : jobs)
    if (job.step == "pretrain") pretrain = job.run_id;
  const Result log = run_lmk("logs " + std::to_string(pretrain) + " --tail 1", "", env_of(dir));
  ASSERT_EQ(log.code, 0) << log.output;
  EXPECT_EQ(log.output.rfind("lmk pretrain: 20 steps", 0), 0u) << log.output;
}

TEST(JobsCli, CancelStopsATrainingJobAtACheckpointAndTheNextSubmitContinuesIt) {
  TempDir dir;
  const std::string config = small_study(dir, "c", 2500);
  const std::string study = (dir.path() / "s").string();
  const std::string db = study + "/results.db";
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + (dir.path() / "state").string()};
  const std::string out = (dir.path() / "out").string(), err = (dir.path() / "err").string();
  const pid_t submit = testing::start_lmk({"submit", config, "--dir", study}, env, out, err);
  const JobRecord job = wait_running(db, "pretrain");
  // Live progress in lmk jobs (the queue writes it to the store).
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  const Result jobs = run_lmk("jobs --db " + db, "", env_of(dir));
  EXPECT_NE(jobs.output.find("/2500 ("), std::string::npos) << jobs.output;
  EXPECT_NE(jobs.output.find("RUNNING"), std::string::npos) << jobs.output;

  const Result cancel =
      run_lmk("cancel " + std::to_string(job.run_id) + " --db " + db, "", env_of(dir));
  ASSERT_EQ(cancel.code, 0) << cancel.output;
  EXPECT_NE(cancel.output.find("stopped in"), std::string::npos) << cancel.output;
  EXPECT_EQ(testing::wait_lmk(submit), 1) << read_file(err);
  {
    const ResultsStore store(db, ResultsStore::OpenMode::Existing);
    const RunRecord run = store.get_run(job.run_id);
    EXPECT_EQ(run.status, RunStatus::Killed);
    EXPECT_NE(run.error_text.find("checkpoint saved"), std::string::npos) << run.error_text;
    // What depends on it did not run.
    for (const JobRecord& j : store.jobs(study)) {
      if (j.step != "finetune/cls") continue;
      const RunRecord later = store.get_run(j.run_id);
      EXPECT_EQ(later.status, RunStatus::Failed);
      EXPECT_NE(later.error_text.find("not run: dependency pretrain is KILLED"), std::string::npos)
          << later.error_text;
    }
  }
  // Submitted again: the pretraining continues from its checkpoint (its loss curve starts
  // where the cancelled one stopped) and the rest follows.
  const Result again = run_lmk("submit " + config + " --dir " + study, "", env_of(dir));
  ASSERT_EQ(again.code, 0) << again.output;
  const ResultsStore store(db, ResultsStore::OpenMode::Existing);
  const JobRecord second = *job_of_step(db, "pretrain");
  ASSERT_NE(second.run_id, job.run_id);
  const std::vector<Metric> first_curve = store.metric_series(job.run_id, "loss");
  const std::vector<Metric> second_curve = store.metric_series(second.run_id, "loss");
  ASSERT_FALSE(first_curve.empty());
  ASSERT_FALSE(second_curve.empty());
  EXPECT_GT(second_curve.front().step, first_curve.back().step);
  EXPECT_EQ(second_curve.back().step, 2500);
  EXPECT_EQ(store.get_run(second.run_id).status, RunStatus::Finished);
}

TEST(JobsCli, AQueueThatDiesLeavesItsJobsRunningForTheNextOrEndsThemFailedWhenTheyDied) {
  TempDir dir;
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + (dir.path() / "state").string()};
  const std::string out = (dir.path() / "out").string(), err = (dir.path() / "err").string();
  const std::string study = (dir.path() / "s").string();
  const std::string db = study + "/results.db";
  {
    const std::string config = small_study(dir, "alive", 1500);
    const pid_t queue = testing::start_lmk({"submit", config, "--dir", study}, env, out, err);
    const JobRecord job = wait_running(db, "pretrain");
    ::kill(queue, SIGKILL);
    testing::wait_lmk(queue);
    EXPECT_TRUE(local_job_alive(job));
    // Its shell killed too (the pid lmk jobs shows): the lmk command under it goes on, and so
    // does the job (its run's own FINISHED will stand in for the lost exit status).
    ::kill(static_cast<pid_t>(std::stoll(job.external_id)), SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_TRUE(local_job_alive(job));
    // With no queue, lmk jobs shows it running.
    const Result jobs = run_lmk("jobs --db " + db, "", env_of(dir));
    EXPECT_NE(jobs.output.find("RUNNING"), std::string::npos) << jobs.output;
    // A second queue takes it over where it is and runs the rest.
    const Result again = run_lmk("submit " + config + " --dir " + study, "", env_of(dir));
    ASSERT_EQ(again.code, 0) << again.output;
    EXPECT_NE(again.output.find("pretrain: re-attached (pid " + job.external_id), std::string::npos)
        << again.output;
    const ResultsStore store(db, ResultsStore::OpenMode::Existing);
    const JobRecord after = *store.job(job.run_id);
    EXPECT_EQ(after.attempts, 1);
    EXPECT_EQ(store.get_run(job.run_id).status, RunStatus::Finished);
    for (const JobRecord& j : store.jobs(study))
      EXPECT_EQ(store.get_run(j.run_id).status, RunStatus::Finished) << j.step;
  }
  {
    // This time the job dies with its queue (killed with it, no exit status).
    const std::string config = small_study(dir, "dead", 1600);
    const pid_t queue = testing::start_lmk({"submit", config, "--dir", study}, env, out, err);
    const JobRecord job = wait_running(db, "pretrain");
    ::kill(queue, SIGKILL);
    testing::wait_lmk(queue);
    ::kill(-static_cast<pid_t>(std::stoll(job.external_id)), SIGKILL);
    for (int i = 0; i < 50 && local_job_alive(job); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const Result jobs = run_lmk("jobs --all --db " + db, "", env_of(dir));
    ASSERT_EQ(jobs.code, 0) << jobs.output;
    const ResultsStore store(db, ResultsStore::OpenMode::Existing);
    const RunRecord run = store.get_run(job.run_id);
    EXPECT_EQ(run.status, RunStatus::Failed);
    EXPECT_NE(run.error_text.find("ended without an exit status"), std::string::npos)
        << run.error_text;
    EXPECT_NE(run.error_text.find("training"), std::string::npos) << run.error_text;  // log tail
    EXPECT_TRUE(store.job(job.run_id)->ended);
  }
}

TEST(JobsCli, BadInputIsRejectedBeforeAnythingIsStored) {
  TempDir dir;
  const std::string config =
      dir.write("bad.toml", "[study]\nname = \"b\"\n[sweep]\n\"pretrain.batch_size\" = [8, 0]\n");
  const std::string study = (dir.path() / "s").string();
  const Result r = run_lmk("submit " + config + " --dir " + study, "", env_of(dir));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sweep cell batch_size=0"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(study + "/results.db"));
  const Result executor = run_lmk(
      "submit " + small_study(dir, "e", 10) + " --executor pbs --dir " + study, "", env_of(dir));
  EXPECT_EQ(executor.code, 2) << executor.output;
  EXPECT_NE(executor.output.find("'pbs' is not local or slurm"), std::string::npos)
      << executor.output;
  // No store yet: lmk jobs says so.
  const Result nodb = run_lmk("jobs", "", env_of(dir));
  EXPECT_EQ(nodb.code, 2) << nodb.output;
  EXPECT_NE(nodb.output.find("no results store given"), std::string::npos) << nodb.output;
  {
    ResultsStore store((dir.path() / "r.db").string());
    store.create_run(store.get_or_create_experiment("x"), NewRun{"plain", "eval", {}, {}});
  }
  const std::string db = " --db " + (dir.path() / "r.db").string();
  const Result missing = run_lmk("cancel 99" + db, "", env_of(dir));
  EXPECT_EQ(missing.code, 2) << missing.output;
  EXPECT_NE(missing.output.find("no run with id 99"), std::string::npos) << missing.output;
  const Result plain = run_lmk("logs 1" + db, "", env_of(dir));
  EXPECT_EQ(plain.code, 2) << plain.output;
  EXPECT_NE(plain.output.find("has no job log"), std::string::npos) << plain.output;
}

}  // namespace
}  // namespace lmk
