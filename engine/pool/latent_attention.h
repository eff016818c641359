#pragma once

// NV-Embed-style latent attention pooling: a learned latent array is the keys and values, the
// token states are the queries; multi-head cross-attention with a residual, a GEGLU
// feed-forward with a residual, then a masked mean. Its parameters are trained and saved with
// the model (names "latent.*").

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <map>
#include <string>

namespace lmk {

class LatentAttention : public torch::nn::Module {
 public:
  // hidden_size H, latents (64 in the authors' code), heads, feed-forward width.
  LatentAttention(int64_t hidden_size, int64_t latents = 64, int64_t heads = 8,
                  int64_t ffn_size = 0, uint64_t seed = 0);

  // hidden [B, L, H] -> token states after attention and feed-forward [B, L, H] (not pooled).
  at::Tensor forward(const at::Tensor& hidden) const;

  // Parameters by name ("latent.latents", "latent.q.weight", ...).
  const std::map<std::string, at::Tensor>& named_weights() const { return weights_; }
  int64_t latents() const { return latents_; }
  int64_t heads() const { return heads_; }

 private:
  const at::Tensor& w(const std::string& name) const { return weights_.at(name); }
  std::map<std::string, at::Tensor> weights_;
  int64_t hidden_size_, latents_, heads_;
};

}  // namespace lmk
