// The local executor (core/jobs/local_executor.h).
#include "core/jobs/local_executor.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/process.h"
#include "core/util/progress.h"
#include "core/util/runtime.h"

namespace lmk {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

std::string exit_file(const JobRecord& job) {
  return (fs::path(job.study_dir) / "jobs" / (std::to_string(job.run_id) + ".exit")).string();
}

std::optional<int> read_exit_file(const JobRecord& job) {
  std::string text;
  try {
    text = read_file(exit_file(job));
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const size_t digits = text.find_first_not_of("0123456789");
  const std::string number = text.substr(0, digits);
  if (number.empty() || number.size() > 3) return std::nullopt;
  return std::stoi(number);
}

}  // namespace

bool local_job_alive(const JobRecord& job) {
  if (job.external_id.empty()) return false;
  const int64_t pid = std::atoll(job.external_id.c_str());
  if (pid <= 0) return false;
  const std::string start = process_start_time(pid);
  if (!start.empty() && start == job.process_start) return true;
  // The shell is gone (killed on its own): the job lives while its process group (the lmk
  // command under it) has members.
  return ::kill(-static_cast<pid_t>(pid), 0) == 0;
}

std::optional<int> local_job_exit(const JobRecord& job) {
  if (const auto code = read_exit_file(job)) return code;
  if (local_job_alive(job)) return std::nullopt;
  if (const auto code = read_exit_file(job)) return code;  // written as it ended
  return -1;
}

int64_t default_parallel_jobs() {
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  return std::max<int64_t>(1, (cores > 0 ? cores : 1) / 2);
}

namespace {

// Starts the job: `sh -c` in a session of its own, output appended to its log, its exit
// status written to DIR/jobs/RUN.exit by the shell (which outlives a SIGTERM to the group
// through its trap, so the status of a job that stops gracefully is recorded). Once the
// command has ended the shell ignores SIGTERM and SIGINT, and so does the `mv` it starts: a
// second SIGTERM to the group (lmk cancel and the queue both send one) would otherwise kill the
// `mv` and lose the status (a checkpoint saved, exit 75, read as no status at all).
pid_t start_local_job(const JobRecord& job, const RunRecord& run, int64_t threads) {
  std::error_code ec;
  fs::create_directories(fs::path(exit_file(job)).parent_path(), ec);
  fs::create_directories(fs::path(job.log_path).parent_path(), ec);
  fs::remove(exit_file(job), ec);
  const std::string header = "=== lmk job: run " + std::to_string(job.run_id) + " (" + job.step +
                             "), attempt " + std::to_string(job.attempts + 1) + "\n";
  if (!append_to_log(job.log_path, header))
    throw input_error(job.log_path, "cannot write the job's log");
  const std::string script = "trap : TERM INT; \"$@\"; code=$?; trap '' TERM INT; echo $code > " +
                             shell_quote(exit_file(job) + ".tmp") + " && mv " +
                             shell_quote(exit_file(job) + ".tmp") + " " +
                             shell_quote(exit_file(job)) + "; exit $code";
  ChildSpec child;
  child.argv = {"/bin/sh", "-c", script, "lmk-job"};
  child.argv.insert(child.argv.end(), job.command.begin(), job.command.end());
  child.env = job_environment(job, run);
  if (std::getenv("LMK_THREADS") == nullptr)
    child.env.emplace_back("LMK_THREADS", std::to_string(threads));
  child.log_path = job.log_path;
  child.append = true;
  // Its own session: the queue, lmk cancel and lmk jobs signal it as a group (-pid), and a
  // Ctrl-C on the queue's terminal does not reach it (the queue stops it with a grace period).
  child.group = ChildSpec::Group::Session;
  // The queue's own stop signals must not be inherited as ignored, nor blocked.
  child.default_signals = {SIGTERM, SIGINT, SIGUSR1};
  child.name = "job " + std::to_string(job.run_id);
  return start_child(child);
}

struct Running {
  Clock::time_point term_sent{};
  bool termed = false;
  Clock::time_point last_report = Clock::now();
};

// One pass of the queue at a time (run_local_queue): the jobs of the plan's steps that are not
// over, each followed (started ones) or started or ended (waiting ones).
class LocalQueue {
 public:
  LocalQueue(const StudyPlan& plan, ResultsStore& store, const LocalQueueOptions& options)
      : plan_(plan), store_(store), options_(options) {
    report_ = options.report ? options.report : [](const std::string&, bool) {};
    parallel_ = options.max_parallel > 0 ? options.max_parallel : default_parallel_jobs();
    const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
    threads_ = std::max<int64_t>(1, (cores > 0 ? cores : 1) / parallel_);
    for (const StudyStep& step : plan.steps) keys_.insert(step.key);
  }

