#pragma once

// What every training command shares (lmk train, lmk pretrain): AdamW over a model's
// parameters with the warm-up / linear-decay schedule and clipping, atomic checkpoints that a
// killed run resumes from exactly, the results-store run, progress and JSON events, and the
// NaN guard. A command supplies one function: the gradients of one optimizer step.
//
// Data parallel (engine/dist/distributed.h): every process runs the loop on its share of each
// global batch; the loop starts them on rank 0's weights, averages the gradients before
// clipping (so every process takes the identical step) and the loss (so the NaN guard stops
// all of them, and the loss recorded is the global batch's). Only rank 0 writes: checkpoints,
// saved folders, the store run, progress and events.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/train/training_config.h"
#include "core/util/random.h"
#include "engine/dist/distributed.h"
#include "engine/embed/model_folder.h"
#include "engine/model/lora.h"

namespace lmk {

// The [lora] settings as the Encoder takes them.
LoraSettings lora_settings(const TrainingSettings& s);

// The model a training command starts from: the [model] init folder, or when resuming the
// checkpoint's. With [lora] rank > 0: the init folder with adapters attached (seeded by
// [train] seed) or, when resuming, the checkpoint's adapter folder loaded onto it; every other
// weight frozen. InputErrors for what LoRA cannot train here: latent-attention pooling, and
// adapter dropout with [train] recompute_layers (the recomputation would draw other masks).
LoadedModel load_training_model(const TrainingSettings& s, bool resume);

struct LoopOptions {
  // checkpoint/, last/ (and best/ when the command keeps one; with LoRA also last-adapter/ and
  // best-adapter/)
  std::string out_dir;
  std::string tokenizer_source;  // folder or file whose tokenizer goes into saved folders
  std::string base_model;        // the [model] init folder: a LoRA adapter folder's base
  std::string kind = "train";    // the run's kind in the store
  nlohmann::json config;         // recorded with the run; a resumed run must match it
  std::string db, experiment = "default", run_name;
  double learning_rate = 5e-5, weight_decay = 0.01, warmup_ratio = 0.1, max_grad_norm = 1.0;
  int64_t total_steps = 0, checkpoint_every = 0, log_every = 10;
  // [train] seed: with the step, seeds LibTorch's generator before each step, so that what
  // draws from it (LoRA's dropout) is a function of the config and resume stays exact.
  uint64_t seed = 42;
  bool progress_json = false;
};

// 0..n-1 in the order of epoch `epoch` for `seed` (Fisher-Yates over SplitMix64: the same on
// every platform, so a seed fixes the data order of a run).
std::vector<size_t> shuffled_order(size_t n, uint64_t seed, int64_t epoch);

// The newest complete checkpoint under out_dir (checkpoint/, or checkpoint.new/ or
// checkpoint.old/ after a kill between the two renames), or an InputError when there is none.
std::string find_checkpoint(const std::string& out_dir);

// Loop options from the shared settings, for `total_steps` steps of a run of `kind`.
LoopOptions loop_options(const TrainingSettings& s, const char* kind, nlohmann::json config,
                         int64_t total_steps, bool progress_json);

class TrainingLoop {
 public:
  // `model` is the starting point: the initial model, or the one loaded from
  // find_checkpoint(out_dir) when `resume` (then the optimizer state, step and losses are
  // read from there, and a config or world size that differs from the checkpoint's is an
  // InputError). With other processes in `dist`, every one loads the same checkpoint and then
  // takes rank 0's weights. The store run (options.db) is the checkpoint's when resuming, else
  // a new one; $LMK_RUN_ID names a run a job system created, which is used instead in both
  // cases (its kind must be options.kind; its config becomes options.config).
  TrainingLoop(LoopOptions options, LoadedModel& model, bool resume,
               const DistributedContext& dist = DistributedContext::single_process());
  ~TrainingLoop();

  // Runs optimizer steps until total_steps. step_gradients(step) computes the gradients of
  // one step (backward of its micro-batches) and returns its loss (this process's share: the
  // loop averages it over processes); a NaN or infinite loss on any process stops the run
  // everywhere (FAILED in the store, the last checkpoint kept). After each step after_step(step)
  // may evaluate or save (step counts the steps done). Then last/ is saved and every process
  // waits for rank 0 to finish.
  //
  // A stop signal (install_stop_signals, core/util/runtime.h) on any process stops every
  // process after the same step: rank 0 saves a checkpoint, the store run becomes KILLED with
  // the message, and run() throws Stopped ("stopped by SIGTERM at step 12 of 40; checkpoint in
  // DIR/checkpoint ..."). A signal before the first step stops without a new checkpoint.
  void run(const std::function<double(int64_t step)>& step_gradients,
           const std::function<void(int64_t step)>& after_step = {});

  // Saves the model as a Hugging Face folder under out_dir/name and records it in the store
  // (rank 0; a no-op on the other processes). With LoRA adapters the folder holds the merged
  // weights, and the adapters alone go to the PEFT folder out_dir/name-adapter too.
  void save_model(const std::string& name);
  // Logs metrics at the current step into the store (when there is one).
  void log(const std::vector<std::pair<std::string, double>>& values);

  int64_t step() const { return step_; }
  const std::vector<double>& losses() const { return losses_; }
  // Extra fields kept in the checkpoint's state.json (read back on resume).
  nlohmann::json& extra_state() { return extra_state_; }
  // Counts processed tokens for the tokens/s figure.
  void add_tokens(int64_t tokens) { tokens_ += tokens; }
  const DistributedContext& distributed() const { return dist_; }

 private:
  struct Impl;
  void save_checkpoint();
  // Saves a checkpoint when `save` (rank 0), records the run KILLED and throws Stopped.
  [[noreturn]] void stop(bool save);
  LoopOptions options_;
  LoadedModel& model_;
  const DistributedContext& dist_;
  std::unique_ptr<Impl> impl_;
  int64_t step_ = 0, tokens_ = 0;
  std::vector<double> losses_;
  nlohmann::json extra_state_ = nlohmann::json::object();
};

}  // namespace lmk
