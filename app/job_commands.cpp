// lmk submit CONFIG --executor local|slurm, lmk jobs, lmk cancel ID, lmk logs ID: a study (and
// its sweep) as jobs of the results store, run by a local queue or by Slurm
// (core/jobs/executor.h).
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "app/commands.h"
#include "core/jobs/executor.h"
#include "core/jobs/local_executor.h"
#include "core/jobs/study.h"
#include "core/store/results_store.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/runtime.h"

namespace lmk::cli {

namespace {

namespace fs = std::filesystem;

// Where `lmk submit` notes its store, for `lmk jobs` / `cancel` / `logs` without --db.
fs::path last_db_note() {
  const char* state = std::getenv("XDG_STATE_HOME");
  const char* home = std::getenv("HOME");
  const fs::path base = state && *state ? fs::path(state)
                        : home && *home ? fs::path(home) / ".local" / "state"
                                        : fs::temp_directory_path();
  return base / "lmk" / "last-db";
}

// --db, else $LMK_DB, else the store of the last lmk submit.
std::string resolve_db(const std::string& db) {
  if (!db.empty()) return db;
  if (const char* env = std::getenv("LMK_DB"); env && *env) return env;
  try {
    std::string noted = read_file(last_db_note().string());
    while (!noted.empty() && (noted.back() == '\n' || noted.back() == ' ')) noted.pop_back();
    if (!noted.empty()) return noted;
  } catch (const std::exception&) {
  }
  throw InputError("--db: no results store given (--db FILE or LMK_DB), and no lmk submit ran yet");
}

void note_db(const std::string& db) {
  std::error_code ec;
  fs::create_directories(last_db_note().parent_path(), ec);
  std::ofstream(last_db_note()) << fs::absolute(db).string() << "\n";
}

// Polls everything unfinished once; what cannot be polled is said on stderr.
void refresh_all(ResultsStore& store) {
  refresh_jobs(store, [](const std::string& line) { std::cerr << "lmk: " << line << "\n"; });
}

// Waits `seconds`, or less when a stop signal (Ctrl-C) comes.
void sleep_unless_stopped(double seconds) {
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(seconds));
  while (std::chrono::steady_clock::now() < until && !stop_requested())
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

struct SubmitArgs {
  std::string config, profile = kDefaultStudyProfile, db, dir, executor = "local";
  bool dry_run = false, wait = false;
  int64_t max_parallel = 0;
  double grace_s = 30, poll_s = 10;
};

int run_submit(const SubmitArgs& args) {
  // A dry run plans inputs of your own that are not here (they may be where the steps run).
  MissingInputs missing;
  const std::vector<StudyConfig> cells = read_study_grid(
      args.config, args.profile, args.db, args.dir, args.dry_run ? &missing : nullptr);
  const StudyPlan plan = plan_study(cells);
  const StudyConfig& config = plan.config;
  bool pending = false;
  LocalQueueOptions local;
  local.max_parallel = args.max_parallel;
  local.grace_s = args.grace_s;
  local.report = terminal_report(pending);
  local.progress_interval_s = ::isatty(2) ? 1.0 : 30.0;
  const std::unique_ptr<Executor> executor =
      make_executor(parse_executor(args.executor, "--executor"), config.slurm, local);
  std::cerr << "lmk submit: " << config.name << ", profile " << config.profile << ", "
            << plan.cells.size() << (plan.cells.size() == 1 ? " cell, " : " sweep cells, ")
            << plan.steps.size() << " steps in " << config.dir << ", results in " << config.db
            << " (experiment " << plan.experiment << ")\n";
  const std::string binary = std::filesystem::read_symlink("/proc/self/exe").string();
  if (args.dry_run) {
    if (!missing.empty()) std::cerr << "lmk submit: " << missing_inputs_line(missing) << "\n";
    for (const StudyStep& step : plan.steps) {
      const bool done = step_done(plan, step);
      std::cout << (done ? "reuse " : "run   ") << step.id << "\n";
      if (done) continue;
      // The command line (local) or the batch script (Slurm), indented under its step.
      std::istringstream text(executor->dry_run(plan, step, binary));
      for (std::string line; std::getline(text, line);) std::cout << "      " << line << "\n";
    }
    return 0;
  }
  fs::create_directories(config.dir);
  fs::create_directories(fs::path(config.db).parent_path());
  // One process records and runs a folder's steps at a time (lmk study takes the same lock).
  const StudyFolderLock lock(config.dir);
  ResultsStore store(config.db);
  note_db(config.db);
  // The workbench reads "lmk submit: N jobs" as "the jobs are in the store".
  const Submission submission =
      executor->submit(plan, store, lock, binary, [](const Submission& recorded) {
        std::cerr << "lmk submit: " << recorded.runs.size() << " jobs (" << recorded.already_queued
                  << " queued before), " << recorded.done_before << " steps done before\n";
      });
  if (pending) std::cerr << "\r\033[K";
  auto unfinished = [&] {
    for (int64_t run : submission.runs)
      if (!store.job(run)->ended) return true;
    return false;
  };
  std::vector<JobRecord> mine;
  if (unfinished()) {
    if (!args.wait) {
      for (int64_t run : submission.runs) mine.push_back(*store.job(run));
      std::cout << jobs_table(store, mine);
      std::cerr << "lmk submit: submitted; watch with `lmk jobs --db " << config.db
                << " --watch 10`\n";
      return 0;
    }
    install_stop_signals();
    while (unfinished() && !stop_requested()) {
      sleep_unless_stopped(args.poll_s);
      refresh_all(store);
    }
  }
  for (int64_t run : submission.runs)
    if (auto job = store.job(run)) mine.push_back(*job);
  size_t failed = 0;
  for (const JobRecord& job : mine)
    failed += store.get_run(job.run_id).status != RunStatus::Finished;
  if (failed > 0)
    std::cerr << "lmk submit: " << failed << " jobs did not finish (lmk jobs --db " << config.db
              << " --all shows why)\n";
  std::cout << jobs_table(store, mine) << "\n" << study_table(plan, store);
  return failed > 0 ? 1 : 0;
}

struct JobsArgs {
  std::string db, dir;
  bool all = false;
  double watch_s = 0;
};

int run_jobs(const JobsArgs& args) {
  ResultsStore store(resolve_db(args.db), ResultsStore::OpenMode::Existing);
  const bool tty = ::isatty(1);
  install_stop_signals();
  for (;;) {
    refresh_all(store);
    const std::string dir =
        args.dir.empty() ? "" : fs::absolute(args.dir).lexically_normal().string();
    const std::vector<JobRecord> jobs = store.jobs(dir, /*unfinished=*/!args.all);
    std::ostringstream out;
    if (jobs.empty())
      out << (args.all ? "no jobs\n" : "no unfinished jobs (--all lists the ended ones too)\n");
    else
      out << jobs_table(store, jobs);
    if (args.watch_s > 0 && tty) std::cout << "\033[H\033[2J";
    std::cout << out.str() << std::flush;
    if (args.watch_s <= 0 || stop_requested()) return 0;
    sleep_unless_stopped(args.watch_s);
    if (stop_requested()) return 0;
    if (!tty) std::cout << "\n";
  }
}

struct CancelArgs {
  std::string db;
  std::vector<int64_t> runs;
  double grace_s = 30;
};

int run_cancel(const CancelArgs& args) {
  ResultsStore store(resolve_db(args.db), ResultsStore::OpenMode::Existing);
  for (int64_t run : args.runs) {
    std::cout << cancel_job(store, run, args.grace_s) << "\n";
  }
  return 0;
}

struct LogsArgs {
  std::string db;
  int64_t run = 0, tail = 0;
  bool follow = false;
};

int run_logs(const LogsArgs& args) {
  ResultsStore store(resolve_db(args.db), ResultsStore::OpenMode::Existing);
  const std::optional<JobRecord> job = store.job(args.run);
  if (!job) {
    const RunRecord run = store.get_run(args.run);  // names a missing run
    throw InputError("run " + std::to_string(args.run) + " (" + run.name +
                     ") has no job log (lmk submit makes jobs)");
  }
  std::error_code ec;
  if (!fs::exists(job->log_path, ec)) {
    std::cerr << "lmk logs: " << job->log_path << " does not exist yet (run "
              << run_status_name(store.get_run(args.run).status) << ")\n";
    if (!args.follow) return 0;
  }
  std::string text;
  try {
    text = fs::exists(job->log_path, ec) ? read_file(job->log_path) : "";
  } catch (const std::exception&) {
  }
  if (args.tail > 0) {
    // The last N lines, the one being written (no newline yet) included.
    size_t end = text.size();
    if (end > 0 && text[end - 1] == '\n') --end;
    size_t at = end;
    for (int64_t n = 0; n < args.tail && at != std::string::npos && at > 0; ++n)
      at = text.rfind('\n', at - 1);
    if (at != std::string::npos && at < end) text = text.substr(at + 1);
  }
  std::cout << text << std::flush;
  if (!args.follow) return 0;
  size_t offset = fs::exists(job->log_path, ec) ? fs::file_size(job->log_path, ec) : 0;
  install_stop_signals();
  auto print_new = [&] {
    const size_t size = fs::exists(job->log_path, ec) ? fs::file_size(job->log_path, ec) : 0;
    if (size <= offset) return;
    std::ifstream in(job->log_path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    std::string more(size - offset, '\0');
    in.read(more.data(), static_cast<std::streamsize>(more.size()));
    std::cout << more << std::flush;
    offset = size;
  };
  // Until the job has ended (not its run: a command may mark its run over before it exits,
  // and a requeued Slurm job's run is KILLED between attempts), its executor asked as often as
  // it says (Slurm's controller every 10 s).
  const double poll_s = executor_for(*job)->poll_interval_s();
  auto last_poll = std::chrono::steady_clock::now() - std::chrono::hours(1);
  while (!stop_requested()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    print_new();
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - last_poll).count() >=
        poll_s) {
      last_poll = std::chrono::steady_clock::now();
      refresh_all(store);
    }
    if (store.job(args.run)->ended) break;
  }
  print_new();
  return 0;
}

}  // namespace

