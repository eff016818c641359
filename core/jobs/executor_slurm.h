#pragma once

// The Slurm side of the executor (core/jobs/executor.h): batch jobs chained by afterok
// dependencies, and one batched poll that brings their runs up to date.

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
// The batch job of a job whose run is of `kind`, and the options it is submitted with (steps
// that are not training run as one task whatever the options say). run_id 0: a dry run.
std::pair<SlurmOptions, SlurmJobSpec> slurm_job(const JobRecord& job, const std::string& kind,
                                                const SlurmOptions& options);

}  // namespace lmk
