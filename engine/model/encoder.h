#pragma once

// The encoder: ModernBERT, BERT and GTE, one file each (modern_bert.cpp, bert.cpp, gte.cpp over
// architecture.h), behind one forward: embed, the layers, the final step. Parameters carry
// Hugging Face's names (without the "model." / "bert." / "gte." or "new." prefix), so
// checkpoints load by name; each architecture resolves its typed per-layer handles once, at
// construction.

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/model/config.h"
#include "engine/model/attention.h"
#include "engine/model/lora.h"

namespace lmk {

class ArchitectureGraph;

class Encoder : public torch::nn::Module {
 public:
  // A model with freshly initialized weights (ModernBERT's initialization scheme), or, with
  // initialize = false, uninitialized weights that a checkpoint is about to overwrite.
  explicit Encoder(EncoderConfig config, uint64_t seed = 0, bool initialize = true);
  ~Encoder() override;

  // ids [B, L] int64, mask [B, L] (1 = token, 0 = padding) -> final hidden states [B, L, H].
  at::Tensor forward(const at::Tensor& ids, const at::Tensor& mask,
                     AttentionCapture* capture = nullptr);
  // MLM logits [N, V] for hidden states [N, H] (decoder tied to the token embeddings).
  at::Tensor mlm_logits(const at::Tensor& hidden);

  const EncoderConfig& config() const { return config_; }
  // Every parameter by its Hugging Face name (encoder first, then the MLM head).
  const std::map<std::string, at::Tensor>& named_weights() const { return weights_; }
  // Whether name belongs to the MLM head (not to the encoder proper).
  bool is_head_weight(const std::string& name) const;
  // The parameter called name; throws std::out_of_range when absent.
  const at::Tensor& weight(const std::string& name) const { return weights_.at(name); }
  // Gives one parameter its initial value (used for tensors a checkpoint lacks).
  void initialize_weight(const std::string& name);

  // LoRA (engine/model/lora.h): adapters on the linear layers of the encoder proper that
  // settings.target_modules names, A drawn from `seed` as PEFT draws it, B zero, on the
  // weights' device; every weight of the model stops requiring gradients, so that training
  // updates the adapters only (they are registered parameters). An InputError when rank < 1 or
  // above an adapted layer's larger side, when adapters are attached already or when no layer
  // matches. Returns the adapted layers.
  std::vector<std::string> attach_lora(const LoraSettings& settings, uint64_t seed);
  // The settings of the attached adapters (rank 0: none).
  const LoraSettings& lora() const { return lora_; }
  // Every linear layer of the encoder proper by name ("layers.0.self_attn.q_proj"), with its
  // adapter (attached or not).
  const std::map<std::string, std::shared_ptr<LoraAdapter>>& linear_layers() const {
    return linears_;
  }
  // The parameter called name as a saved folder holds it: with the layer's adapter merged
  // (W + scale · B A) when name is an adapted layer's weight, else the parameter itself.
  at::Tensor merged_weight(const std::string& name) const;
  // Queries per attention block: bounds attention memory to about block × L per head.
  void set_attention_block(int64_t queries) { attention_block_ = queries; }
  // Activation recomputation: with grad mode on, each layer's activations are dropped in the
  // forward and recomputed in the backward (engine/model/recompute.h): one layer's memory instead
  // of all of them, for a second forward per layer. The gradients are the same.
  void set_recompute_layers(bool on) { recompute_layers_ = on; }
  bool recompute_layers() const { return recompute_layers_; }
  // Unpadding, ModernBERT's design: the padding is removed after the embeddings, every layer
  // runs on the valid tokens only ([1, total, H]) and attention on cumulative lengths with no
  // mask (varlen_attention: FlashAttention on CUDA); the output is padded back. Auto: on CUDA
  // in fp16 / bf16 (weights or autocast), where FlashAttention takes it. Always: on any device
  // (the CPU computes each row with the fused kernel: what the tests use to check the
  // bookkeeping the CUDA path shares). Never: padded batches with a key mask. A forward that
  // captures attention, or a batch that is not right-padded, runs padded.
  enum class Unpadding { Auto, Always, Never };
  void set_unpadding(Unpadding unpadding) { unpadding_ = unpadding; }
  // Whether forward on `ids` (with autocast as it is now) runs unpadded.
  bool runs_unpadded(const at::Tensor& ids) const;

 private:
  at::Tensor add_weight(const std::string& name, std::vector<int64_t> shape, double init_std,
                        bool head);
  // The attention core of every architecture: q, k, v [B, L, H] -> context [B, L, H]; rope holds
  // this forward pass's RoPE tables by theta (built on first use, shared by layers).
  at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t layer,
                    const at::Tensor& key_mask, AttentionCapture* capture,
                    std::map<double, RopeTables>& rope) const;
  // The same on an unpadded batch: q, k, v [1, total, H] -> [1, total, H].
  at::Tensor attend_unpadded(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             int64_t layer, const UnpaddedBatch& batch,
                             std::map<double, RopeTables>& rope) const;

  bool initialize_ = true;
  at::Generator init_generator_;  // the initialization's draws (seeded by the constructor)
  EncoderConfig config_;
  std::map<std::string, at::Tensor> weights_;
  std::vector<std::string> head_names_;
  std::map<std::string, std::shared_ptr<LoraAdapter>> linears_;  // linear layers, by name
  LoraSettings lora_;
  std::map<std::string, double> init_std_;  // per parameter: > 0 normal σ, 0 zeros, < 0 ones
  int64_t attention_block_ = 0;             // 0: chosen from the sequence length
  bool recompute_layers_ = false;
  Unpadding unpadding_ = Unpadding::Auto;
  std::unique_ptr<ArchitectureGraph> graph_;  // the architecture's file (architecture.h)
};

}  // namespace lmk