Runner add_submit_command(CLI::App& app) {
  auto args = std::make_shared<SubmitArgs>();
  auto* cmd = app.add_subcommand(
      "submit", "Run a study (and its sweep) as jobs: a local queue or Slurm batch jobs");
  cmd->add_option("CONFIG", args->config, "study config (TOML)")->required();
  cmd->add_option("--executor", args->executor, "local | slurm")->capture_default_str();
  cmd->add_option("--profile", args->profile, "micro | quick | full")->capture_default_str();
  cmd->add_option("--db", args->db, "results database (default: the config's)");
  cmd->add_option("--dir", args->dir, "study folder (default: the config's)");
  cmd->add_flag("--dry-run", args->dry_run,
                "print the steps and the commands (Slurm: the batch scripts); submit nothing");
  cmd->add_option("--max-parallel", args->max_parallel,
                  "local: jobs at once (default, or 0: half the cores, at least 1)")
      ->check(whole(0, 4096));
  cmd->add_option("--grace", args->grace_s, "local: seconds from SIGTERM to SIGKILL on cancel")
      ->capture_default_str()
      ->check(real(0, 86400));
  cmd->add_flag("--wait", args->wait, "slurm: poll until every job is over");
  cmd->add_option("--poll", args->poll_s, "slurm --wait: seconds between polls")
      ->capture_default_str()
      ->check(real(0.2, 3600));
  return [args] { return run_submit(*args); };
}

