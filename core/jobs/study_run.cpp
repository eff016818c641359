// Running a study (core/jobs/study.h): its steps as `lmk` child processes with their logs, the
// markers that let a later run reuse a finished step, and the lock that keeps one study process
// per folder. The plan itself is made in study.cpp.
#include "core/jobs/study.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <set>
#include <sstream>
#include <thread>

#include "core/store/results_store.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/process.h"

namespace lmk {

namespace {

namespace fs = std::filesystem;

std::string marker_path(const StudyPlan& plan, const StudyStep& step) {
  return (fs::path(plan.config.dir) / "steps" / (step.key + ".done")).string();
}

// The last non-empty line of a file (progress bars end lines with \r: the last segment).
std::string last_line(const std::string& path) {
  std::string tail = read_file_tail(path, 4096);
  std::replace(tail.begin(), tail.end(), '\r', '\n');
  std::istringstream lines(tail);
  std::string line, last;
  while (std::getline(lines, line))
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  return last;
}

std::string format_seconds(double s) {
  std::ostringstream out;
  if (s < 60)
    out << std::fixed << std::setprecision(1) << s << " s";
  else
    out << static_cast<int64_t>(s) / 60 << " min " << static_cast<int64_t>(s) % 60 << " s";
  return out.str();
}

// Runs lmk with args, output to log; returns the exit status (or 128 + signal). The latest log
// line goes to `report` every interval_s.
int run_step_process(const std::string& binary, const std::vector<std::string>& args,
                     const std::string& log, const std::string& label, const StudyReport& report,
                     double interval_s) {
  ChildSpec child;
  child.argv = {binary};
  child.argv.insert(child.argv.end(), args.begin(), args.end());
  child.log_path = log;
  child.name = label;
  auto last_report = std::chrono::steady_clock::now();
  const ChildResult r = run_child(child, std::numeric_limits<double>::infinity(), [&] {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_report).count() >= interval_s) {
      last_report = now;
      const std::string line = last_line(log);
      if (!line.empty()) report("  " + label + ": " + line, true);
    }
  });
  // No process could be made at all (too many processes): not the step's failure.
  if (r.spawn_error == EAGAIN) throw InputError("cannot start a process for " + label);
  if (r.spawn_error != 0) {
    // The program itself could not run: said in its log, with a shell's exit status.
    append_to_log(log, "cannot run " + binary + "\n");
    return 127;
  }
  return r.code;
}

}  // namespace

std::string log_tail(const std::string& path, size_t count) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception&) {
    return "";
  }
  std::replace(text.begin(), text.end(), '\r', '\n');
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::string out;
  for (size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i)
    out += "    " + lines[i] + "\n";
  return out;
}

bool step_done(const StudyPlan& plan, const StudyStep& step) {
  std::error_code ec;
  const std::string marker = marker_path(plan, step);
  if (!fs::exists(marker, ec)) return false;
  std::string recorded;
  try {
    recorded = read_file(marker);
  } catch (const std::exception&) {
    return false;
  }
  if (recorded.substr(0, step.key.size()) != step.key) return false;
  for (const std::string& out : step.outputs)
    if (!fs::exists(out, ec)) return false;
  if (step.store_run.empty() && step.store_histogram.empty()) return true;
  // What the step leaves in the store must be there (a deleted or new store file runs it again).
  if (!fs::exists(plan.config.db, ec)) return false;
  const ResultsStore store(plan.config.db, ResultsStore::OpenMode::Existing);
  if (!step.store_histogram.empty() && store.length_histograms(step.store_histogram).empty())
    return false;
  if (!step.store_run.empty()) {
    RunFilter filter;
    filter.experiment = plan.experiment;
    filter.status = RunStatus::Finished;
    bool found = false;
    for (const RunRecord& run : store.list_runs(filter)) found |= run.name == step.store_run;
    if (!found) return false;
  }
  return true;
}

