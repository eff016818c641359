#pragma once

// The Slurm executor (core/jobs/executor.h): batch jobs chained by afterok dependencies, and
// one batched poll that brings their runs up to date.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/jobs/executor.h"
#include "core/jobs/slurm.h"

namespace lmk {

// Submits the plan's Slurm jobs not submitted yet (each after the jobs of its dependencies,
// afterok), writing DIR/jobs/RUN.sbatch. A failing sbatch stops with an InputError; the jobs
// not submitted stay SCHEDULED.
void submit_slurm_jobs(const StudyPlan& plan, ResultsStore& store, SlurmClient& slurm,
                       const SlurmOptions& options);

// Bringing the store up to date with what happens to Slurm jobs (lmk jobs, submit --wait): one
// batched poll per study folder of its unfinished Slurm jobs (ending those that are over, the
// others' progress from their logs). Returns the runs it ended.
std::vector<int64_t> poll_slurm_jobs(ResultsStore& store, SlurmClient& slurm,
                                     const std::string& study_dir = "");
// The batch job of a job whose run is of `kind`, and the options it is submitted with
// (training and evaluation take the options' tasks and GPUs; data preparation runs as one task
// without a GPU whatever the options say). run_id 0: a dry run.
std::pair<SlurmOptions, SlurmJobSpec> slurm_job(const JobRecord& job, const std::string& kind,
                                                const SlurmOptions& options);

// The Slurm client options (command_prefix, bin_dir) a submission used, kept in
// DIR/jobs/slurm.json so that later polls and cancels of the folder's jobs reach the same
// cluster. Loading a folder without the file gives the defaults (the programs on PATH); an
// unreadable file is an InputError naming it.
void save_slurm_client_options(const std::string& study_dir, const SlurmOptions& options);
SlurmOptions load_slurm_client_options(const std::string& study_dir);

class SlurmExecutor : public Executor {
 public:
  // `options`: the batch jobs' directives and how the Slurm programs are run.
  explicit SlurmExecutor(SlurmOptions options);
  ExecutorKind kind() const override { return ExecutorKind::Slurm; }
  // The step's batch script (RUN in place of the run id it does not have yet).
  std::string dry_run(const StudyPlan& plan, const StudyStep& step,
                      const std::string& lmk_binary) const override;
  // Saves the client options in the folder, polls its earlier jobs (a dependency may have
  // ended), records the jobs and submits them (submit_slurm_jobs); returns without waiting.
  Submission submit(const StudyPlan& plan, ResultsStore& store, const StudyFolderLock& held,
                    const std::string& lmk_binary, const Recorded& recorded) override;
  // poll_slurm_jobs; a SlurmError when the controller cannot be asked.
  std::vector<int64_t> refresh(ResultsStore& store, const std::string& study_dir) override;
  // scancel (the batch script passes SIGTERM on); a later refresh ends the run once Slurm says
  // the job is over.
  std::string stop(ResultsStore& store, const JobRecord& job, double grace_s) override;
  double poll_interval_s() const override { return 10; }

 private:
  SlurmOptions options_;
  SlurmClient client_;
};

}  // namespace lmk
