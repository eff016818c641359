#pragma once

// What the executors' unit tests share (tests/core/jobs/executor*_test.cpp,
// local_executor_test.cpp, slurm_executor_test.cpp): a study plan written by hand whose steps
// are `sh -c SCRIPT` commands (the "lmk binary" is /bin/sh), a local queue running in a thread
// of the test (as `lmk submit` runs it beside `lmk cancel`), and waiting for a condition.

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/jobs/local_executor.h"
#include "core/jobs/study.h"
#include "core/store/results_store.h"
#include "core/util/file.h"
#include "tests/support/test_tokenizers.h"

namespace lmk::testing {

// The program every ShellPlan step runs.
inline const std::string kShell = "/bin/sh";

// A study folder DIR/study (store DIR/study/results.db, experiment "s-full") whose steps run
// `sh -c SCRIPT`.
class ShellPlan {
 public:
  explicit ShellPlan(const TempDir& dir) {
    plan.config.path = (dir.path() / "s.toml").string();
    plan.config.name = "s";
    plan.config.dir = (dir.path() / "study").string();
    plan.config.db = (dir.path() / "study" / "results.db").string();
    plan.experiment = "s-full";
    std::filesystem::create_directories(plan.config.dir);
  }

  // Adds a step `id` running `sh -c script` after the steps `deps`, which must leave `outputs`
  // (file names in the study folder, made absolute); returns it (valid until the next add).
  StudyStep& add(const std::string& id, const std::string& script,
                 const std::vector<std::string>& deps = {},
                 const std::vector<std::string>& outputs = {}, const std::string& kind = "step") {
    StudyStep step;
    step.id = id;
    step.args = {"-c", script};
    step.deps = deps;
    for (const std::string& out : outputs) step.outputs.push_back(path(out));
    step.key = "key-" + id;
    for (char& c : step.key)
      if (c == '/') c = '_';
    step.dir = path(id + "/" + step.key);
    step.kind = kind;
    plan.steps.push_back(step);
    return plan.steps.back();
  }
  // A file of the study folder.
  std::string path(const std::string& name) const {
    return (std::filesystem::path(plan.config.dir) / name).string();
  }
  const StudyStep& step(const std::string& id) const {
    for (const StudyStep& s : plan.steps)
      if (s.id == id) return s;
    throw std::runtime_error("no step " + id);
  }

  StudyPlan plan;
};

// Waits until `done` holds (polling every 10 ms) or `seconds` pass; whether it held.
inline bool wait_until(const std::function<bool()>& done, double seconds = 10) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int>(seconds * 1e3));
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The text of a file, "" when there is none.
inline std::string text_of(const std::string& path) {
  try {
    return read_file(path);
  } catch (const std::exception&) {
    return "";
  }
}

// run_local_queue for the plan's recorded jobs in a thread, with a store connection of its own
// (as the queue of `lmk submit` has beside `lmk cancel`); polls every 20 ms. join() returns
// the number of jobs that did not finish.
class QueueThread {
 public:
  QueueThread(const StudyPlan& plan, LocalQueueOptions options)
      : plan_(plan), lock_(std::make_unique<StudyFolderLock>(plan.config.dir)) {
    options.poll_s = 0.02;
    thread_ = std::thread([this, options] {
      ResultsStore store(plan_.config.db, ResultsStore::OpenMode::Existing);
      failed_ = run_local_queue(plan_, store, *lock_, options);
    });
  }
  // A test that stopped early (a failed ASSERT) leaves jobs that may run for ever: they are
  // cancelled and killed, so that the queue ends.
  ~QueueThread() {
    if (!thread_.joinable()) return;
    ResultsStore store(plan_.config.db, ResultsStore::OpenMode::Existing);
    for (const JobRecord& job : store.jobs(plan_.config.dir, /*unfinished=*/true)) {
      store.request_job_cancel(job.run_id);
      const pid_t group = static_cast<pid_t>(std::atoll(job.external_id.c_str()));
      if (group > 0) ::kill(-group, SIGKILL);
    }
    thread_.join();
  }
  size_t join() {
    thread_.join();
    return failed_;
  }

 private:
  const StudyPlan& plan_;
  std::unique_ptr<StudyFolderLock> lock_;
  std::thread thread_;
  size_t failed_ = 0;
};

}  // namespace lmk::testing
