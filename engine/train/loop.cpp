#include "engine/train/loop.h"

#include <ATen/ATen.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adamw.h>
#include <torch/serialize.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "core/store/recorded_run.h"
#include "core/store/results_store.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/json_util.h"
#include "core/util/progress.h"
#include "core/util/runtime.h"
#include "core/util/toml_config.h"
#include "engine/embed/embed.h"
#include "engine/train/losses.h"

namespace lmk {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Where the model's parameters are (the training device).
c10::Device model_device(const LoadedModel& model) {
  const auto parameters = model.encoder->parameters();
  return parameters.empty() ? c10::Device(c10::kCPU) : parameters.front().device();
}

void write_json_file(const fs::path& file, const json& value) {
  AtomicFile out(file.string());
  out.write(value.dump(2) + "\n");
  out.commit();
}

// Keys (dotted) whose values differ between two configs.
std::string changed_keys(const json& now, const json& before) {
  std::vector<std::map<std::string, std::string>> configs;
  for (const json* config : {&now, &before}) {
    const auto flat = flatten_params(*config);
    configs.emplace_back(flat.begin(), flat.end());
  }
  std::string changed;
  for (const std::string& key : differing_keys(configs))
    changed += (changed.empty() ? "" : ", ") + key;
  return changed;
}

// "SIGTERM" for the signals that stop training; a stop asked for on another process has none
// here.
std::string stop_signal_name(int signal) {
  switch (signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGUSR1:
      return "SIGUSR1";
    case 0:
      return "a signal to another process";
    default:
      return "signal " + std::to_string(signal);
  }
}

}  // namespace

std::vector<size_t> shuffled_order(size_t n, uint64_t seed, int64_t epoch) {
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  uint64_t state = splitmix64(seed ^ (static_cast<uint64_t>(epoch) * 0xA24BAED4963EE407ULL));
  for (size_t i = n; i > 1; --i) {
    state = splitmix64(state);
    std::swap(order[i - 1], order[state % i]);
  }
  return order;
}

LoraSettings lora_settings(const TrainingSettings& s) {
  LoraSettings lora;
  lora.rank = s.lora_rank;
  lora.alpha = s.lora_alpha;
  lora.dropout = s.lora_dropout;
  lora.target_modules = s.lora_targets;
  return lora;
}

LoadedModel load_training_model(const TrainingSettings& s, bool resume) {
  if (s.lora_rank == 0)
    return load_model_folder(resume ? find_checkpoint(s.out_dir) : s.init_model);
  if (s.lora_dropout > 0 && s.recompute_layers)
    throw input_error("[lora] dropout",
                      "must be 0 with [train] recompute_layers (the backward's recomputation "
                      "would draw other dropout masks than the forward)");
  // The base is the init folder either way: a LoRA checkpoint holds the adapters only.
  LoadedModel model = load_model_folder(s.init_model);
  if (model.latent)
    throw input_error("[lora] rank", "LoRA does not train latent-attention pooling weights");
  if (resume) {
    load_adapter_folder((fs::path(find_checkpoint(s.out_dir)) / "adapter").string(),
                        *model.encoder);
  } else {
    try {
      model.encoder->attach_lora(lora_settings(s), s.seed);
    } catch (const InputError& e) {
      throw input_error("[lora]", e.what());  // the targets or the rank
    }
  }
  return model;
}

LoopOptions loop_options(const TrainingSettings& s, const char* kind, json config,
                         int64_t total_steps, bool progress_json) {
  LoopOptions o;
  o.out_dir = s.out_dir;
  o.tokenizer_source = s.init_model;
  o.base_model = s.init_model;
  o.kind = kind;
  o.config = std::move(config);
  o.db = s.db;
  o.experiment = s.experiment;
  o.run_name = s.run_name;
  o.learning_rate = s.learning_rate;
  o.weight_decay = s.weight_decay;
  o.warmup_ratio = s.warmup_ratio;
  o.max_grad_norm = s.max_grad_norm;
  o.total_steps = total_steps;
  o.checkpoint_every = s.checkpoint_every;
  o.log_every = s.log_every;
  o.seed = s.seed;
  o.progress_json = progress_json || progress_json_requested();
  return o;
}

