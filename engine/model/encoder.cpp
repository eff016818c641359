#include "engine/model/encoder.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/util/error.h"
#include "engine/model/architecture.h"
#include "engine/model/recompute.h"

namespace lmk {

// ---------------------------------------------------------------------------------------------
// Parameters: declared by the architecture's file, in its order (the initialization draws
// follow it).

at::Tensor Encoder::add_weight(const std::string& name, std::vector<int64_t> shape, double init_std,
                               bool head) {
  std::string registered = name;
  std::replace(registered.begin(), registered.end(), '.', '_');
  weights_[name] = register_parameter(registered, at::empty(shape, at::kFloat));
  init_std_[name] = init_std;
  if (head) head_names_.push_back(name);
  // Otherwise a checkpoint fills it.
  if (initialize_) initialize_weight(name);
  return weights_[name];
}

void Encoder::initialize_weight(const std::string& name) {
  at::NoGradGuard no_grad;
  at::Tensor& t = weights_.at(name);
  const double init_std = init_std_.at(name);
  if (init_std > 0) {
    // Truncated at ±2σ, as ModernBERT's initialization (cutoff factor 2).
    t.normal_(0.0, init_std, init_generator_).clamp_(-2 * init_std, 2 * init_std);
  } else if (init_std == 0) {
    t.zero_();
  } else {
    t.fill_(1.0);  // norm weights
  }
}

Encoder::Encoder(EncoderConfig config, uint64_t seed, bool initialize)
    : initialize_(initialize), config_(std::move(config)) {
  config_.validate("encoder config");
  // The initialization draws from a generator of its own (the stream at::manual_seed(seed) would
  // give the global one): building a model changes no global state, and asks ATen nothing about
  // CUDA (at::manual_seed also seeds every accelerator, which fixes ATen's CUDA hooks for good).
  init_generator_ = at::make_generator<at::CPUGeneratorImpl>(seed);
  // The tensors a handle holds stay the registered parameters: loading copies into them,
  // Module::to and optimizers change them in place.
  const WeightBuilder builder(
      config_,
      [this](const std::string& name, std::vector<int64_t> shape, double init_std, bool head) {
        return add_weight(name, std::move(shape), init_std, head);
      },
      [this](const std::string& name, std::shared_ptr<LoraAdapter> adapter) {
        linears_[name] = std::move(adapter);
      });
  switch (config_.architecture) {
    case Architecture::ModernBert:
      graph_ = build_modern_bert(builder);
      break;
    case Architecture::Bert:
      graph_ = build_bert(builder);
      break;
    case Architecture::Gte:
      graph_ = build_gte(builder);
      break;
    case Architecture::Llama:
    case Architecture::Qwen3:
      graph_ = build_llama(builder);
      break;
  }
}

Encoder::~Encoder() = default;

bool Encoder::is_head_weight(const std::string& name) const {
  return std::find(head_names_.begin(), head_names_.end(), name) != head_names_.end();
}

// ---------------------------------------------------------------------------------------------
// LoRA adapters (engine/model/lora.h).

std::vector<std::string> Encoder::attach_lora(const LoraSettings& settings, uint64_t seed) {
  if (settings.rank < 1) throw InputError("LoRA rank must be at least 1");
  if (lora_.rank > 0) throw InputError("LoRA adapters are attached already");
  std::vector<std::string> adapted;
  for (const auto& [name, adapter] : linears_)
    if (lora_targets(name, settings.target_modules)) adapted.push_back(name);
  if (adapted.empty()) {
    std::string targets;
    for (const std::string& t : settings.target_modules)
      targets += (targets.empty() ? "" : ", ") + t;
    throw InputError("LoRA target modules (" + targets + ") match no linear layer of the model (" +
                     linears_.begin()->first + ", ...)");
  }
  for (const std::string& name : adapted) {
    const at::Tensor& weight = weights_.at(name + ".weight");
    // Above the smaller side B A gains nothing (PEFT allows it, so adapter folders may have it);
    // above the larger side the adapters outgrow the layer: a mistake, refused before the
    // allocation.
    const int64_t larger = std::max(weight.size(0), weight.size(1));
    if (settings.rank > larger)
      throw InputError("LoRA rank " + std::to_string(settings.rank) + " exceeds the layer " + name +
                       "'s larger side (" + std::to_string(larger) +
                       "): the adapters would outgrow the layer");
  }
  for (auto& [name, weight] : weights_) weight.set_requires_grad(false);
  // One generator: the draws follow the layers' order by name, whatever the global seed did.
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  const at::NoGradGuard no_grad;
  for (const std::string& name : adapted) {
    LoraAdapter& adapter = *linears_.at(name);
    const at::Tensor& weight = weights_.at(name + ".weight");
    const int64_t out = weight.size(0), in = weight.size(1);
    // PEFT: kaiming_uniform_(a = √5) on A [r, in], whose bound is 1 / √in; B zero.
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    at::Tensor a = at::empty({settings.rank, in}, at::kFloat).uniform_(-bound, bound, generator);
    std::string registered = "lora_" + name;
    std::replace(registered.begin(), registered.end(), '.', '_');
    adapter.a = register_parameter(registered + "_A", a.to(weight.options()));
    adapter.b =
        register_parameter(registered + "_B", at::zeros({out, settings.rank}, weight.options()));
    adapter.scale = settings.scale();
    adapter.dropout = settings.dropout;
  }
  lora_ = settings;
  return adapted;
}

at::Tensor Encoder::merged_weight(const std::string& name) const {
  const at::Tensor& weight = weights_.at(name);
  constexpr std::string_view suffix = ".weight";
  if (lora_.rank > 0 && name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const auto layer = linears_.find(name.substr(0, name.size() - suffix.size()));
    if (layer != linears_.end() && layer->second->attached()) return layer->second->merged(weight);
  }
  return weight;
}

// ---------------------------------------------------------------------------------------------
// The forward pass.

namespace {

// Queries and keys in the values' dtype: under bf16 autocast Qwen3's query / key RMSNorms
// (fp32 weights) leave q and k in fp32 while v is bf16, and FlashAttention refuses mixed dtypes
// (the route is chosen on q). torch's autocast casts SDPA's three inputs to bf16 alike.
void same_dtype(at::Tensor& q, at::Tensor& k, const at::Tensor& v) {
  if (q.scalar_type() != v.scalar_type()) q = q.to(v.scalar_type());
  if (k.scalar_type() != v.scalar_type()) k = k.to(v.scalar_type());
}

// Grouped-query attention: key / value heads [.., kv heads, ..] (dimension 1, padded or
// unpadded) repeated so that query head h reads head h / groups, as transformers' repeat_kv.
at::Tensor repeat_kv(const at::Tensor& t, int64_t groups) {
  return groups == 1 ? t : t.repeat_interleave(groups, 1);
}

}  // namespace

at::Tensor Encoder::attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           int64_t layer, const at::Tensor& key_mask, AttentionCapture* capture,
                           std::map<double, RopeTables>& rope) const {
  const int64_t B = q.size(0), L = q.size(1), heads = config_.num_heads,
                kv_heads = config_.kv_heads(), d = config_.head_dim();
  auto heads_first = [&](const at::Tensor& t, int64_t n) {
    return t.reshape({B, L, n, d}).transpose(1, 2);
  };  // [B, n, L, d]
  at::Tensor qh = heads_first(q, heads), kh = heads_first(k, kv_heads),
             vh = heads_first(v, kv_heads);
  same_dtype(qh, kh, vh);
  if (config_.rotates()) {
    const double theta = config_.layer_rope_theta(layer);
    auto tables = rope.find(theta);
    if (tables == rope.end()) tables = rope.emplace(theta, rope_tables(L, d, theta)).first;
    qh = apply_rope(qh, tables->second);
    kh = apply_rope(kh, tables->second);
  }
  kh = repeat_kv(kh, heads / kv_heads);
  vh = repeat_kv(vh, heads / kv_heads);
  const int64_t half_window = config_.is_global_layer(layer) ? -1 : config_.half_window();
  const bool causal = config_.causal;
  if (capture && capture->wants_layer(layer, config_.num_layers)) {
    capture->weights[layer] =
        attention_probabilities(qh, kh, key_mask, half_window, capture->query_positions,
                                capture->per_head, capture->mean_over_queries, causal);
  }
  if (capture && std::find(capture->row_layers.begin(), capture->row_layers.end(), layer) !=
                     capture->row_layers.end()) {
    capture->rows[layer] =
        attention_probabilities(qh, kh, key_mask, half_window, capture->query_positions,
                                /*per_head=*/false, /*mean_over_rows=*/false, causal);
  }
  const at::Tensor context =
      blockwise_attention(qh, kh, vh, key_mask, half_window, attention_block_, causal);
  return context.transpose(1, 2).reshape({B, L, heads * d});  // [B, L, heads · d]
}

