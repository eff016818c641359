#pragma once

// The local executor (core/jobs/executor.h): jobs as child processes of a queue on this
// machine, each in a session of its own under `sh -c '...; echo $? > DIR/jobs/RUN.exit'`, so
// a job outlives a queue that dies and its exit status is still known (see executor.h).

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/jobs/executor.h"
#include "core/util/process.h"  // process_start_time

namespace lmk {

struct LocalQueueOptions {
  int64_t max_parallel = 0;  // 0: half the cores, at least 1
  double poll_s = 0.5;
  double grace_s = 30;  // SIGTERM -> SIGKILL
  StudyReport report;   // lines about starts and ends (and transient progress)
  double progress_interval_s = 30;
};

// The default number of jobs at once here, and the threads each then gets (LMK_THREADS).
int64_t default_parallel_jobs();

// Runs the local jobs of the plan's study folder that are not over, until all are; the caller
// holds the folder's lock (taken before submit_study recorded the jobs). Re-attaches jobs
// still running from a queue that died. Stops on SIGINT / SIGTERM after cancelling what runs.
// Returns the number of jobs that did not finish (failed or killed).
size_t run_local_queue(const StudyPlan& plan, ResultsStore& store, const StudyFolderLock& held,
                       const LocalQueueOptions& options);

// How a started local job ended: its exit status, -1 when its process is gone without one;
// nothing while it runs.
std::optional<int> local_job_exit(const JobRecord& job);
// Whether a local job's process is alive (pid and start time as recorded).
bool local_job_alive(const JobRecord& job);

class LocalExecutor : public Executor {
 public:
  explicit LocalExecutor(LocalQueueOptions options) : options_(std::move(options)) {}
  ExecutorKind kind() const override { return ExecutorKind::Local; }
  std::string dry_run(const StudyPlan& plan, const StudyStep& step,
                      const std::string& lmk_binary) const override;
  // Records the jobs and runs the queue (run_local_queue) until they are over.
  Submission submit(const StudyPlan& plan, ResultsStore& store, const StudyFolderLock& held,
                    const std::string& lmk_binary, const Recorded& recorded) override;
  // Ends the jobs whose process ended while no queue watched them, the progress of the live
  // ones from their logs; a folder whose queue runs (its lock is held) is that queue's business.
  std::vector<int64_t> refresh(ResultsStore& store, const std::string& study_dir) override;
  // SIGTERM to the job's process group, SIGKILL after grace_s; returns once it has ended.
  std::string stop(ResultsStore& store, const JobRecord& job, double grace_s) override;
  double poll_interval_s() const override { return 0.5; }

 private:
  LocalQueueOptions options_;
};

}  // namespace lmk
