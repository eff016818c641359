#pragma once

// Contrastive fine-tuning of an encoder on FlagEmbedding jsonl (query, pos[], neg[], scores):
// InfoNCE with in-batch and hard negatives (or distillation from teacher scores), AdamW with
// warm-up and linear decay, gradient clipping and accumulation, seeded so that the same config
// gives the same loss curve on the CPU. Atomic checkpoints (model, optimizer, data position)
// that a killed run resumes from; best (by dev nDCG@10) and last models saved as Hugging Face
// folders; a NaN or infinite loss stops the run naming the step, keeping the last checkpoint.

#include <cstdint>
#include <string>
#include <vector>

#include "core/train/loop.h"

namespace lmk {

// [model] init, [output], and the optimization keys: TrainingSettings (core/train/loop.h).
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

struct TrainSummary {
  int64_t steps = 0;           // optimizer steps done in total
  std::vector<double> losses;  // per optimizer step (mean over its micro-batches), from step 0
  double best_dev = -1;        // best dev nDCG@10 (-1 without a dev set)
};

// Trains; with resume, continues from out_dir/checkpoint (exactly: same data order, optimizer
// state and schedule). progress_json prints one JSON event per logged step on stdout. With
// other processes in `dist`, each takes its batch_size of every global batch (world_size x
// batch_size), InfoNCE sees every process's passages as negatives, and the run ends with the
// weights of one process training on batch_size x world_size (up to float rounding); dev
// evaluation and every file are rank 0's (best_dev is -1 on the others).
TrainSummary train_contrastive(
    const ContrastiveConfig& config, bool resume, bool progress_json,
    const DistributedContext& dist = DistributedContext::single_process());

}  // namespace lmk