at::Tensor Encoder::attend_unpadded(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    int64_t layer, const UnpaddedBatch& batch,
                                    std::map<double, RopeTables>& rope) const {
  const int64_t total = q.size(1), heads = config_.num_heads, kv_heads = config_.kv_heads(),
                d = config_.head_dim();
  at::Tensor qh = q.reshape({total, heads, d}), kh = k.reshape({total, kv_heads, d}),
             vh = v.reshape({total, kv_heads, d});
  same_dtype(qh, kh, vh);
  if (config_.rotates()) {
    const double theta = config_.layer_rope_theta(layer);
    auto tables = rope.find(theta);
    if (tables == rope.end()) {
      RopeTables made = rope_tables(batch.length, d, theta);
      made.cos = made.cos.to(q.device());  // made once per pass where the tokens are
      made.sin = made.sin.to(q.device());
      tables = rope.emplace(theta, std::move(made)).first;
    }
    qh = apply_rope_unpadded(qh, tables->second, batch);
    kh = apply_rope_unpadded(kh, tables->second, batch);
  }
  kh = repeat_kv(kh, heads / kv_heads);
  vh = repeat_kv(vh, heads / kv_heads);
  const int64_t half_window = config_.is_global_layer(layer) ? -1 : config_.half_window();
  return varlen_attention(qh, kh, vh, batch, half_window, attention_block_, config_.causal)
      .reshape({1, total, heads * d});
}

