// The Slurm executor (core/jobs/slurm_executor.h).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include "core/jobs/slurm_executor.h"
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
  if (kind != "train" && kind != "pretrain" && kind != "eval") {
    // Data preparation is one process without a GPU: several tasks would race on its outputs.
    // Training and evaluation run one task per GPU under srun (an evaluation's processes share
    // the encoding, and rank 0 records: engine/eval/retrieval.h).
    step.nodes = 1;
    step.ntasks_per_node = 1;
    step.gpus_per_node = 0;
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
  fs::create_directories(fs::path(plan.config.dir) / "jobs");
  std::set<std::string> keys;
  for (const StudyStep& step : plan.steps) keys.insert(step.key);
  for (const JobRecord& job : store.jobs(plan.config.dir, /*unfinished=*/true)) {
    if (!runs_on(job.executor, ExecutorKind::Slurm) || !job.external_id.empty() ||
        !keys.count(job.step_key))
      continue;
    const RunRecord run = store.get_run(job.run_id);
    std::vector<std::string> after;
    std::string blocked;
    for (int64_t dep : job.depends_on) {
      const std::optional<JobRecord> d = store.job(dep);
      const RunRecord dep_run = store.get_run(dep);
      if (d && d->ended && dep_run.status != RunStatus::Finished)
        blocked = dep_run.name + " is " + run_status_name(dep_run.status);
      else if (d && !d->ended && runs_on(d->executor, ExecutorKind::Slurm) &&
               !d->external_id.empty())
        after.push_back(d->external_id);
      else if (d && !d->ended)
        blocked = dep_run.name + " was not submitted";
    }
    if (!blocked.empty()) {
      if (store.claim_job_end(job.run_id))
        store.set_run_status(job.run_id, RunStatus::Failed, "not run: dependency " + blocked);
      continue;
    }
    auto [step_options, spec] = slurm_job(job, run.kind, options);
    spec.after_ok = after;
    const std::string script =
        (fs::path(plan.config.dir) / "jobs" / (std::to_string(job.run_id) + ".sbatch")).string();
    const std::string id = slurm.submit(spec, script, step_options);
    if (!store.mark_job_started(job.run_id, id, "")) slurm.cancel(id);  // cancelled meanwhile
  }
}