  size_t run() {
    install_stop_signals();
    for (;;) {
      // Reap finished children (their exit files say how they ended).
      while (::waitpid(-1, nullptr, WNOHANG) > 0) {
      }
      if (stop_requested() && !stopping_) {
        stopping_ = true;
        report_("lmk submit: stopping — cancelling the running jobs (they save checkpoints)",
                false);
      }
      std::vector<JobRecord> jobs = load();
      if (jobs.empty()) break;
      active_ = 0;
      waiting_ = false;
      for (JobRecord& job : jobs) {
        if (!job.external_id.empty())
          follow_started(job);
        else
          start_or_end(job);
      }
      if (active_ == 0 && !waiting_) continue;  // everything left was just ended
      std::this_thread::sleep_for(std::chrono::duration<double>(options_.poll_s));
    }
    size_t not_finished = 0;
    for (const int64_t run : seen_)
      if (store_.get_run(run).status != RunStatus::Finished) ++not_finished;
    return not_finished;
  }

 private:
  const StudyPlan& plan_;
  ResultsStore& store_;
  const LocalQueueOptions& options_;
  StudyReport report_;
  int64_t parallel_ = 1, threads_ = 1;
  std::set<std::string> keys_;
  std::map<int64_t, Running> running_;
  // The runs of every job this queue saw not over: however each one ends (here, by lmk cancel,
  // by a dependency that failed), the count of those not FINISHED is what the queue returns.
  std::set<int64_t> seen_;
  bool stopping_ = false;
  size_t active_ = 0;     // this pass: jobs running
  bool waiting_ = false;  // this pass: a job waits for a dependency or a free slot

  std::vector<JobRecord> load() {
    std::vector<JobRecord> mine;
    for (JobRecord& job : store_.jobs(plan_.config.dir, /*unfinished=*/true))
      if (runs_on(job.executor, ExecutorKind::Local) && keys_.count(job.step_key)) {
        seen_.insert(job.run_id);
        mine.push_back(std::move(job));
      }
    return mine;
  }

  void say_end(const JobRecord& job) {
    running_.erase(job.run_id);
    const RunRecord run = store_.get_run(job.run_id);
    report_("job " + std::to_string(job.run_id) + " " + job.step + ": " +
                run_status_name(run.status) +
                (run.status == RunStatus::Finished
                     ? ""
                     : " — " + run.error_text.substr(0, run.error_text.find('\n'))),
            false);
  }

  // A started job ends by its exit file (its process may have set its run's status already);
  // until then it is signalled when cancelled or stopping, and its progress is reported.
  void follow_started(JobRecord& job) {
    if (const auto code = local_job_exit(job)) {
      if (finish_job(store_, job, *code)) say_end(job);
      running_.erase(job.run_id);
      return;
    }
    ++active_;
    if (!running_.count(job.run_id)) {
      report_("job " + std::to_string(job.run_id) + " " + job.step + ": re-attached (pid " +
                  job.external_id + ", started by an earlier queue)",
              false);
    }
    Running& r = running_[job.run_id];
    const pid_t group = static_cast<pid_t>(std::atoll(job.external_id.c_str()));
    if ((job.cancel_requested || stopping_) && !r.termed && group > 0) {
      if (!job.cancel_requested) store_.request_job_cancel(job.run_id);
      ::kill(-group, SIGTERM);
      r.termed = true;
      r.term_sent = Clock::now();
    } else if (r.termed && group > 0 &&
               std::chrono::duration<double>(Clock::now() - r.term_sent).count() >
                   options_.grace_s) {
      ::kill(-group, SIGKILL);
    }
    update_job_progress(store_, job);
    if (std::chrono::duration<double>(Clock::now() - r.last_report).count() >=
        options_.progress_interval_s) {
      r.last_report = Clock::now();
      std::string line = "  " + job.step + ": ";
      if (job.progress_total > 0)
        line += std::to_string(job.progress_done) + "/" + std::to_string(job.progress_total) + " ";
      line += job.progress_text;
      if (job.eta_s >= 0) line += " (ETA " + format_duration(job.eta_s) + ")";
      report_(line, true);
    }
  }