bool Encoder::runs_unpadded(const at::Tensor& ids) const {
  if (unpadding_ != Unpadding::Auto) return unpadding_ == Unpadding::Always;
  if (!ids.is_cuda()) return false;
  const auto dtype = weights_.begin()->second.scalar_type();
  return at::autocast::is_autocast_enabled(at::kCUDA) || dtype == at::kHalf ||
         dtype == at::kBFloat16;
}

at::Tensor Encoder::forward(const at::Tensor& ids, const at::Tensor& mask,
                            AttentionCapture* capture) {
  TORCH_CHECK(ids.dim() == 2 && mask.sizes() == ids.sizes(), "ids and mask must be [B, L]");
  TORCH_CHECK(config_.uses_rope() || ids.size(1) <= config_.max_position_embeddings,
              "sequence longer than max_position_embeddings");
  const at::Tensor key_mask = mask.to(at::kBool);
  // This pass's RoPE tables by theta, shared with the recomputations of the backward.
  auto rope = std::make_shared<std::map<double, RopeTables>>();
  // Unpadded (set_unpadding): held by pointer, shared with the recomputations too.
  std::shared_ptr<const UnpaddedBatch> unpadded;
  if (capture == nullptr && runs_unpadded(ids)) {
    if (auto batch = unpad_batch(key_mask))
      unpadded = std::make_shared<const UnpaddedBatch>(std::move(*batch));
  }
  auto attend_with = [this, key_mask, unpadded](AttentionCapture* capture_here,
                                                std::map<double, RopeTables>& tables) -> Attend {
    return [this, key_mask, unpadded, capture_here, &tables](
               const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t layer) {
      if (unpadded) return this->attend_unpadded(q, k, v, layer, *unpadded, tables);
      return this->attend(q, k, v, layer, key_mask, capture_here, tables);
    };
  };
  const Attend attend = attend_with(capture, *rope);
  const bool recompute = recompute_layers_ && at::GradMode::is_enabled() && capture == nullptr;
  at::Tensor hidden = graph_->embed(ids);                        // [B, L, H]
  if (unpadded) hidden = unpad(hidden, *unpadded).unsqueeze(0);  // [1, total, H]
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    if (recompute) {
      // Runs now without keeping activations, and again in the backward: what it reads is
      // held by value (the encoder outlives the step).
      hidden = recompute_in_backward(hidden, [this, i, attend_with, rope](const at::Tensor& x) {
        return graph_->layer(i, x, attend_with(nullptr, *rope));
      });
    } else {
      hidden = graph_->layer(i, std::move(hidden), attend);
    }
    if (capture != nullptr && capture->on_layer) capture->on_layer(i);
  }
  hidden = graph_->finish(hidden);
  return unpadded ? repad(hidden.squeeze(0), *unpadded) : hidden;
}

at::Tensor Encoder::mlm_logits(const at::Tensor& hidden) {
  return graph_->mlm_logits(hidden);
}

}  // namespace lmk
