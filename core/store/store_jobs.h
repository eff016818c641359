#pragma once

// A unit of the results store (core/store/results_store.h). The jobs: how an executor runs each run
// of a submitted study step, their progress and cancellation, and what the job monitor watches.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/store/store_unit.h"

namespace lmk {

// How an executor runs a run (core/jobs/executor.h): one per run of a submitted study step.
struct JobRecord {
  int64_t run_id = 0;
  std::string executor;  // "local" or "slurm"
  std::string study_dir, step, step_key;
  std::vector<std::string> command;  // argv
  std::string log_path;
  std::vector<std::string> outputs;  // files or folders the step must leave
  std::vector<int64_t> depends_on;   // runs that must finish first
  std::string external_id;           // the process id (local) or Slurm job id, once started
  std::string process_start;         // local: the process's start time (tells a reused pid)
  int64_t attempts = 0;              // starts (a Slurm requeue is one more)
  bool cancel_requested = false;
  bool ended = false;  // the executor is done with it (its run has its final status)
  int64_t progress_done = -1, progress_total = -1;  // -1: not known
  double eta_s = -1;                                // seconds; -1: not known
  std::string progress_text;                        // the latest progress line
  std::string updated_at;                           // ISO-8601 UTC of the last update
};

// A run the job monitor watches: a job's run, or a run that runs without a job (a command
// started by hand with --db).
struct MonitoredRun {
  int64_t run_id = 0;
  std::string run_name, kind, status, error_text, experiment;
  std::optional<JobRecord> job;
  std::string since;  // without a job: when the run started (else was created)
};

// What a job was submitted from: the study config and profile its submission recorded.
struct JobSubmission {
  std::string study_dir, executor, study_config, profile;
  std::string error;  // why there is none
};

class StoredJobs : public virtual StoreUnit {
 public:
  // Jobs. add_job records the job of an existing run; update_job rewrites every field but
  // run_id (and stamps updated_at).
  void add_job(const JobRecord& job);
  void update_job(const JobRecord& job);
  // Single-column changes that several processes (a queue, lmk cancel, lmk jobs, a Slurm
  // poller) may race for; each applies only to a job not ended and says whether it did.
  // Claims the end of the job (ended = 1): exactly one caller gets true and ends its run.
  bool claim_job_end(int64_t run_id);
  // Records a start (its process or Slurm job, attempts + 1) unless it was cancelled meanwhile.
  bool mark_job_started(int64_t run_id, const std::string& external_id,
                        const std::string& process_start);
  bool request_job_cancel(int64_t run_id);
  void set_job_progress(int64_t run_id, int64_t done, int64_t total, double eta_s,
                        const std::string& text);
  // The runs the job monitor shows: every job's run (only jobs not ended unless
  // include_ended) and the runs RUNNING without a job, by run id.
  std::vector<MonitoredRun> monitored_runs(bool include_ended) const;
  // A job's submission: the study config and profile of its run's config, else of the nearest
  // run of the same study folder that records them (a training or evaluation step replaces its
  // run's config with its own).
  JobSubmission job_submission(int64_t run_id) const;
  // The run's job, if it has one.
  std::optional<JobRecord> job(int64_t run_id) const;
  // Jobs by run id; of one study folder when given; only those not ended when `unfinished`.
  std::vector<JobRecord> jobs(const std::string& study_dir = "", bool unfinished = false) const;
};

}  // namespace lmk
