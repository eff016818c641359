#pragma once

// The reference the attention tests compare against (tests/engine/model/attention*_test.cpp): the
// dense softmax attention formula with the whole [L, L] score matrix.

#include <ATen/ATen.h>

#include <cmath>
#include <utility>

namespace lmk::testing {

// softmax(q kᵀ / sqrt(d), masked) v with the whole [L, L] matrix, and the probabilities; the
// keys of query i: those the mask allows, |i - j| <= half_window when >= 0, j <= i when causal.
inline std::pair<at::Tensor, at::Tensor> dense_attention(const at::Tensor& q, const at::Tensor& k,
                                                         const at::Tensor& v,
                                                         const at::Tensor& mask,
                                                         int64_t half_window, bool causal = false) {
  const int64_t B = q.size(0), heads = q.size(1), L = q.size(2), d = q.size(3);
  const at::Tensor scores = at::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(d));
  at::Tensor allowed = mask.view({B, 1, 1, L}).expand({B, heads, L, L});
  if (half_window >= 0) {
    const at::Tensor i = at::arange(L).view({-1, 1}), j = at::arange(L).view({1, -1});
    allowed = allowed.logical_and((i - j).abs().le(half_window));
  }
  if (causal) allowed = allowed.logical_and(at::ones({L, L}, at::kBool).tril());
  const at::Tensor probs = at::softmax(scores.masked_fill(allowed.logical_not(), -1e30), -1);
  return {at::matmul(probs, v), probs};
}

}  // namespace lmk::testing
