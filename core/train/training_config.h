#pragma once

// The configs of the training commands (lmk train, lmk pretrain) and their settings tables
// (core/util/settings.h): what reads their TOML files, records them with a run, and writes them
// (a study's training steps, core/jobs/study.cpp). No LibTorch: lmkcore, which plans studies
// without it, holds these; the loops that run them are core/train/{loop,contrastive,pretrain}.

#include <cstdint>
#include <string>
#include <vector>

#include "core/util/settings.h"

namespace lmk {

// Settings every training command has: [model] init, [train] optimization and schedule,
// [output] (training_settings(); the commands' configs extend it).
struct TrainingSettings {
  std::string init_model;  // [model] init: the Hugging Face folder to start from
  std::string out_dir;     // [output] dir
  std::string db, experiment = "default", run_name;  // [output] results store
  double learning_rate = 5e-5, weight_decay = 0.01, warmup_ratio = 0.1, max_grad_norm = 1.0;
  int64_t batch_size = 8;             // examples per micro-batch and process
  int64_t accumulation = 1;           // micro-batches per optimizer step
  int64_t epochs = 1, max_steps = 0;  // max_steps > 0 caps the optimizer steps
  uint64_t seed = 42;
  int64_t checkpoint_every = 50;  // optimizer steps between checkpoints (0: none)
  int64_t log_every = 10;
  // [train] device (--device overrides): cpu, cuda or cuda:N — not recorded: a run may resume
  // on another device.
  std::string device = "cpu";
  // [train] recompute_layers: activation recomputation per layer (Encoder::set_recompute_layers)
  // — the same gradients, one layer's activations held instead of all (long passages).
  bool recompute_layers = false;
  // [lora]: LoRA adapters (engine/model/lora.h) instead of training every weight; rank 0: none.
  int64_t lora_rank = 0;
  double lora_alpha = 16, lora_dropout = 0;
  std::vector<std::string> lora_targets = {"all-linear"};
};

// The shared settings ([model] init and [output] dir required, paths resolved against the
// config's folder); each command's table adds its own (core/util/settings.h).
const SettingsTable<TrainingSettings>& training_settings();

// [model] init, [output], and the optimization keys: TrainingSettings.
struct ContrastiveConfig : TrainingSettings {
  std::vector<std::string> train_files;  // [data] train: FlagEmbedding jsonl (one or an array)
  std::string dev_dataset;               // [data] dev: BEIR folder with qrels/dev.tsv (optional)
  // [data] stream: read the examples in file order, one global batch at a time, instead of
  // loading them all and shuffling (files of hundreds of thousands of rows: pre-shuffle them).
  bool stream = false;
  // [train]
  std::string pooling;          // default: the model folder's
  std::string train_landmarks;  // LandmarkSpec text; default: the folder's train setting
  std::string eval_landmarks;   // default: the folder's eval setting
  int64_t granularity = 0;      // MultiCLS / mean_every_k granularity (0: default)
  int64_t query_max_length = 128, passage_max_length = 512;
  std::string query_prefix, passage_prefix;
  double temperature = 0.02;
  int64_t negatives = 3;   // hard negatives per query (train_group_size = 1 + negatives)
  int64_t eval_every = 0;  // optimizer steps between dev evaluations (0: at the end)
};

// The [data] and [train] settings of a contrastive config, over training_settings().
const SettingsTable<ContrastiveConfig>& contrastive_settings();
// Reads a TOML config; unknown keys, wrong types and out-of-range values are InputErrors
// naming the file and key. Relative paths are resolved against the config's folder.
ContrastiveConfig read_contrastive_config(const std::string& path);

// [model] init, [output], and the optimization keys: TrainingSettings.
struct PretrainConfig : TrainingSettings {
  PretrainConfig() { learning_rate = 5e-4; }
  // [data] train: folders of .txt files or jsonl files with "text" (one, or an array: a study
  // pretrains on every corpus it evaluates)
  std::vector<std::string> train;
  // [train]
  int64_t max_length = 512;
  double mask_rate = 0.3;
};

// The [data] and [train] settings of a pretraining config, over training_settings().
const SettingsTable<PretrainConfig>& pretrain_settings();
// Reads a TOML config ([model] [data] [train] [output]); errors name the file and key.
PretrainConfig read_pretrain_config(const std::string& path);

}  // namespace lmk
