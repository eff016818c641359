#pragma once

// What the Encoder asks of an architecture, in the llama.cpp way: one file per architecture
// (modern_bert.cpp, bert.cpp, gte.cpp; llama.cpp for the Llama and Qwen3 decoders) declares its
// tensors under Hugging Face's names and keeps typed per-layer handles resolved once, at
// construction; the shared pieces (linear and norm layers, BERT-style embeddings) live in
// architecture.cpp, and the attention core every architecture calls (heads, RoPE, capture,
// blockwise attention) in the Encoder. Internal to core/model: the Encoder, the architecture
// files and their tests include it; nothing outside engine/model does.

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/model/config.h"

namespace lmk {

struct LoraAdapter;  // engine/model/lora.h

// Initial values: σ > 0 a truncated normal, kInitZeros zeros, kInitOnes ones (norm weights).
constexpr double kInitOnes = -1, kInitZeros = 0;

// Registers one tensor with the Encoder (a parameter named as Hugging Face names it, without
// the class prefix) and returns it; head tensors belong to the MLM head, not the encoder proper.
using AddWeight = std::function<at::Tensor(const std::string& name, std::vector<int64_t> shape,
                                           double init_std, bool head)>;
// Registers the LoRA adapter slot of the linear layer called name (without ".weight").
using AddLinear = std::function<void(const std::string& name, std::shared_ptr<LoraAdapter>)>;

// A linear layer: weight [out, in], bias [out] or undefined, and the layer's LoRA adapter
// (shared with the Encoder, which attaches it; none on a head's layers).
struct Linear {
  at::Tensor weight, bias;
  std::shared_ptr<LoraAdapter> lora;
  at::Tensor operator()(const at::Tensor& x) const;
};

// A LayerNorm over the hidden size: weight, bias or undefined.
struct Norm {
  at::Tensor weight, bias;
  int64_t size = 0;
  double eps = 1e-5;
  at::Tensor operator()(const at::Tensor& x) const;
};

// RMSNorm over the last dimension (Llama's and Qwen3's): computed in float32, scaled by weight in
// the input's dtype, as transformers computes it.
struct RmsNorm {
  at::Tensor weight;
  double eps = 1e-6;
  at::Tensor operator()(const at::Tensor& x) const;
};

// Declares tensors and returns their typed handles; the init σ of hidden-to-hidden inputs and of
// the projections back into the residual stream follow ModernBERT's scheme.
class WeightBuilder {
 public:
  // add_linear, when given, receives every linear layer of the encoder proper (dense with
  // head = false) with its empty LoRA adapter.
  WeightBuilder(const EncoderConfig& config, AddWeight add, AddLinear add_linear = {});
  Linear dense(const std::string& prefix, int64_t out, int64_t in, double init_std, bool bias,
               bool head = false) const;
  Norm norm(const std::string& prefix, bool bias, bool head = false) const;
  // An RMSNorm of `size` values (the hidden size, or a head's).
  RmsNorm rms_norm(const std::string& prefix, int64_t size) const;
  at::Tensor tensor(const std::string& name, std::vector<int64_t> shape, double init_std,
                    bool head = false) const {
    return add_(name, std::move(shape), init_std, head);
  }
  const EncoderConfig& config() const { return config_; }
  double std_in() const { return std_in_; }
  double std_out() const { return std_out_; }

 private:
  const EncoderConfig& config_;
  AddWeight add_;
  AddLinear add_linear_;
  double std_in_, std_out_;
};

// BERT and GTE: word (+ absolute position for BERT) (+ token type) embeddings, LayerNorm.
struct BertEmbeddings {
  at::Tensor word, position, token_type;  // position / token_type undefined when absent
  Norm norm;
  static BertEmbeddings declare(const WeightBuilder& w);
  at::Tensor operator()(const at::Tensor& ids) const;  // [B, L] -> [B, L, H]
};

// The MLM head every architecture has: dense, activation, norm, then the decoder tied to the
// token embeddings (with its own bias, or none).
struct MlmHead {
  Linear dense;
  Norm norm;
  at::Tensor decoder, decoder_bias;  // decoder: the token embeddings [V, H]
  // Declares dense (bias when dense_bias), norm (bias when norm_bias) and, when bias_name is not
  // empty, the decoder bias, in that order; decoder is the embedding matrix it is tied to.
  static MlmHead declare(const WeightBuilder& w, const std::string& dense_name,
                         const std::string& norm_name, const std::string& bias_name,
                         bool dense_bias, bool norm_bias, const at::Tensor& decoder);
  at::Tensor operator()(const at::Tensor& hidden, const std::string& activation) const;
};

// The attention core of layer `layer`: q [B, L, heads · d], k, v [B, L, kv heads · d] ->
// context [B, L, heads · d] (before the output projection).
using Attend = std::function<at::Tensor(const at::Tensor& q, const at::Tensor& k,
                                        const at::Tensor& v, int64_t layer)>;

class ArchitectureGraph {
 public:
  virtual ~ArchitectureGraph() = default;
  // ids [B, L] -> [B, L, H]
  virtual at::Tensor embed(const at::Tensor& ids) const = 0;
  // One transformer layer over the residual stream [B, L, H]. Taken by value (the Encoder moves
  // it in) and temporaries scoped, so that no more than the previous encoder's activations are
  // alive at once: peak memory at long lengths is these tensors.
  virtual at::Tensor layer(int64_t index, at::Tensor hidden, const Attend& attend) const = 0;
  // After the last layer (ModernBERT's final norm).
  virtual at::Tensor finish(const at::Tensor& hidden) const { return hidden; }
  // MLM logits [N, V] for hidden states [N, H] (decoder tied to the token embeddings).
  virtual at::Tensor mlm_logits(const at::Tensor& hidden) const = 0;
};

std::unique_ptr<ArchitectureGraph> build_modern_bert(const WeightBuilder& w);
std::unique_ptr<ArchitectureGraph> build_bert(const WeightBuilder& w);
std::unique_ptr<ArchitectureGraph> build_gte(const WeightBuilder& w);
std::unique_ptr<ArchitectureGraph> build_llama(const WeightBuilder& w);  // Llama and Qwen3

}  // namespace lmk
