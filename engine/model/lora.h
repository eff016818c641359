#pragma once

// LoRA (Hu et al. 2021) as PEFT's LoraLayer computes it: a linear layer y = W x + b gains
// scale · B A dropout(x), with A [r, in] drawn as PEFT draws it (Kaiming-uniform, a = √5:
// U(−1/√in, 1/√in)), B [out, r] zero (so an attached adapter changes nothing until trained) and
// scale = alpha / r. The Encoder keeps one LoraAdapter per linear layer of the encoder proper
// (WeightBuilder::dense makes it, empty); Encoder::attach_lora fills those the target modules
// name, and each Linear handle computes through its adapter (architecture.cpp). Merging is
// W + scale · B A (Encoder::merged_weight): what a saved folder holds. The PEFT adapter folder
// (adapter_config.json, adapter_model.safetensors) is engine/embed/model_folder.h.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace lmk {

struct LoraSettings {
  int64_t rank = 0;  // r; 0: no adapters
  double alpha = 16;
  double dropout = 0;  // on the adapter's input, in training only (grad mode on)
  // PEFT's target_modules: a layer is adapted when its name (Hugging Face's, without the class
  // prefix: "layers.0.self_attn.q_proj") equals a target or ends with "." + target;
  // "all-linear": every linear layer of the encoder proper (not a head's).
  std::vector<std::string> target_modules = {"all-linear"};

  double scale() const { return alpha / static_cast<double>(rank); }
};

// The target name that means every linear layer (PEFT's).
constexpr const char* kAllLinear = "all-linear";

// Whether PEFT's rule adapts the layer called `name` for `targets`.
bool lora_targets(const std::string& name, const std::vector<std::string>& targets);

struct LoraAdapter {
  at::Tensor a, b;  // [r, in], [out, r]; undefined: no adapter on this layer
  double scale = 0, dropout = 0;

  bool attached() const { return a.defined(); }
  // scale · B A dropout(x) for x [..., in] -> [..., out].
  at::Tensor delta(const at::Tensor& x) const;
  // weight + scale · B A, in weight's dtype (a copy; weight is not changed).
  at::Tensor merged(const at::Tensor& weight) const;
};

}  // namespace lmk
