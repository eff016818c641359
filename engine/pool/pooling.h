#pragma once

// Pooling: one enum consumed by one function (as llama.cpp's build_pooling).

#include <ATen/core/Tensor.h>

#include <vector>

#include "core/pool/pooling_kind.h"

namespace lmk {

class LatentAttention;

struct PoolingOptions {
  bool normalize = false;                   // L2-normalize the embeddings
  int64_t every_k = kDefaultGranularity;    // MeanEveryK
  const LatentAttention* latent = nullptr;  // Latent
};

// hidden [B, L, H], mask [B, L] (1 = token), pool_positions per row (Landmark, MultiCls)
// -> embeddings [B, H].
at::Tensor pool(Pooling pooling, const at::Tensor& hidden, const at::Tensor& mask,
                const std::vector<std::vector<int32_t>>& pool_positions,
                const PoolingOptions& options = {});

}  // namespace lmk