std::string find_checkpoint(const std::string& out_dir) {
  // state.json is written last, so a folder that has it is complete.
  std::error_code ec;
  for (const char* name : {"checkpoint", "checkpoint.new", "checkpoint.old"}) {
    if (fs::exists(fs::path(out_dir) / name / "state.json", ec))
      return (fs::path(out_dir) / name).string();
  }
  throw input_error((fs::path(out_dir) / "checkpoint").string(),
                    "no checkpoint to resume from (state.json missing)");
}

struct TrainingLoop::Impl {
  std::vector<at::Tensor> parameters;
  std::unique_ptr<torch::optim::AdamW> optimizer;
  std::optional<ResultsStore> store;  // rank 0's only
  std::optional<RecordedRun> run;     // its run (declared after the store: it ends first)
  int64_t run_id = 0;
};

TrainingLoop::TrainingLoop(LoopOptions options, LoadedModel& model, bool resume,
                           const DistributedContext& dist)
    : options_(std::move(options)), model_(model), dist_(dist), impl_(std::make_unique<Impl>()) {
  // A job system may have created the run already (checked before any work).
  const std::optional<int64_t> adopted_run = run_id_from_environment();
  if (adopted_run && options_.db.empty())
    throw InputError("LMK_RUN_ID is set but the command has no results store ([output] db)");
  // AdamW; no weight decay on biases and norm weights (one-dimensional parameters).
  std::vector<at::Tensor> decay, no_decay;
  auto collect = [&](const std::vector<at::Tensor>& params) {
    for (const at::Tensor& p : params) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  };
  // Frozen weights (LoRA trains its adapters only) are not the optimizer's.
  auto trained = [](std::vector<at::Tensor> params) {
    params.erase(std::remove_if(params.begin(), params.end(),
                                [](const at::Tensor& p) { return !p.requires_grad(); }),
                 params.end());
    return params;
  };
  collect(trained(model_.encoder->parameters()));
  if (model_.latent) collect(trained(model_.latent->parameters()));
  impl_->parameters = decay;
  impl_->parameters.insert(impl_->parameters.end(), no_decay.begin(), no_decay.end());
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(
      decay,
      std::make_unique<torch::optim::AdamWOptions>(
          torch::optim::AdamWOptions(options_.learning_rate).weight_decay(options_.weight_decay)));
  groups.emplace_back(no_decay,
                      std::make_unique<torch::optim::AdamWOptions>(
                          torch::optim::AdamWOptions(options_.learning_rate).weight_decay(0.0)));
  impl_->optimizer = std::make_unique<torch::optim::AdamW>(std::move(groups));

  json state = json::object();
  if (resume) {
    const fs::path from = find_checkpoint(options_.out_dir);
    state =
        json_util::parse(read_file((from / "state.json").string()), (from / "state.json").string());
    // Resuming under another config would silently train something else.
    if (state.contains("config") && state["config"] != options_.config) {
      throw input_error(options_.out_dir,
                        "the config differs from the checkpoint's (" +
                            changed_keys(options_.config, state["config"]) +
                            "): resume with the same config, or use a new output dir");
    }
    // The global batch is world_size x batch_size: another world size trains something else.
    const int world = state.value("world_size", 1);
    if (world != dist_.world_size()) {
      const std::string n = std::to_string(world);
      throw input_error(options_.out_dir, "the checkpoint was written by a run of " + n +
                                              " process(es); resume it with " + n + ", not " +
                                              std::to_string(dist_.world_size()));
    }
    // The optimizer's state where the parameters are (a run may resume on another device).
    torch::load(*impl_->optimizer, (from / "optimizer.pt").string(), model_device(model_));
    step_ = state.at("step").get<int64_t>();
    losses_ = state.at("losses").get<std::vector<double>>();
    extra_state_ = state.value("extra", json::object());
  }
  // Every process starts from rank 0's weights (the same file when resuming, but one source
  // of truth costs one broadcast).
  broadcast_parameters(dist_, impl_->parameters);
  if (!dist_.is_main()) return;  // the others write nothing
  if (!options_.db.empty()) {
    impl_->store.emplace(options_.db);
    RunStart start;
    start.fresh.kind = options_.kind;
    start.fresh.name = options_.run_name.empty() ? fs::path(options_.out_dir).filename().string()
                                                 : options_.run_name;
    start.fresh.config = options_.config;
    start.experiment = options_.experiment;
    start.device = model_device(model_).str();
    // The job system's run, also when resuming: a requeued job keeps its run.
    start.adopted = adopted_run;
    if (resume && state.contains("run_id")) start.resumed = state["run_id"].get<int64_t>();
    impl_->run.emplace(*impl_->store, start);
    impl_->run_id = impl_->run->id();
  }
  fs::create_directories(options_.out_dir);
}

