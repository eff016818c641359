// The Slurm side of the executor (core/jobs/executor.h): batch jobs chained by afterok
// dependencies, and one batched poll that brings their runs up to date.
#include <chrono>
#include <filesystem>
#include <set>

#include "core/jobs/executor.h"
#include "core/util/error.h"
#include "core/util/file.h"

namespace lmk {

namespace fs = std::filesystem;

namespace {

// Whether the job's batch script asked Slurm to requeue it and no later attempt has started:
// while Slurm requeues a job its state passes through terminal ones (the killed batch script
// of the stopped attempt), which must not end the run. Trusted for 10 minutes after the log
// last changed.
bool being_requeued(const JobRecord& job) {
  std::error_code ec;
  const auto changed = fs::last_write_time(job.log_path, ec);
  if (ec || fs::file_time_type::clock::now() - changed > std::chrono::minutes(10)) return false;
  std::string text;
  try {
    text = read_file(job.log_path);
  } catch (const std::exception&) {
    return false;
  }
  const size_t requeue = text.rfind("[lmk] stopped before the time limit with a checkpoint");
  if (requeue == std::string::npos) return false;
  return text.find("[lmk] job ", requeue) == std::string::npos &&
         text.find("[lmk] the requeue failed", requeue) == std::string::npos;
}

}  // namespace

std::pair<SlurmOptions, SlurmJobSpec> slurm_job(const JobRecord& job, const std::string& kind,
                                                const SlurmOptions& options) {
  SlurmOptions step = options;
  if (kind != "train" && kind != "pretrain") {
    // Data preparation and evaluation are one process: several tasks would race on outputs.
    step.nodes = 1;
    step.ntasks_per_node = 1;
  }
  SlurmJobSpec spec;
  spec.name =
      "lmk-" + (job.run_id > 0 ? std::to_string(job.run_id) : std::string("RUN")) + "-" + job.step;
  for (char& c : spec.name)
    if (c == ' ' || c == '\'' || c == '"') c = '_';
  spec.work_dir = job.study_dir;
  spec.log_path = job.log_path;
  spec.command = job.command;
  RunRecord run;
  run.kind = kind;
  for (auto& [key, value] : job_environment(job, run))
    spec.env.emplace_back(key, job.run_id > 0 || key != "LMK_RUN_ID" ? value : "RUN");
  if (step.cpus_per_task > 0)
    spec.env.emplace_back("LMK_THREADS", std::to_string(step.cpus_per_task));
  return {step, spec};
}

void submit_slurm_jobs(const StudyPlan& plan, ResultsStore& store, SlurmClient& slurm,
                       const SlurmOptions& options) {
  (void)options;
  fs::create_directories(fs::path(plan.config.dir) / "jobs");
  for (JobRecord job : store.jobs(plan.config.dir, /*unfinished=*/true)) {
    if (job.executor != "slurm" || !job.external_id.empty()) continue;
    const RunRecord run = store.get_run(job.run_id);
    std::vector<std::string> after;
    std::string blocked;
    for (int64_t dep : job.depends_on) {
      const std::optional<JobRecord> d = store.job(dep);
      const RunRecord dep_run = store.get_run(dep);
      if (dep_run.status == RunStatus::Failed || dep_run.status == RunStatus::Killed)
        blocked = dep_run.name + " is " + run_status_name(dep_run.status);
      else if (d && !d->ended && d->executor == "slurm" && !d->external_id.empty())
        after.push_back(d->external_id);
      else if (d && !d->ended)
        blocked = dep_run.name + " was not submitted";
    }
    if (!blocked.empty()) {
      job.ended = true;
      store.update_job(job);
      store.set_run_status(job.run_id, RunStatus::Failed, "not run: dependency " + blocked);
      continue;
    }
    auto [step_options, spec] = slurm_job(job, run.kind, options);
    spec.after_ok = after;
    const std::string script =
        (fs::path(plan.config.dir) / "jobs" / (std::to_string(job.run_id) + ".sbatch")).string();
    job.external_id = slurm.submit(spec, script, step_options);
    job.attempts = 1;
    store.update_job(job);
  }
}

std::vector<int64_t> poll_slurm_jobs(ResultsStore& store, SlurmClient& slurm,
                                     const std::string& study_dir) {
  std::vector<JobRecord> jobs;
  std::vector<std::string> ids;
  for (JobRecord& job : store.jobs(study_dir, /*unfinished=*/true)) {
    if (job.executor != "slurm" || job.external_id.empty()) continue;
    ids.push_back(job.external_id);
    jobs.push_back(std::move(job));
  }
  std::vector<int64_t> ended;
  if (ids.empty()) return ended;
  const std::map<std::string, SlurmJobState> states = slurm.poll(ids);
  for (JobRecord& job : jobs) {
    const auto found = states.find(job.external_id);
    const SlurmJobState state = found == states.end() ? SlurmJobState{} : found->second;
    const RunRecord run = store.get_run(job.run_id);
    const std::string slurm_words = "Slurm job " + job.external_id + " " +
                                    (state.state.empty() ? "unknown" : state.state) +
                                    (state.reason.empty() ? "" : " (" + state.reason + ")");
    const bool terminal = state.status == SlurmStatus::Failed ||
                          state.status == SlurmStatus::Killed ||
                          state.status == SlurmStatus::Unknown;
    if (terminal && !job.cancel_requested && being_requeued(job)) continue;
    switch (state.status) {
      case SlurmStatus::Finished:
        finish_job(store, job, 0);
        ended.push_back(job.run_id);
        break;
      case SlurmStatus::Failed:
        finish_job(store, job, state.exit_code > 0 ? state.exit_code : -1,
                   slurm_words + (state.exit_code > 0 ? ", exit " + std::to_string(state.exit_code)
                                                      : std::string()));
        ended.push_back(job.run_id);
        break;
      case SlurmStatus::Killed:
        finish_job(store, job, -1, slurm_words, RunStatus::Killed);
        ended.push_back(job.run_id);
        break;
      case SlurmStatus::Unknown:
        finish_job(store, job, -1, slurm_words + ": Slurm no longer knows the job");
        ended.push_back(job.run_id);
        break;
      case SlurmStatus::Running:
        // RUNNING, or again after a requeue (the stopped attempt had set it KILLED).
        if (run.status == RunStatus::Scheduled || run.status == RunStatus::Killed)
          store.set_run_status(job.run_id, RunStatus::Running);
        [[fallthrough]];
      case SlurmStatus::Pending:
        if (state.reason == "DependencyNeverSatisfied") {
          slurm.cancel(job.external_id);
          finish_job(store, job, -1, "not run: " + slurm_words, RunStatus::Failed);
          ended.push_back(job.run_id);
          break;
        }
        if (read_job_progress(job)) store.update_job(job);
        break;
    }
  }
  return ended;
}

}  // namespace lmk
