#pragma once

// What the job CLI tests (local queue, Slurm) share: a small study config, and waiting for a
// step's job in the store.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "core/jobs/executor.h"
#include "core/store/results_store.h"
#include "core/util/error.h"
#include "tests/support/run_lmk.h"
#include "tests/support/test_tokenizers.h"

namespace lmk::testing {

// A small study: 9 steps (corpus ... pretrain, one fine-tuning, one evaluation) whose
// pretraining runs `steps` steps (about 180 a second here); `extra` is appended.
inline std::string small_study(const TempDir& dir, const std::string& name, int steps,
                               const std::string& extra = "") {
  return dir.write(name + ".toml", R"([study]
name = ")" + name + R"("
corpus = "builtin"
corpus_limit = 20
[tokenizer]
vocab_size = 700
[model]
preset = "tiny"
hidden_size = 32
layers = 1
heads = 2
intermediate_size = 64
local_window = 32
[pretrain]
max_length = 64
batch_size = 4
steps = )" + std::to_string(steps) + R"(
[finetune]
poolings = ["cls"]
batch_size = 4
steps = 4
examples_per_document = 1
[eval]
benchmarks = ["passages"]
lengths = [64]
queries = 4
documents = 4
attention_docs = 0
)" + extra);
}

// Environment of every lmk here: its notes go to the test's folder, not $HOME.
inline std::string env_of(const TempDir& dir) {
  return kQuickEnv + " XDG_STATE_HOME=" + (dir.path() / "state").string();
}

inline std::optional<JobRecord> job_of_step(const std::string& db, const std::string& step) {
  if (!std::filesystem::exists(db)) return std::nullopt;
  try {
    const ResultsStore store(db, ResultsStore::OpenMode::Existing);
    std::optional<JobRecord> found;
    for (const JobRecord& job : store.jobs()) {
      if (job.step == step) found = job;  // the newest
    }
    return found;
  } catch (const InputError&) {
    return std::nullopt;  // lmk submit is creating the file
  }
}

// Waits until the step's job is running with progress in its log (or the timeout).
inline JobRecord wait_running(const std::string& db, const std::string& step, int min_done = 1) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto job = job_of_step(db, step); job && !job->external_id.empty() && !job->ended) {
      JobRecord j = *job;
      read_job_progress(j);
      if (j.progress_done >= min_done) return j;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ADD_FAILURE() << "the " << step << " job did not start";
  return {};
}

}  // namespace lmk::testing