TrainingLoop::~TrainingLoop() = default;

void TrainingLoop::save_checkpoint() {
  // Written beside, then swapped in: a kill at any moment leaves one complete checkpoint.
  const fs::path out_dir(options_.out_dir);
  const fs::path fresh = out_dir / "checkpoint.new", old = out_dir / "checkpoint.old",
                 current = out_dir / "checkpoint";
  fs::remove_all(fresh);
  if (model_.encoder->lora().rank > 0) {  // the adapters; the base is the init folder
    save_adapter_folder((fresh / "adapter").string(), *model_.encoder, options_.base_model);
  } else {
    save_model_folder(fresh.string(), *model_.encoder, options_.tokenizer_source, model_.pooling,
                      model_.latent.get());
  }
  const std::string optimizer_file = (fresh / "optimizer.pt").string();
  try {
    torch::save(*impl_->optimizer, optimizer_file);
  } catch (const c10::Error& e) {  // a full disk: said as AtomicFile says it, naming the file
    throw input_error(optimizer_file, std::string("write failed: ") + e.what_without_backtrace());
  }
  json state = {{"step", step_},
                {"losses", losses_},
                {"run_id", impl_->run_id},
                {"extra", extra_state_},
                {"config", options_.config}};
  if (dist_.is_distributed()) state["world_size"] = dist_.world_size();
  write_json_file(fresh / "state.json", state);
  ::sync();
  fs::remove_all(old);
  if (fs::exists(current)) fs::rename(current, old);
  fs::rename(fresh, current);
  fs::remove_all(old);
}

void TrainingLoop::stop(bool save) {
  if (save && dist_.is_main()) save_checkpoint();
  std::string message = "stopped by " + stop_signal_name(stop_signal()) + " at step " +
                        std::to_string(step_) + " of " + std::to_string(options_.total_steps);
  if (save || step_ > 0) {
    message += "; checkpoint in " + (fs::path(options_.out_dir) / "checkpoint").string() +
               " (continue with --resume or --auto-resume)";
  } else {
    message += ", before the first step; nothing to continue from";
  }
  if (impl_->run) impl_->run->stop(message);
  dist_.barrier();  // the others end when rank 0 has saved
  throw Stopped(message);
}

void TrainingLoop::save_model(const std::string& name) {
  if (!dist_.is_main()) return;
  const fs::path dir = fs::path(options_.out_dir) / name;
  save_model_folder(dir.string(), *model_.encoder, options_.tokenizer_source, model_.pooling,
                    model_.latent.get());
  write_json_file(dir / "train_state.json",
                  {{"step", step_}, {"losses", losses_}, {"extra", extra_state_}});
  if (impl_->store) impl_->store->add_artifact(impl_->run_id, "model-" + name, dir.string());
  if (model_.encoder->lora().rank > 0) {
    const fs::path adapter = fs::path(options_.out_dir) / (name + "-adapter");
    save_adapter_folder(adapter.string(), *model_.encoder, options_.base_model);
    if (impl_->store)
      impl_->store->add_artifact(impl_->run_id, "adapter-" + name, adapter.string());
  }
}

void TrainingLoop::log(const std::vector<std::pair<std::string, double>>& values) {
  if (impl_->store) impl_->store->log_metrics(impl_->run_id, step_, values);
}

