#pragma once

// Contrastive losses for embedding training (FlagEmbedding's conventions).

#include <ATen/core/Tensor.h>

namespace lmk {

// InfoNCE with in-batch and hard negatives. queries [Q, H]; passages [P * group, H] where rows
// i * group .. i * group + group - 1 belong to query i - first_query, the first being its
// positive (P = Q without cross-device negatives; with them, every process's passages, and
// first_query = the queries of the lower ranks). Scores q·p / temperature against every
// passage; cross-entropy with the positive as target, mean over the Q queries.
at::Tensor info_nce_loss(const at::Tensor& queries, const at::Tensor& passages, int64_t group,
                         double temperature, int64_t first_query = 0);

// Distillation from teacher scores [Q, group] (a query's own passages): soft targets
// softmax(teacher), student log-softmax of q·p / temperature over the same passages;
// -sum(targets * log student), mean over queries (BGE-M3 / FlagEmbedding's teacher loss).
at::Tensor distillation_loss(const at::Tensor& queries, const at::Tensor& passages, int64_t group,
                             const at::Tensor& teacher_scores, double temperature);

// Learning rate at optimizer step `step` (0-based) of `total`: linear warm-up over `warmup`
// steps from 0 to peak, then linear decay to 0 at `total`.
double warmup_linear_lr(int64_t step, int64_t total, int64_t warmup, double peak);

}  // namespace lmk
