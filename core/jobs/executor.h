#pragma once

// Jobs: a study's steps (core/jobs/study.h) submitted as runs of the results store and run by
// an executor — child processes of a local queue, or Slurm batch jobs (core/jobs/slurm.h).
//
// Submitting records every step that is not done yet as a SCHEDULED run with a job (the
// command, its log, the runs it waits for); a step identical to one already queued or running
// in the same study folder (same key) is not queued twice. Every job's process gets
// LMK_RUN_ID (training and evaluation commands fill that run instead of making one) and
// LMK_PROGRESS_JSON=1 (progress events in its log, read into the job's progress fields).
//
// The local queue runs jobs whose dependencies finished, at most max_parallel at once, each in
// a session of its own under `sh -c '...; echo $? > DIR/jobs/RUN.exit'`, so a job outlives a
// queue that dies and its exit status is still known: a later queue (or `lmk jobs`) re-attaches
// a live job by pid and start time, and ends a dead one by its exit file (FAILED with the end
// of its log when there is none). Cancel: SIGTERM to the job's process group (training saves
// a checkpoint and exits 75), SIGKILL after the grace period; the run ends KILLED.
//
// Statuses: a step that exits 0 and left its outputs is FINISHED (and marked done for
// reuse); one stopped by a signal (exit 75) or cancelled is KILLED; otherwise FAILED with the
// exit status and the end of its log; a job whose dependency failed or was cancelled is FAILED
// without running. Processes that race to end a job (queue, lmk cancel, lmk jobs) end it once.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/jobs/executor_kind.h"
#include "core/jobs/slurm.h"
#include "core/jobs/study.h"
#include "core/store/results_store.h"

namespace lmk {

// What submit_study recorded.
struct Submission {
  std::vector<int64_t> runs;  // the runs of the steps to run (new or already queued), plan order
  size_t done_before = 0;     // steps reused
  size_t already_queued = 0;  // steps whose identical job was queued or running
};

// Records the plan's steps not done yet as jobs of `executor` with
// command `lmk_binary ARGS`, writing their config files (the caller holds the folder's
// StudyFolderLock). A step already queued for the other executor is an InputError, raised
// before anything is recorded.
Submission submit_study(const StudyPlan& plan, ResultsStore& store, ExecutorKind executor,
                        const std::string& lmk_binary);

// The environment a job's process gets on top of the caller's.
std::vector<std::pair<std::string, std::string>> job_environment(const JobRecord& job,
                                                                 const RunRecord& run);

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

// Bringing the store up to date with what happens to local jobs: ending those whose process
// ended while no queue watched them (the progress of the live ones from their logs); the Slurm
// side is poll_slurm_jobs (executor_slurm.h). Returns the runs it ended.
std::vector<int64_t> refresh_local_jobs(ResultsStore& store);

// Ends a job and its run from its exit status (see the header comment); `exit_code` < 0:
// unknown. A failure is `failure` (FAILED, or KILLED for a job Slurm cancelled), with `why`
// (default: the exit status) and the end of the log.
// Only the first caller for a job ends it (ResultsStore::claim_job_end); false for the others.
bool finish_job(ResultsStore& store, const JobRecord& job, int exit_code,
                const std::string& why = "", RunStatus failure = RunStatus::Failed);
// Reads the job's progress from its log into it and, when it changed, into the store.
void update_job_progress(ResultsStore& store, JobRecord& job);
// How a started local job ended: its exit status, -1 when its process is gone without one;
// nothing while it runs.
std::optional<int> local_job_exit(const JobRecord& job);

// Cancels the run's job: a SCHEDULED one ends KILLED at once (a submitted Slurm job is
// scancelled), a running local one gets SIGTERM, then SIGKILL after grace_s, a running Slurm
// one is scancelled (the batch script passes SIGTERM on). Returns a line saying what happened.
std::string cancel_job(ResultsStore& store, int64_t run_id, SlurmClient* slurm, double grace_s);

// The jobs as a table: run, step, executor and job id, status, progress, ETA, latest loss.
std::string jobs_table(const ResultsStore& store, const std::vector<JobRecord>& jobs);

// Reads the job's latest progress event from its log into its progress fields; true when
// they changed.
bool read_job_progress(JobRecord& job);

// Whether a local job's process is alive (pid and start time as recorded).
bool local_job_alive(const JobRecord& job);
// The start time of a process (field 22 of /proc/PID/stat), "" when there is none.
std::string process_start_time(int64_t pid);

}  // namespace lmk
