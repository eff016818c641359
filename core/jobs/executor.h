#pragma once

// Jobs: a study's steps (core/jobs/study.h) submitted as runs of the results store and run by
// an Executor — child processes of a local queue (core/jobs/local_executor.h), or Slurm batch
// jobs (core/jobs/slurm_executor.h). Callers hold an Executor and never ask which one it is:
// make_executor / executor_for are the one place an executor's name selects its code.
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
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/jobs/executor_kind.h"
#include "core/jobs/slurm.h"
#include "core/jobs/study.h"
#include "core/store/results_store.h"

namespace lmk {

struct LocalQueueOptions;  // core/jobs/local_executor.h

// What submit_study recorded.
struct Submission {
  std::vector<int64_t> runs;  // the runs of the steps to run (new or already queued), plan order
  size_t done_before = 0;     // steps reused
  size_t already_queued = 0;  // steps whose identical job was queued or running
};

// The job a step becomes: command `lmk_binary ARGS`, its log and outputs (run id 0 until
// submit_study records it).
JobRecord job_of_step(const StudyPlan& plan, const StudyStep& step, ExecutorKind executor,
                      const std::string& lmk_binary);

// Records the plan's steps not done yet as jobs of `executor` with
// command `lmk_binary ARGS`, writing their config files (the caller holds the folder's
// StudyFolderLock). A step already queued for the other executor is an InputError, raised
// before anything is recorded.
Submission submit_study(const StudyPlan& plan, ResultsStore& store, ExecutorKind executor,
                        const std::string& lmk_binary);

// The environment a job's process gets on top of the caller's.
std::vector<std::pair<std::string, std::string>> job_environment(const JobRecord& job,
                                                                 const RunRecord& run);

// Ends a job and its run from its exit status (see the header comment); `exit_code` < 0:
// unknown. A failure is `failure` (FAILED, or KILLED for a job Slurm cancelled), with `why`
// (default: the exit status) and the end of the log.
// Only the first caller for a job ends it (ResultsStore::claim_job_end); false for the others.
bool finish_job(ResultsStore& store, const JobRecord& job, int exit_code,
                const std::string& why = "", RunStatus failure = RunStatus::Failed);
// Ends a job that never ran (cancelled, or its dependency failed) with `status` and `why`.
void end_unstarted(ResultsStore& store, const JobRecord& job, RunStatus status,
                   const std::string& why);
// Reads the job's progress from its log into it and, when it changed, into the store.
void update_job_progress(ResultsStore& store, JobRecord& job);
// Reads the job's latest progress event from its log into its progress fields; true when
// they changed.
bool read_job_progress(JobRecord& job);

// The jobs as a table: run, step, executor and job id, status, progress, ETA, latest loss.
std::string jobs_table(const ResultsStore& store, const std::vector<JobRecord>& jobs);

// Where jobs run. Each implementation handles the jobs recorded with its name and no others.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual ExecutorKind kind() const = 0;

  // What `lmk submit --dry-run` shows for a step that would run: its command line (local) or
  // its batch script (Slurm).
  virtual std::string dry_run(const StudyPlan& plan, const StudyStep& step,
                              const std::string& lmk_binary) const = 0;
  // Records the plan's steps not done yet as jobs of this executor (submit_study), calls
  // `recorded` with them (before any starts: a watcher such as the workbench learns the jobs
  // exist), and starts them; the caller holds the folder's lock. The local queue returns once
  // every job is over (or it was stopped); Slurm returns once the jobs are submitted.
  using Recorded = std::function<void(const Submission&)>;
  virtual Submission submit(const StudyPlan& plan, ResultsStore& store, const StudyFolderLock& held,
                            const std::string& lmk_binary, const Recorded& recorded) = 0;
  // Brings the store up to date with this executor's unfinished jobs of `study_dir` ("": of
  // every folder): ends those that are over, reads the others' progress. Returns the runs it
  // ended.
  virtual std::vector<int64_t> refresh(ResultsStore& store, const std::string& study_dir) = 0;
  // Stops a started job whose cancel cancel_job recorded; returns a line saying what happened.
  virtual std::string stop(ResultsStore& store, const JobRecord& job, double grace_s) = 0;
  // How often a follower (lmk logs --follow) should refresh to see a job of it end, seconds.
  virtual double poll_interval_s() const = 0;
};

// The executor of `kind`: Slurm with `slurm`, the local queue with `local`.
std::unique_ptr<Executor> make_executor(ExecutorKind kind, const SlurmOptions& slurm,
                                        const LocalQueueOptions& local);
// The executor of a recorded job (Slurm: with the client options its submission kept in its
// study folder).
std::unique_ptr<Executor> executor_for(const JobRecord& job);

// Refreshes every unfinished job of the store, each through its executor (Slurm: one batched
// poll per study folder). A Slurm folder that cannot be polled stays as it was and is named
// to `warn`. Returns the runs it ended.
std::vector<int64_t> refresh_jobs(ResultsStore& store,
                                  const std::function<void(const std::string&)>& warn = {});

// Cancels the run's job: a SCHEDULED one ends KILLED at once; a started one is stopped by its
// executor (local: SIGTERM to its process group, SIGKILL after grace_s; Slurm: scancel, the
// batch script passes SIGTERM on, and a later refresh ends the run). Returns a line saying
// what happened.
std::string cancel_job(ResultsStore& store, int64_t run_id, double grace_s);

}  // namespace lmk