void TrainingLoop::run(const std::function<double(int64_t step)>& step_gradients,
                       const std::function<void(int64_t step)>& after_step) {
  const int64_t total = options_.total_steps;
  const auto warmup =
      static_cast<int64_t>(std::llround(options_.warmup_ratio * static_cast<double>(total)));
  try {
    std::optional<Progress> progress;
    if (dist_.is_main()) progress.emplace("training", static_cast<uint64_t>(total), "steps");
    const auto start = std::chrono::steady_clock::now();
    const int64_t first_step = step_;
    double all_tokens = 0;  // processed by every process since this run started
    // A stop signal that came while the data was read: nothing new to save.
    if (step_ < total && dist_.sum(stop_requested() ? 1.0 : 0.0) > 0) stop(false);
    while (step_ < total) {
      impl_->optimizer->zero_grad();
      at::manual_seed(splitmix64(options_.seed ^ static_cast<uint64_t>(step_)));
      double loss = step_gradients(step_);
      bool stop_now = false;  // a stop signal on any process: all stop after this step
      if (dist_.is_distributed()) {
        // One all-reduce: the global batch's loss (each process's share is the mean over its
        // equal part), the tokens of every process and the processes asked to stop (signals
        // reach the tasks of a job at slightly different times).
        at::Tensor sums = at::tensor(
            {loss, static_cast<double>(tokens_), stop_requested() ? 1.0 : 0.0}, at::kDouble);
        dist_.all_reduce_sum(sums);
        loss = sums[0].item<double>() / dist_.world_size();
        all_tokens = sums[1].item<double>();
        stop_now = sums[2].item<double>() > 0;
      } else {
        all_tokens = static_cast<double>(tokens_);
      }
      if (!std::isfinite(loss)) {
        throw std::runtime_error("loss is " + std::to_string(loss) + " at step " +
                                 std::to_string(step_) + ": stopped; the last good checkpoint is " +
                                 (fs::path(options_.out_dir) / "checkpoint").string());
      }
      average_gradients(dist_, impl_->parameters);  // before clipping: the global gradient's norm
      if (options_.max_grad_norm > 0)
        torch::nn::utils::clip_grad_norm_(impl_->parameters, options_.max_grad_norm);
      const double lr = warmup_linear_lr(step_, total, warmup, options_.learning_rate);
      for (auto& group : impl_->optimizer->param_groups())
        static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
      impl_->optimizer->step();
      losses_.push_back(loss);
      ++step_;
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      const double tokens_per_s = seconds > 0 ? all_tokens / seconds : 0;
      if (progress) {
        char detail[96];
        std::snprintf(detail, sizeof detail, "loss %.4f lr %.2e %.3gk tok/s", loss, lr,
                      tokens_per_s / 1000.0);
        progress->set_detail(detail);
        progress->update(static_cast<uint64_t>(step_));
      }
      if (dist_.is_main() && (step_ % options_.log_every == 0 || step_ == total)) {
        if (options_.progress_json) {
          const double eta = seconds / static_cast<double>(step_ - first_step) *
                             static_cast<double>(total - step_);
          std::cout << json{{"event", "step"}, {"step", step_}, {"total", total},
                            {"loss", loss},    {"lr", lr},      {"tokens_per_s", tokens_per_s},
                            {"eta_s", eta}}
                           .dump()
                    << std::endl;
        }
        log({{"loss", loss}, {"lr", lr}, {"tokens_per_s", tokens_per_s}});
      }
      if (after_step) after_step(step_);
      const bool checkpoint_due = dist_.is_main() && options_.checkpoint_every > 0 &&
                                  step_ % options_.checkpoint_every == 0 && step_ < total;
      if (checkpoint_due) save_checkpoint();
      if (!dist_.is_distributed()) stop_now = stop_requested();
      if (stop_now && step_ < total) stop(!checkpoint_due);
    }
    if (progress) progress->finish();
    save_model("last");
    if (impl_->run) impl_->run->finish();
    // The others end when rank 0 has written everything (a launcher that sees them all exit
    // finds the run complete).
    dist_.barrier();
  } catch (const Stopped&) {
    throw;  // KILLED, with its checkpoint
  } catch (const std::exception& e) {
    if (impl_->run) impl_->run->fail(e.what());
    throw;
  }
}

}  // namespace lmk