StudyFolderLock::StudyFolderLock(const std::string& dir, double wait_s) {
  fs::create_directories(dir);
  const std::string path = (fs::path(dir) / "study.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw input_error(path, "cannot open the study's lock file");
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(wait_s));
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(fd_);
      throw input_error(dir, "another lmk study or lmk submit is running on this folder");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

StudyFolderLock::~StudyFolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::string step_log_path(const StudyPlan& plan, const StudyStep& step) {
  std::string name = step.id;
  std::replace(name.begin(), name.end(), '/', '_');
  return (fs::path(plan.config.dir) / "logs" / (name + "-" + step.key.substr(0, 12) + ".log"))
      .string();
}

void mark_step_done(const StudyPlan& plan, const StudyStep& step, double seconds) {
  std::error_code ec;
  for (const std::string& out : step.outputs) {
    if (!fs::exists(out, ec))
      throw InputError("study step " + step.id + " finished without writing " + out);
  }
  fs::create_directories(fs::path(marker_path(plan, step)).parent_path());
  AtomicFile marker(marker_path(plan, step));
  marker.write(step.key + "\n" + step.id + "\n" + std::to_string(seconds) + " s\n");
  marker.commit();
}

void prepare_step(const StudyStep& step, bool fresh) {
  std::error_code ec;
  if (fresh) fs::remove_all(step.dir, ec);
  // Training steps continue from a checkpoint in their folder (--auto-resume): a checkpoint
  // there was written by the same inputs, unless `fresh`. Other steps start over.
  const bool resumes = step.kind == "train" || step.kind == "pretrain";
  for (const std::string& out : step.outputs) {
    if (!resumes && (fs::is_regular_file(out, ec) || fs::is_directory(out, ec)))
      fs::remove_all(out, ec);
    fs::create_directories(fs::path(out).parent_path(), ec);
  }
  for (const auto& [file, content] : step.files) {
    fs::create_directories(fs::path(file).parent_path());
    AtomicFile f(file);
    f.write(content);
    f.commit();
  }
}

StudyRunSummary run_study(const StudyPlan& plan, const std::string& lmk_binary,
                          const StudyReport& report, double interval_s) {
  const auto start = std::chrono::steady_clock::now();
  StudyRunSummary summary;
  fs::create_directories(fs::path(plan.config.dir) / "steps");
  // One study process per folder: a second one would run the same steps into the same files.
  const StudyFolderLock lock(plan.config.dir);
  fs::create_directories(fs::path(plan.config.dir) / "logs");
  std::set<std::string> ran;
  const size_t total = plan.steps.size();
  for (size_t i = 0; i < total; ++i) {
    const StudyStep& step = plan.steps[i];
    const std::string counter = "[" + std::to_string(i + 1) + "/" + std::to_string(total) + "]";
    bool dep_ran = false;
    for (const std::string& dep : step.deps) dep_ran |= ran.count(dep) > 0;
    if (!dep_ran && step_done(plan, step)) {
      ++summary.reused;
      report("study " + counter + " " + step.id + ": done before, reused", false);
      continue;
    }
    std::error_code ec;
    fs::remove(marker_path(plan, step), ec);
    // A training step stopped part-way (killed, Ctrl-C) continues from its last checkpoint, as
    // its folder is its inputs' (DIR/ID/KEY); after a dependency ran again it starts afresh.
    if (!dep_ran && (step.kind == "train" || step.kind == "pretrain")) {
      for (const char* name : {"checkpoint", "checkpoint.new", "checkpoint.old"}) {
        if (fs::exists(fs::path(step.dir) / name / "state.json", ec)) {
          report("study " + counter + " " + step.id + ": continuing from its checkpoint", false);
          break;
        }
      }
    }
    prepare_step(step, dep_ran);
    const std::string log = step_log_path(plan, step);
    report("study " + counter + " " + step.id + " (log: " + log + ")", false);
    const auto step_start = std::chrono::steady_clock::now();
    const int status = run_step_process(lmk_binary, step.args, log, step.id, report, interval_s);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
    if (status != 0) {
      throw InputError("study step " + step.id + " failed (exit " + std::to_string(status) +
                       "); the end of " + log + ":\n" + log_tail(log, 12));
    }
    mark_step_done(plan, step, seconds);
    ran.insert(step.id);
    ++summary.ran;
    report("study " + counter + " " + step.id + ": done in " + format_seconds(seconds), false);
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace lmk
