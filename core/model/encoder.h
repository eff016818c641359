#pragma once

// The encoder: ModernBERT, BERT and GTE in one forward that reads top to bottom, with
// config-driven branches. Parameters carry Hugging Face's names (without the "model." /
// "bert." / "new." prefix), so checkpoints load by name.

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <map>
#include <string>
#include <vector>

#include "core/model/config.h"

namespace lmk {

// Attention from chosen query positions to every key position, for the final layer or the
// layers asked for (filled by Encoder::forward when requested). Never forms an [L, L] matrix:
// only the chosen rows are computed, in chunks.
struct AttentionCapture {
  std::vector<std::vector<int64_t>> query_positions;  // per batch row
  bool per_head = false;                              // false: averaged over heads
  bool mean_over_queries = false;  // true: averaged over each row's query positions
  std::vector<int64_t> layers;     // empty: the final layer only
  // Per captured layer: [B, heads (1 when averaged), queries (1 when averaged), L].
  std::map<int64_t, at::Tensor> weights;
  bool wants_layer(int64_t layer, int64_t num_layers) const {
    if (layers.empty()) return layer == num_layers - 1;
    for (int64_t l : layers)
      if (l == layer) return true;
    return false;
  }
};

// cos / sin of rotary angles per position and head dimension ([L, d] each).
struct RopeTables {
  at::Tensor cos, sin;
};

class Encoder : public torch::nn::Module {
 public:
  // A model with freshly initialized weights (ModernBERT's initialization scheme), or, with
  // initialize = false, uninitialized weights that a checkpoint is about to overwrite.
  explicit Encoder(EncoderConfig config, uint64_t seed = 0, bool initialize = true);

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
  // Queries per attention block: bounds attention memory to about block × L per head.
  void set_attention_block(int64_t queries) { attention_block_ = queries; }

 private:
  void add_weight(const std::string& name, std::vector<int64_t> shape, double init_std, bool head);
  bool initialize_ = true;
  at::Tensor& w(const std::string& name) { return weights_.at(name); }
  bool has(const std::string& name) const { return weights_.count(name) > 0; }
  at::Tensor embed(const at::Tensor& ids);
  // rope: the RoPE tables of this forward pass by theta (built on first use, shared by layers).
  at::Tensor attention(const at::Tensor& x, const at::Tensor& key_mask, int64_t layer,
                       AttentionCapture* capture, std::map<double, RopeTables>& rope);
  at::Tensor feed_forward(const at::Tensor& x, int64_t layer);
  at::Tensor layer_norm(const at::Tensor& x, const std::string& prefix);
  at::Tensor linear(const at::Tensor& x, const std::string& prefix);

  EncoderConfig config_;
  std::map<std::string, at::Tensor> weights_;
  std::vector<std::string> head_names_;
  std::map<std::string, double> init_std_;  // per parameter: > 0 normal σ, 0 zeros, < 0 ones
  int64_t attention_block_ = 0;             // 0: chosen from the sequence length
};

// gelu (erf), gelu_new / gelu_pytorch_tanh (tanh), silu or relu of x.
at::Tensor apply_activation(const at::Tensor& x, const std::string& activation);

// Which half of a GLU projection goes through the activation.
enum class GluOrder {
  ActivateFirst,   // ModernBERT: act(first half) * second half
  ActivateSecond,  // GTE: first half (up) * act(second half (gate))
};
// Splits projected [..., 2I] into halves and gates one with the other.
at::Tensor gated_linear_unit(const at::Tensor& projected, const std::string& activation,
                             GluOrder order);

// cos / sin of the rotary angles for positions 0..L-1, head size d, base theta: [L, d] each.
RopeTables rope_tables(int64_t L, int64_t d, double theta);

// Applies rotary position embeddings (NeoX / rotate_half convention) to x [B, heads, L, d].
at::Tensor apply_rope(const at::Tensor& x, const RopeTables& tables);
// The same, building the tables for positions 0..L-1 with base theta.
at::Tensor apply_rope(const at::Tensor& x, double theta);

// Exact attention, never forming an [L, L] matrix. q, k, v: [B, heads, L, d]; key_mask [B, L]
// (true = attend); half_window < 0: global, else position i attends only to |i - j| <=
// half_window. Float32 on the CPU runs the fused kernel (attention_kernel.h; block > 0 sets its
// query and key tile, 0 its defaults), anything else blocks of queries through tensor ops.
// Returns [B, heads, L, d]; a query that may see no key gets zeros on the CPU path.
at::Tensor blockwise_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& key_mask, int64_t half_window, int64_t block);

// The attention probabilities of the query positions rows[b] of each batch row b to every
// key: [B, heads (1 unless per_head), queries (1 when mean_over_rows), L], float32. Rows are
// computed in chunks; a query that sees no key gets zeros.
at::Tensor attention_probabilities(const at::Tensor& q, const at::Tensor& k,
                                   const at::Tensor& key_mask, int64_t half_window,
                                   const std::vector<std::vector<int64_t>>& rows, bool per_head,
                                   bool mean_over_rows);

}  // namespace lmk