  // A job not started yet: ended when cancelled, stopping or a dependency failed; started when
  // its dependencies finished and a slot is free; else it waits.
  void start_or_end(JobRecord& job) {
    if (job.cancel_requested || stopping_) {
      end_unstarted(store_, job, RunStatus::Killed,
                    stopping_ ? "not started: lmk submit was stopped" : "cancelled");
      return;
    }
    bool ready = true;
    std::string blocked;
    for (int64_t dep : job.depends_on) {
      const RunRecord d = store_.get_run(dep);
      const std::optional<JobRecord> dj = store_.job(dep);
      const bool over = !dj || dj->ended;
      if (over && d.status != RunStatus::Finished)
        blocked = d.name + " is " + run_status_name(d.status);
      ready &= over && d.status == RunStatus::Finished;
    }
    if (!blocked.empty()) {
      end_unstarted(store_, job, RunStatus::Failed, "not run: dependency " + blocked);
      report_("job " + std::to_string(job.run_id) + " " + job.step +
                  ": FAILED — not run: dependency " + blocked,
              false);
      return;
    }
    waiting_ = true;
    if (!ready || static_cast<int64_t>(active_) >= parallel_) return;
    const RunRecord run = store_.get_run(job.run_id);
    const pid_t pid = start_local_job(job, run, threads_);
    if (!store_.mark_job_started(job.run_id, std::to_string(pid), process_start_time(pid))) {
      // Cancelled (or ended) while it was being started.
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      end_unstarted(store_, job, RunStatus::Killed, "cancelled before it started");
      return;
    }
    store_.set_run_status(job.run_id, RunStatus::Running);
    running_[job.run_id] = Running{};
    ++active_;
    report_("job " + std::to_string(job.run_id) + " " + job.step + ": started (pid " +
                std::to_string(pid) + ", log " + job.log_path + ")",
            false);
  }
};

}  // namespace

size_t run_local_queue(const StudyPlan& plan, ResultsStore& store, const StudyFolderLock& held,
                       const LocalQueueOptions& options) {
  (void)held;  // the caller holds the folder (taken before its jobs were recorded)
  return LocalQueue(plan, store, options).run();
}

std::string LocalExecutor::dry_run(const StudyPlan&, const StudyStep& step,
                                   const std::string& lmk_binary) const {
  std::string line = lmk_binary;
  for (const std::string& a : step.args) line += " " + shell_quote(a);
  return line;
}

Submission LocalExecutor::submit(const StudyPlan& plan, ResultsStore& store,
                                 const StudyFolderLock& held, const std::string& lmk_binary,
                                 const Recorded& recorded) {
  const Submission submission = submit_study(plan, store, kind(), lmk_binary);
  if (recorded) recorded(submission);
  run_local_queue(plan, store, held, options_);
  return submission;
}

std::vector<int64_t> LocalExecutor::refresh(ResultsStore& store, const std::string& study_dir) {
  std::vector<int64_t> ended;
  std::map<std::string, std::vector<JobRecord>> by_folder;
  for (JobRecord& job : store.jobs(study_dir, /*unfinished=*/true))
    if (runs_on(job.executor, kind()) && !job.external_id.empty())
      by_folder[job.study_dir].push_back(std::move(job));
  for (auto& [dir, jobs] : by_folder) {
    // A folder whose queue runs is that queue's business; holding its lock meanwhile keeps a
    // queue from starting on it while these jobs are ended.
    std::optional<StudyFolderLock> lock;
    try {
      lock.emplace(dir, /*wait_s=*/0);
    } catch (const InputError&) {
      continue;
    }
    for (JobRecord& job : jobs) {
      if (const auto code = local_job_exit(job)) {
        if (finish_job(store, job, *code)) ended.push_back(job.run_id);
      } else {
        update_job_progress(store, job);
      }
    }
  }
  return ended;
}

std::string LocalExecutor::stop(ResultsStore& store, const JobRecord& job, double grace_s) {
  if (const auto code = local_job_exit(job)) {
    finish_job(store, job, *code);
    return "run " + std::to_string(job.run_id) + ": its process had ended";
  }
  const pid_t group = static_cast<pid_t>(std::atoll(job.external_id.c_str()));
  if (group <= 0 || (::kill(-group, SIGTERM) != 0 && errno != ESRCH))
    throw InputError("run " + std::to_string(job.run_id) + ": cannot signal process group " +
                     job.external_id + ": " + std::strerror(errno));
  const auto start = Clock::now();
  bool killed = false;
  std::optional<int> code;
  while (!(code = local_job_exit(job))) {
    const double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (!killed && waited > grace_s) {
      ::kill(-group, SIGKILL);
      killed = true;
    }
    if (waited > grace_s + 30)
      throw InputError("run " + std::to_string(job.run_id) + ": process group " + job.external_id +
                       " is still there " + std::to_string(static_cast<int>(waited)) +
                       " s after SIGTERM and SIGKILL");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // The queue (when one runs) may end the job first; either way it ends once.
  finish_job(store, job, *code);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::ostringstream out;
  out << "run " << job.run_id << " (" << job.step
      << "): " << (killed ? "SIGKILL after " : "stopped in ") << std::fixed << std::setprecision(1)
      << seconds << " s, " << run_status_name(store.get_run(job.run_id).status);
  return out.str();
}

}  // namespace lmk
