#include "engine/pool/latent_attention.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>

#include "core/util/error.h"
#include "engine/model/layers.h"

namespace lmk {

LatentAttention::LatentAttention(int64_t hidden_size, int64_t latents, int64_t heads,
                                 int64_t ffn_size, uint64_t seed)
    : hidden_size_(hidden_size), latents_(latents), heads_(heads) {
  if (hidden_size <= 0 || latents <= 0 || heads <= 0 || hidden_size % heads != 0) {
    throw InputError(
        "latent attention: hidden size must be a positive multiple of the heads, latents > 0");
  }
  if (ffn_size <= 0) ffn_size = 4 * hidden_size;
  // A generator of its own (the stream at::manual_seed(seed) would give the global one): no
  // global state changes, and nothing asks ATen about CUDA (encoder.cpp says why that matters).
  const at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  const double std = 0.02;
  auto add = [&](const std::string& name, std::vector<int64_t> shape, bool zero) {
    at::Tensor t = zero ? at::zeros(shape) : at::empty(shape).normal_(0.0, std, generator);
    std::string registered = name;
    std::replace(registered.begin(), registered.end(), '.', '_');
    weights_[name] = register_parameter(registered, t);
  };
  add("latent.latents", {latents, hidden_size}, false);
  for (const char* p : {"latent.q", "latent.k", "latent.v", "latent.o"}) {
    add(std::string(p) + ".weight", {hidden_size, hidden_size}, false);
    add(std::string(p) + ".bias", {hidden_size}, true);
  }
  add("latent.ffn_in.weight", {2 * ffn_size, hidden_size}, false);
  add("latent.ffn_in.bias", {2 * ffn_size}, true);
  add("latent.ffn_out.weight", {hidden_size, ffn_size}, false);
  add("latent.ffn_out.bias", {hidden_size}, true);
}

at::Tensor LatentAttention::forward(const at::Tensor& hidden) const {
  const int64_t B = hidden.size(0), L = hidden.size(1), d = hidden_size_ / heads_;
  // Queries from the tokens, keys and values from the latent array.
  const at::Tensor q = at::linear(hidden, w("latent.q.weight"), w("latent.q.bias"))
                           .view({B, L, heads_, d})
                           .transpose(1, 2);
  const at::Tensor latents = w("latent.latents");
  const at::Tensor k = at::linear(latents, w("latent.k.weight"), w("latent.k.bias"))
                           .view({latents_, heads_, d})
                           .transpose(0, 1);
  const at::Tensor v = at::linear(latents, w("latent.v.weight"), w("latent.v.bias"))
                           .view({latents_, heads_, d})
                           .transpose(0, 1);
  const at::Tensor probs =
      at::softmax(at::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(d)),
                  -1);  // [B, heads, L, n]
  const at::Tensor attended = at::matmul(probs, v).transpose(1, 2).reshape({B, L, hidden_size_});
  at::Tensor x = hidden + at::linear(attended, w("latent.o.weight"), w("latent.o.bias"));
  const at::Tensor ffn =
      gated_linear_unit(at::linear(x, w("latent.ffn_in.weight"), w("latent.ffn_in.bias")), "gelu",
                        GluOrder::ActivateFirst);
  return x + at::linear(ffn, w("latent.ffn_out.weight"), w("latent.ffn_out.bias"));
}

}  // namespace lmk
