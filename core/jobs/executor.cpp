#include "core/jobs/executor.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>
#include <thread>

#include "core/jobs/local_executor.h"
#include "core/jobs/slurm.h"
#include "core/jobs/slurm_executor.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/progress.h"
#include "core/util/runtime.h"
#include "core/util/text_table.h"

namespace lmk {

namespace fs = std::filesystem;

bool read_job_progress(JobRecord& job) {
  const std::optional<ProgressEvent> event =
      latest_progress_event(read_file_tail(job.log_path, 16384));
  if (!event) return false;
  std::string text = event->label;
  if (!event->detail.empty()) text += (text.empty() ? "" : ": ") + event->detail;
  for (const auto& [key, value] : event->values) {
    if (key == "loss") {
      std::ostringstream loss;
      loss << "loss " << std::setprecision(4) << value;
      if (text.find("loss") == std::string::npos) text += (text.empty() ? "" : " ") + loss.str();
    }
  }
  if (event->done == job.progress_done && event->total == job.progress_total &&
      text == job.progress_text)
    return false;
  job.progress_done = event->done;
  job.progress_total = event->total;
  job.eta_s = event->eta_s;
  job.progress_text = text;
  return true;
}

JobRecord job_of_step(const StudyPlan& plan, const StudyStep& step, ExecutorKind executor,
                      const std::string& lmk_binary) {
  JobRecord job;
  job.executor = executor_name(executor);
  job.study_dir = plan.config.dir;
  job.step = step.id;
  job.step_key = step.key;
  job.command = {lmk_binary};
  job.command.insert(job.command.end(), step.args.begin(), step.args.end());
  job.log_path = step_log_path(plan, step);
  job.outputs = step.outputs;
  return job;
}

Submission submit_study(const StudyPlan& plan, ResultsStore& store, ExecutorKind executor,
                        const std::string& lmk_binary) {
  Submission out;
  const int64_t experiment = store.get_or_create_experiment(
      plan.experiment, "lmk study " + plan.config.path + " (profile " + plan.config.profile + ")");
  // Unfinished jobs of this folder by step key: an identical step is not queued twice.
  std::map<std::string, JobRecord> queued;
  for (const JobRecord& job : store.jobs(plan.config.dir, /*unfinished=*/true))
    queued[job.step_key] = job;
  // A step queued for the other executor cannot be waited for by this one's jobs.
  for (const StudyStep& step : plan.steps) {
    const auto other = queued.find(step.key);
    if (other != queued.end() && !runs_on(other->second.executor, executor))
      throw InputError("step " + step.id + " is already a " + other->second.executor +
                       " job (run " + std::to_string(other->second.run_id) +
                       ") of this study folder; wait for it or lmk cancel it first");
  }
  std::map<std::string, int64_t> run_of_step;  // step id -> its run in this submission
  std::set<std::string> fresh_ids;             // steps that run (their dependents start afresh)
  for (const StudyStep& step : plan.steps) {
    bool dep_runs = false;
    for (const std::string& dep : step.deps) dep_runs |= fresh_ids.count(dep) > 0;
    if (!dep_runs && step_done(plan, step)) {
      ++out.done_before;
      continue;
    }
    fresh_ids.insert(step.id);
    const auto existing = queued.find(step.key);
    if (existing != queued.end()) {
      run_of_step[step.id] = existing->second.run_id;
      out.runs.push_back(existing->second.run_id);
      ++out.already_queued;
      continue;
    }
    prepare_step(step, dep_runs);
    NewRun run;
    run.name = step.store_run.empty() ? step.id : step.store_run;
    run.kind = step.kind;
    run.config = {{"study", plan.config.path},
                  {"profile", plan.config.profile},
                  {"step", step.id},
                  {"key", step.key},
                  {"args", step.args}};
    nlohmann::json cells = nlohmann::json::array();
    for (size_t c : step.cells) cells.push_back(plan.cells[c].config.cell_name);
    run.config["cells"] = cells;
    JobRecord job = job_of_step(plan, step, executor, lmk_binary);
    job.run_id = store.create_run(experiment, run);
    for (const std::string& dep : step.deps) {
      const auto it = run_of_step.find(dep);
      if (it != run_of_step.end()) job.depends_on.push_back(it->second);
    }
    store.add_job(job);
    run_of_step[step.id] = job.run_id;
    out.runs.push_back(job.run_id);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> job_environment(const JobRecord& job,
                                                                 const RunRecord& run) {
  std::vector<std::pair<std::string, std::string>> env = {{"LMK_PROGRESS_JSON", "1"}};
  // Training and evaluation commands fill the job's run instead of making their own.
  if (run.kind == "train" || run.kind == "pretrain" || run.kind == "eval")
    env.emplace_back("LMK_RUN_ID", std::to_string(job.run_id));
  return env;
}

bool finish_job(ResultsStore& store, const JobRecord& job, int exit_code, const std::string& why,
                RunStatus failure) {
  // Whoever ends a job first (its queue, lmk cancel, lmk jobs, a poller) ends its run.
  if (!store.claim_job_end(job.run_id)) return false;
  JobRecord last = job;
  read_job_progress(last);  // its last word (a short job may end between two polls)
  if (exit_code == 0 && last.progress_total > 0) last.progress_done = last.progress_total;
  store.set_job_progress(job.run_id, last.progress_done, last.progress_total, -1,
                         last.progress_text);
  const RunRecord run = store.get_run(job.run_id);
  // No exit status (its shell was killed on its own) but the command recorded its run
  // FINISHED, which training and evaluation do last: its outputs decide.
  if (exit_code < 0 && why.empty() && run.status == RunStatus::Finished) exit_code = 0;
  // A cancel may have come after `job` was read.
  const std::optional<JobRecord> now = store.job(job.run_id);
  const bool cancelled = now ? now->cancel_requested : job.cancel_requested;
  if (exit_code == 0) {
    std::error_code ec;
    std::string missing;
    for (const std::string& out : job.outputs)
      if (missing.empty() && !fs::exists(out, ec)) missing = out;
    if (missing.empty()) {
      fs::create_directories(fs::path(job.study_dir) / "steps", ec);
      AtomicFile marker((fs::path(job.study_dir) / "steps" / (job.step_key + ".done")).string());
      marker.write(job.step_key + "\n" + job.step + "\nrun " + std::to_string(job.run_id) + "\n");
      marker.commit();
      if (run.status != RunStatus::Finished) store.set_run_status(job.run_id, RunStatus::Finished);
      return true;
    }
    store.set_run_status(job.run_id, RunStatus::Failed,
                         "exited 0 without writing " + missing + "; the end of " + job.log_path +
                             ":\n" + log_tail(job.log_path, 20));
    return true;
  }
  if (cancelled) {
    store.set_run_status(job.run_id, RunStatus::Killed,
                         "cancelled" +
                             (exit_code == kExitStopped ? std::string(" (checkpoint saved)") : "") +
                             "; the end of " + job.log_path + ":\n" + log_tail(job.log_path, 5));
    return true;
  }
  std::string what = !why.empty()    ? why
                     : exit_code < 0 ? "the process ended without an exit status (killed?)"
                     : exit_code == kExitStopped ? "stopped by a signal (exit 75, checkpoint saved)"
                     : exit_code >= 128 ? "killed by signal " + std::to_string(exit_code - 128)
                                        : "exit " + std::to_string(exit_code);
  store.set_run_status(job.run_id, exit_code == kExitStopped ? RunStatus::Killed : failure,
                       what + "; the end of " + job.log_path + ":\n" + log_tail(job.log_path, 20));
  return true;
}

void update_job_progress(ResultsStore& store, JobRecord& job) {
  if (read_job_progress(job))
    store.set_job_progress(job.run_id, job.progress_done, job.progress_total, job.eta_s,
                           job.progress_text);
}

void end_unstarted(ResultsStore& store, const JobRecord& job, RunStatus status,
                   const std::string& why) {
  if (store.claim_job_end(job.run_id)) store.set_run_status(job.run_id, status, why);
}

std::unique_ptr<Executor> make_executor(ExecutorKind kind, const SlurmOptions& slurm,
                                        const LocalQueueOptions& local) {
  switch (kind) {
    case ExecutorKind::Local:
      return std::make_unique<LocalExecutor>(local);
    case ExecutorKind::Slurm:
      return std::make_unique<SlurmExecutor>(slurm);
  }
  throw std::logic_error("make_executor: unknown executor");
}

std::unique_ptr<Executor> executor_for(const JobRecord& job) {
  const ExecutorKind kind = parse_executor(job.executor, "run " + std::to_string(job.run_id));
  // Only a Slurm job's folder has (and needs) the client options of its submission.
  return make_executor(
      kind, kind == ExecutorKind::Slurm ? load_slurm_client_options(job.study_dir) : SlurmOptions{},
      LocalQueueOptions{});
}

std::vector<int64_t> refresh_jobs(ResultsStore& store,
                                  const std::function<void(const std::string&)>& warn) {
  // Runs of this host whose process died without recording how (not only jobs' runs).
  store.end_lost_runs();
  // One refresh per executor and study folder (Slurm: one batched poll with that folder's
  // client options).
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<JobRecord> firsts;
  for (JobRecord& job : store.jobs("", /*unfinished=*/true))
    if (seen.insert({job.executor, job.study_dir}).second) firsts.push_back(std::move(job));
  std::vector<int64_t> ended;
  for (const JobRecord& job : firsts) {
    try {
      for (int64_t run : executor_for(job)->refresh(store, job.study_dir)) ended.push_back(run);
    } catch (const SlurmError& e) {
      // What the store knows is still worth showing; the jobs stay as they were.
      if (warn) warn("cannot poll the Slurm jobs of " + job.study_dir + ": " + e.what());
    } catch (const InputError& e) {
      if (warn) warn(std::string("cannot refresh the jobs of ") + job.study_dir + ": " + e.what());
    }
  }
  return ended;
}

std::string cancel_job(ResultsStore& store, int64_t run_id, double grace_s) {
  const RunRecord run = store.get_run(run_id);
  const std::optional<JobRecord> found = store.job(run_id);
  if (!found)
    throw InputError("run " + std::to_string(run_id) + " (" + run.name +
                     ") is not a job (lmk submit makes jobs)");
  if (!store.request_job_cancel(run_id))
    return "run " + std::to_string(run_id) + " is already " + run_status_name(run.status);
  const JobRecord job = *store.job(run_id);
  if (job.external_id.empty()) {
    // Not started (a queue that starts it now sees the request and does not).
    end_unstarted(store, job, RunStatus::Killed, "cancelled before it started");
    return "run " + std::to_string(run_id) + " (" + job.step + "): cancelled before it started";
  }
  return executor_for(job)->stop(store, job, grace_s);
}

std::string jobs_table(const ResultsStore& store, const std::vector<JobRecord>& jobs) {
  TextTable table({"RUN", "STEP", "EXECUTOR", "JOB", "STATUS", "PROGRESS", "ETA", "LATEST"},
                  {true, false, false, false, false, false, false, false});
  for (const JobRecord& job : jobs) {
    const RunRecord run = store.get_run(job.run_id);
    std::string progress = "-";
    if (job.progress_total > 0) {
      std::ostringstream p;
      p << job.progress_done << "/" << job.progress_total << " (" << std::fixed
        << std::setprecision(0)
        << 100.0 * static_cast<double>(job.progress_done) / static_cast<double>(job.progress_total)
        << "%)";
      progress = p.str();
    }
    std::string latest = job.progress_text;
    if (run.status == RunStatus::Failed || run.status == RunStatus::Killed)
      latest = run.error_text.substr(0, run.error_text.find('\n'));
    if (latest.size() > 60) latest = latest.substr(0, 57) + "...";
    table.add_row(
        {{std::to_string(job.run_id)},
         {job.step},
         {job.executor},
         {job.external_id.empty() ? "-" : job.external_id},
         {run_status_name(run.status)},
         {progress},
         {run.status == RunStatus::Running && job.eta_s >= 0 ? format_duration(job.eta_s) : "-"},
         {latest.empty() ? "-" : latest}});
  }
  return table.render(/*terminal=*/false);
}

}  // namespace lmk
