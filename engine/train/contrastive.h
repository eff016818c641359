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

#include "engine/train/loop.h"

namespace lmk {

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