namespace {

// The exit status the batch script reported for its last attempt ("[lmk] the command exited
// with N"), for a job Slurm has forgotten.
std::optional<int> logged_exit(const JobRecord& job) {
  std::string text;
  try {
    text = read_file(job.log_path);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string mark = "[lmk] the command exited with ";
  const size_t at = text.rfind(mark);
  if (at == std::string::npos || text.find("[lmk] job ", at) != std::string::npos)
    return std::nullopt;
  const std::string digits = text.substr(at + mark.size(), 3);
  const size_t used = digits.find_first_not_of("0123456789");
  if (used == 0) return std::nullopt;
  return std::stoi(digits.substr(0, used));
}

}  // namespace

std::vector<int64_t> poll_slurm_jobs(ResultsStore& store, SlurmClient& slurm,
                                     const std::string& study_dir) {
  std::vector<JobRecord> jobs;
  std::vector<std::string> ids;
  for (JobRecord& job : store.jobs(study_dir, /*unfinished=*/true)) {
    if (!runs_on(job.executor, ExecutorKind::Slurm) || job.external_id.empty()) continue;
    ids.push_back(job.external_id);
    jobs.push_back(std::move(job));
  }
  std::vector<int64_t> ended;
  if (ids.empty()) return ended;
  std::map<std::string, SlurmJobState> states = slurm.poll(ids);
  // Terminal states seen while Slurm requeues a job (preemption, or the script's own requeue)
  // pass: ask once more for those before ending anything.
  std::vector<std::string> again;
  for (const JobRecord& job : jobs) {
    const SlurmStatus status = states[job.external_id].status;
    if (status == SlurmStatus::Failed || status == SlurmStatus::Killed ||
        status == SlurmStatus::Unknown)
      again.push_back(job.external_id);
  }
  if (!again.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    for (auto& [id, state] : slurm.poll(again)) states[id] = state;
  }
  for (JobRecord& job : jobs) {
    const SlurmJobState state = states[job.external_id];
    const std::string slurm_words = "Slurm job " + job.external_id + " " +
                                    (state.state.empty() ? "unknown" : state.state) +
                                    (state.reason.empty() ? "" : " (" + state.reason + ")");
    const bool terminal = state.status == SlurmStatus::Failed ||
                          state.status == SlurmStatus::Killed ||
                          state.status == SlurmStatus::Unknown;
    if (terminal && !job.cancel_requested && being_requeued(job)) continue;
    bool done = false;
    if (state.reason == "DependencyNeverSatisfied") {
      // A dependency failed: Slurm cancels it (kill-on-invalid-dep), or it would wait forever.
      if (state.status == SlurmStatus::Pending) slurm.cancel(job.external_id);
      done = finish_job(store, job, -1, "not run: a dependency failed (" + slurm_words + ")",
                        job.cancel_requested ? RunStatus::Killed : RunStatus::Failed);
    } else {
      switch (state.status) {
        case SlurmStatus::Finished:
          done = finish_job(store, job, 0);
          break;
        case SlurmStatus::Failed:
          done = finish_job(
              store, job, state.exit_code > 0 ? state.exit_code : -1,
              slurm_words +
                  (state.exit_code > 0 ? ", exit " + std::to_string(state.exit_code) : ""));
          break;
        case SlurmStatus::Killed:
          done = finish_job(store, job, -1, slurm_words, RunStatus::Killed);
          break;
        case SlurmStatus::Unknown:
          // Forgotten (no accounting, ended long ago): the batch script's own last word.
          if (const auto code = logged_exit(job))
            done = finish_job(store, job, *code, *code == 0 ? "" : "exit " + std::to_string(*code));
          else
            done = finish_job(store, job, -1, slurm_words + ": Slurm no longer knows the job");
          break;
        case SlurmStatus::Running: {
          // RUNNING, or again after a requeue (the stopped attempt had set it KILLED).
          const RunRecord run = store.get_run(job.run_id);
          const std::optional<JobRecord> now = store.job(job.run_id);
          if (now && !now->ended &&
              (run.status == RunStatus::Scheduled || run.status == RunStatus::Killed))
            store.set_run_status(job.run_id, RunStatus::Running);
          update_job_progress(store, job);
          break;
        }
        case SlurmStatus::Pending:
          update_job_progress(store, job);
          break;
      }
    }
    if (done) ended.push_back(job.run_id);
  }
  return ended;
}

void save_slurm_client_options(const std::string& study_dir, const SlurmOptions& options) {
  fs::create_directories(fs::path(study_dir) / "jobs");
  AtomicFile out((fs::path(study_dir) / "jobs" / "slurm.json").string());
  out.write(nlohmann::json{{"command_prefix", options.command_prefix}, {"bin_dir", options.bin_dir}}
                .dump() +
            "\n");
  out.commit();
}

SlurmOptions load_slurm_client_options(const std::string& study_dir) {
  SlurmOptions options;
  const std::string path = (fs::path(study_dir) / "jobs" / "slurm.json").string();
  std::error_code ec;
  if (!fs::exists(path, ec)) return options;  // sbatch & co. on PATH
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(path));
    options.command_prefix = j.at("command_prefix").get<std::vector<std::string>>();
    options.bin_dir = j.at("bin_dir").get<std::string>();
  } catch (const std::exception& e) {
    throw input_error(path, std::string("unreadable Slurm client options (") + e.what() + ")");
  }
  return options;
}

SlurmExecutor::SlurmExecutor(SlurmOptions options)
    : options_(std::move(options)), client_(options_) {}

std::string SlurmExecutor::dry_run(const StudyPlan& plan, const StudyStep& step,
                                   const std::string& lmk_binary) const {
  const JobRecord job = job_of_step(plan, step, kind(), lmk_binary);
  const auto [options, spec] = slurm_job(job, step.kind, options_);
  return "# " + plan.config.dir + "/jobs/RUN.sbatch\n" + slurm_script(options, spec);
}

Submission SlurmExecutor::submit(const StudyPlan& plan, ResultsStore& store,
                                 const StudyFolderLock& held, const std::string& lmk_binary,
                                 const Recorded& recorded) {
  (void)held;  // the caller holds the folder while its jobs are recorded and submitted
  save_slurm_client_options(plan.config.dir, options_);
  // What happened to earlier jobs of the folder first (a dependency may have ended).
  poll_slurm_jobs(store, client_, plan.config.dir);
  const Submission submission = submit_study(plan, store, kind(), lmk_binary);
  if (recorded) recorded(submission);
  submit_slurm_jobs(plan, store, client_, options_);
  return submission;
}

std::vector<int64_t> SlurmExecutor::refresh(ResultsStore& store, const std::string& study_dir) {
  return poll_slurm_jobs(store, client_, study_dir);
}

std::string SlurmExecutor::stop(ResultsStore& store, const JobRecord& job, double grace_s) {
  (void)store;
  (void)grace_s;  // the batch script gives the command Slurm's KillWait
  client_.cancel(job.external_id);
  return "run " + std::to_string(job.run_id) + " (" + job.step + "): scancel " + job.external_id;
}

}  // namespace lmk
