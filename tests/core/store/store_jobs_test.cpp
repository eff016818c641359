// The jobs unit of the results store (core/store/store_jobs.h): a job recorded with its run,
// read back and rewritten, the single-column changes that racing processes make, and what the
// job monitor and a job's submission read.
#include "core/store/results_store.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::TempDir;

// What the job monitor reads: every job's run (the ended ones on request) and the runs running
// without a job; and what a job was submitted from, from its own run or the nearest run of its
// study folder that records it.
TEST(ResultsStoreTest, MonitoredRunsAndJobSubmissions) {
  TempDir dir;
  ResultsStore store((dir.path() / "monitor.db").string());
  const int64_t e = store.get_or_create_experiment("e");
  const int64_t data =
      store.create_run(e, {"data", "data", {{"study", "/s/study.toml"}, {"profile", "micro"}}});
  const int64_t train = store.create_run(e, {"train", "train", {{"train", {{"lr", 1e-4}}}}});
  const int64_t by_hand = store.create_run(e, {"by-hand", "eval"});
  const int64_t idle = store.create_run(e, {"idle", "eval"});
  for (const int64_t run : {data, train}) {
    JobRecord job;
    job.run_id = run;
    job.executor = "local";
    job.study_dir = "/s/out";
    job.step = run == data ? "corpus/manpages" : "finetune/lmk";
    store.add_job(job);
  }
  ASSERT_TRUE(store.claim_job_end(data));
  store.set_run_status(by_hand, RunStatus::Running);
  std::vector<MonitoredRun> runs = store.monitored_runs(false);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run_id, train);
  ASSERT_TRUE(runs[0].job.has_value());
  EXPECT_EQ(runs[0].job->step, "finetune/lmk");
  EXPECT_EQ(runs[0].experiment, "e");
  EXPECT_EQ(runs[1].run_id, by_hand);
  EXPECT_FALSE(runs[1].job.has_value());
  EXPECT_FALSE(runs[1].since.empty()) << "when it started";
  runs = store.monitored_runs(true);
  ASSERT_EQ(runs.size(), 3u) << "the ended job too, not the idle run";
  EXPECT_EQ(runs[0].run_id, data);
  EXPECT_TRUE(runs[0].job->ended);
  (void)idle;

  const JobSubmission from_other = store.job_submission(train);
  EXPECT_EQ(from_other.study_config, "/s/study.toml") << "the training run's config replaced it";
  EXPECT_EQ(from_other.profile, "micro");
  EXPECT_EQ(from_other.study_dir, "/s/out");
  EXPECT_EQ(from_other.executor, "local");
  EXPECT_TRUE(from_other.error.empty());
  EXPECT_EQ(store.job_submission(by_hand).error,
            "run " + std::to_string(by_hand) + " is not a job");
}

TEST(ResultsStoreTest, KeepsJobsWithTheirRuns) {
  TempDir dir;
  ResultsStore store((dir.path() / "jobs.db").string());
  const int64_t experiment = store.get_or_create_experiment("e");
  const int64_t a = store.create_run(experiment, NewRun{"a", "train", {}, {}});
  const int64_t b = store.create_run(experiment, NewRun{"b", "step", {}, {}});
  JobRecord job;
  job.run_id = a;
  job.executor = "slurm";
  job.study_dir = "/s";
  job.step = "pretrain";
  job.step_key = "k1";
  job.command = {"/bin/lmk", "pretrain", "--config", "a b.toml"};
  job.log_path = "/s/logs/a.log";
  job.outputs = {"/s/x"};
  store.add_job(job);
  JobRecord other = job;
  other.run_id = b;
  other.executor = "local";
  other.study_dir = "/t";
  other.depends_on = {a};
  store.add_job(other);
  EXPECT_FALSE(store.job(a + b + 1).has_value());
  JobRecord read = *store.job(a);
  EXPECT_EQ(read.command, job.command);
  EXPECT_EQ(read.outputs, job.outputs);
  EXPECT_EQ(read.progress_done, -1);
  EXPECT_EQ(read.eta_s, -1);
  EXPECT_FALSE(read.updated_at.empty());
  read.external_id = "123";
  read.progress_done = 5;
  read.progress_total = 10;
  read.eta_s = 2.5;
  read.progress_text = "training loss 3";
  read.attempts = 2;
  read.cancel_requested = true;
  store.update_job(read);
  const JobRecord again = *store.job(a);
  EXPECT_EQ(again.external_id, "123");
  EXPECT_EQ(again.progress_done, 5);
  EXPECT_EQ(again.eta_s, 2.5);
  EXPECT_EQ(again.attempts, 2);
  EXPECT_TRUE(again.cancel_requested);
  EXPECT_EQ(store.job(b)->depends_on, std::vector<int64_t>{a});
  // Filters: a study folder, and jobs not ended.
  EXPECT_EQ(store.jobs().size(), 2u);
  EXPECT_EQ(store.jobs("/t").size(), 1u);
  read.ended = true;
  store.update_job(read);
  EXPECT_EQ(store.jobs("", /*unfinished=*/true).size(), 1u);
  EXPECT_EQ(store.jobs("", true).front().run_id, b);
  // Contested changes apply to a job not ended, once: a start after a cancel is refused, an
  // end is claimed by one caller only, progress writes touch progress only.
  EXPECT_TRUE(store.request_job_cancel(b));
  EXPECT_FALSE(store.mark_job_started(b, "77", "1"));
  EXPECT_TRUE(store.job(b)->external_id.empty());
  store.set_job_progress(b, 3, 9, -1, "x");
  EXPECT_TRUE(store.job(b)->cancel_requested);
  EXPECT_EQ(store.job(b)->progress_done, 3);
  EXPECT_EQ(store.job(b)->eta_s, -1);
  EXPECT_TRUE(store.claim_job_end(b));
  EXPECT_FALSE(store.claim_job_end(b));
  EXPECT_FALSE(store.request_job_cancel(b));
  const int64_t c = store.create_run(experiment, NewRun{"c", "step", {}, {}});
  other.run_id = c;
  store.add_job(other);
  EXPECT_TRUE(store.mark_job_started(c, "88", "123"));
  EXPECT_EQ(store.job(c)->attempts, 1);
  EXPECT_EQ(store.job(c)->external_id, "88");
  // A job of a run that does not exist, or an update of a job never added: errors.
  job.run_id = 999;
  EXPECT_THROW(store.add_job(job), InputError);
  EXPECT_THROW(store.update_job(job), InputError);
}

}  // namespace
}  // namespace lmk
