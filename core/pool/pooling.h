#pragma once

// Pooling: one enum consumed by one function (as llama.cpp's build_pooling).

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <vector>

namespace lmk {

class LatentAttention;

enum class Pooling {
  Cls,         // hidden state of the first token
  Mean,        // masked mean over tokens
  Landmark,    // mean over the landmark positions; rows without one fall back to Mean
  MultiCls,    // mean over the CLS positions of a MultiCLS input
  Latent,      // NV-Embed latent attention, then masked mean (trained parameters)
  Last,        // hidden state of the last real token
  MeanEveryK,  // mean over every k-th position (1-based k, 2k, ...): landmarks without inserted
               // tokens
};

// cls | mean | lmk | multicls | latent | last | mean_every_k; throws InputError otherwise.
Pooling parse_pooling(const std::string& name);
const char* pooling_name(Pooling pooling);

struct PoolingOptions {
  bool normalize = false;                   // L2-normalize the embeddings
  int64_t every_k = 32;                     // MeanEveryK
  const LatentAttention* latent = nullptr;  // Latent
};

// hidden [B, L, H], mask [B, L] (1 = token), pool_positions per row (Landmark, MultiCls)
// -> embeddings [B, H].
at::Tensor pool(Pooling pooling, const at::Tensor& hidden, const at::Tensor& mask,
                const std::vector<std::vector<int32_t>>& pool_positions,
                const PoolingOptions& options = {});

}  // namespace lmk
