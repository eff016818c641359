#pragma once

// Pretraining of a model folder on text files: documents tokenized, packed into full-length
// sequences, then masked-language modelling (ModernBERT style: 80/10/10 masking at mask_rate,
// 30 % by default; cross-entropy of the MLM head at the masked positions) or, for a causal
// decoder, next-token prediction (cross-entropy of the LM head at every position but a
// sequence's last; mask_rate unused). A bidirectional decoder (LLM2Vec's conversion) takes the
// masked objective. Runs on engine/train/loop: AdamW, schedule, checkpoints, exact resume, store
// run.

#include <cstdint>
#include <string>
#include <vector>

#include "core/train/mlm_data.h"
#include "engine/train/loop.h"

namespace lmk {

struct PretrainSummary {
  int64_t steps = 0, sequences = 0;
  std::vector<double> losses;  // per optimizer step
};

// Pretrains; with other processes in `dist`, each takes its batch_size sequences of every
// global batch and the loss is normalized by the predicted tokens of the global batch, so the run
// ends with the weights of one process training on batch_size x world_size.
// A micro-batch of masked sequences as model inputs, padded with `pad` to the longest: input
// ids and attention mask [B, L], targets [B * L] (-100 where nothing is predicted), and the
// indices of the predicted positions in [B * L]. lmk pretrain's step; the training bench's too.
struct MlmBatch {
  at::Tensor input, mask, target, predicted;
  int64_t rows = 0, length = 0;
};
MlmBatch make_mlm_batch(const std::vector<MaskedSequence>& masked, int32_t pad);

PretrainSummary pretrain_mlm(const PretrainConfig& config, bool resume, bool progress_json,
                             const DistributedContext& dist = DistributedContext::single_process());

}  // namespace lmk
