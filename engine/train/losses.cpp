#include "engine/train/losses.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace lmk {

at::Tensor info_nce_loss(const at::Tensor& queries, const at::Tensor& passages, int64_t group,
                         double temperature, int64_t first_query) {
  TORCH_CHECK(queries.dim() == 2 && passages.dim() == 2 && group > 0 && first_query >= 0 &&
                  passages.size(0) % group == 0 &&
                  passages.size(0) >= (first_query + queries.size(0)) * group,
              "info_nce_loss: queries [Q, H] and passages [P * group, H] with P >= first_query + "
              "Q expected");
  const at::Tensor scores = at::matmul(queries, passages.t()).div(temperature);  // [Q, P * group]
  const at::Tensor targets =
      (at::arange(queries.size(0), queries.options().dtype(at::kLong)) + first_query) * group;
  return at::cross_entropy_loss(scores, targets);
}

at::Tensor distillation_loss(const at::Tensor& queries, const at::Tensor& passages, int64_t group,
                             const at::Tensor& teacher_scores, double temperature) {
  const int64_t Q = queries.size(0);
  TORCH_CHECK(
      passages.size(0) == Q * group && teacher_scores.sizes() == at::IntArrayRef({Q, group}),
      "distillation_loss: passages [Q * group, H] and teacher scores [Q, group] expected");
  // Each query against its own group only: [Q, group].
  const at::Tensor own =
      at::bmm(queries.unsqueeze(1), passages.view({Q, group, -1}).transpose(1, 2))
          .squeeze(1)
          .div(temperature);
  const at::Tensor targets = at::softmax(teacher_scores.to(own.scalar_type()), -1);
  return -(targets * at::log_softmax(own, -1)).sum(-1).mean();
}

double warmup_linear_lr(int64_t step, int64_t total, int64_t warmup, double peak) {
  if (total <= 0) return peak;
  if (warmup > 0 && step < warmup)
    return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
  const int64_t decay = std::max<int64_t>(1, total - warmup);
  return peak * std::max(0.0, static_cast<double>(total - step) / static_cast<double>(decay));
}

}  // namespace lmk