Runner add_jobs_command(CLI::App& app) {
  auto args = std::make_shared<JobsArgs>();
  auto* cmd = app.add_subcommand("jobs", "List jobs: status, progress, ETA (polls Slurm)");
  cmd->add_option("--db", args->db, "results database (default: $LMK_DB, else the last submit's)");
  cmd->add_option("--dir", args->dir, "only the jobs of this study folder");
  cmd->add_flag("--all", args->all, "also the jobs that are over");
  cmd->add_option("--watch", args->watch_s, "refresh every this many seconds until Ctrl-C")
      ->check(real(0.1, 86400));
  return [args] { return run_jobs(*args); };
}

Runner add_cancel_command(CLI::App& app) {
  auto args = std::make_shared<CancelArgs>();
  auto* cmd = app.add_subcommand("cancel", "Cancel jobs (SIGTERM: training saves a checkpoint)");
  cmd->add_option("ID", args->runs, "run ids of the jobs (lmk jobs)")
      ->required()
      ->check(whole(1, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--db", args->db, "results database (default: $LMK_DB, else the last submit's)");
  cmd->add_option("--grace", args->grace_s, "local: seconds from SIGTERM to SIGKILL")
      ->capture_default_str()
      ->check(real(0, 86400));
  return [args] { return run_cancel(*args); };
}

Runner add_logs_command(CLI::App& app) {
  auto args = std::make_shared<LogsArgs>();
  auto* cmd = app.add_subcommand("logs", "Print a job's log");
  cmd->add_option("ID", args->run, "run id of the job (lmk jobs)")
      ->required()
      ->check(whole(1, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--db", args->db, "results database (default: $LMK_DB, else the last submit's)");
  cmd->add_option("--tail", args->tail, "only the last N lines")->check(whole(1));
  cmd->add_flag("--follow,-f", args->follow, "keep printing what is appended until the job ends");
  return [args] { return run_logs(*args); };
}

}  // namespace lmk::cli
