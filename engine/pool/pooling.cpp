#include "engine/pool/pooling.h"

#include <ATen/ATen.h>

#include "core/util/error.h"
#include "engine/pool/latent_attention.h"

namespace lmk {

namespace {
// Masked mean over tokens: [B, L, H], weights [B, L] -> [B, H].
at::Tensor weighted_mean(const at::Tensor& hidden, const at::Tensor& weights) {
  const at::Tensor w = weights.to(hidden.scalar_type()).unsqueeze(-1);  // [B, L, 1]
  return (hidden * w).sum(1) / w.sum(1).clamp_min(1e-9);
}
}  // namespace

at::Tensor pool(Pooling pooling, const at::Tensor& hidden, const at::Tensor& mask,
                const std::vector<std::vector<int32_t>>& pool_positions,
                const PoolingOptions& options) {
  const int64_t B = hidden.size(0), L = hidden.size(1);
  const at::Tensor token_mask = mask.to(at::kBool);
  at::Tensor embeddings;
  switch (pooling) {
    case Pooling::Cls:
      embeddings = hidden.select(1, 0);
      break;
    case Pooling::Mean:
      embeddings = weighted_mean(hidden, token_mask);
      break;
    case Pooling::Landmark:
    case Pooling::MultiCls: {
      if (static_cast<int64_t>(pool_positions.size()) != B)
        throw InputError("pool: one pool-position list per row needed");
      // weights[b, p] = 1 at the row's pool positions (set on the CPU, then moved to the hidden
      // states' device); rows without any fall back to the mask.
      at::Tensor weights = at::zeros({B, L}, at::kFloat);
      auto accessor = weights.accessor<float, 2>();
      for (int64_t b = 0; b < B; ++b) {
        for (int32_t p : pool_positions[static_cast<size_t>(b)]) {
          if (p < 0 || p >= L)
            throw InputError("pool: position " + std::to_string(p) + " outside the sequence");
          accessor[b][p] = 1.0f;
        }
      }
      const at::Tensor empty_rows = weights.sum(1).eq(0).unsqueeze(1);  // [B, 1]
      weights = at::where(empty_rows, token_mask.to(at::kCPU, at::kFloat), weights);
      embeddings = weighted_mean(hidden, weights.to(hidden.device()));
      break;
    }
    case Pooling::Latent:
      if (!options.latent)
        throw InputError("latent pooling needs the model's latent attention parameters");
      embeddings = weighted_mean(options.latent->forward(hidden), token_mask);
      break;
    case Pooling::Last: {
      const at::Tensor last = token_mask.to(at::kLong).sum(1).sub(1).clamp_min(0);  // [B]
      embeddings = hidden.gather(1, last.view({B, 1, 1}).expand({B, 1, hidden.size(2)})).squeeze(1);
      break;
    }
    case Pooling::MeanEveryK: {
      if (options.every_k <= 0) throw FieldError("every_k", "must be > 0");
      const at::Tensor every =
          at::arange(1, L + 1, at::kLong).remainder(options.every_k).eq(0).view({1, L});
      at::Tensor weights = token_mask.logical_and(every.to(token_mask.device()));
      weights = at::where(weights.sum(1, true).eq(0), token_mask, weights);
      embeddings = weighted_mean(hidden, weights);
      break;
    }
  }
  if (options.normalize) embeddings = embeddings / embeddings.norm(2, -1, true).clamp_min(1e-12);
  return embeddings;
}

}  // namespace lmk
