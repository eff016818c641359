#pragma once

// Attention: rotary position embeddings, exact blockwise attention (global or a local band,
// never an [L, L] matrix) and the probabilities of chosen query rows (AttentionCapture).

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <optional>
#include <vector>

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
  // Layers whose rows are kept one per query as well, averaged over heads, whatever the
  // settings above: [B, 1, queries, L] in `rows` (the explorer's per-landmark view).
  std::vector<int64_t> row_layers;
  std::map<int64_t, at::Tensor> rows;
  // Called after each layer of the forward pass with the layer's index (progress).
  std::function<void(int64_t layer)> on_layer;
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

// cos / sin of the rotary angles for positions 0..L-1, head size d, base theta: [L, d] each.
RopeTables rope_tables(int64_t L, int64_t d, double theta);

// Applies rotary position embeddings (NeoX / rotate_half convention) to x [B, heads, L, d].
at::Tensor apply_rope(const at::Tensor& x, const RopeTables& tables);
// The same, building the tables for positions 0..L-1 with base theta.
at::Tensor apply_rope(const at::Tensor& x, double theta);

// LibTorch's scaled_dot_product_attention with a key mask ([B, L], true = attend): what a global
// layer on CUDA runs over a padded batch. A row whose mask allows no key attends to its first
// key instead of giving NaN (its output is padding).
at::Tensor masked_sdpa(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       const at::Tensor& key_mask);

// Exact attention, never forming an [L, L] matrix. q, k, v: [B, heads, L, d]; key_mask [B, L]
// (true = attend); half_window < 0: global, else position i attends only to |i - j| <=
// half_window; causal: position i attends only to j <= i as well (a decoder). Float32 on the CPU
// runs the fused kernel (attention_kernel.h; block > 0 sets its query and key tile, 0 its
// defaults), with its own backward when gradients are wanted (only the per-row log-sum-exp is kept:
// memory linear in L); a global layer on CUDA LibTorch's scaled_dot_product_attention with the key
// mask (not causal); anything else (a local layer on CUDA, bf16 or double on the CPU) blocks of
// queries through tensor ops, each seeing only its band of keys. Returns [B, heads, L, d]; a query
// that may see no key gets zeros on the CPU path.
at::Tensor blockwise_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& key_mask, int64_t half_window, int64_t block,
                               bool causal = false);

// A batch with its padding removed, as ModernBERT runs (unpadding): the valid tokens of every
// row one after another, so that the layers compute no padding and attention needs no mask.
// Rows must be right-padded (a mask of ones, then zeros), as lmk's batches are.
struct UnpaddedBatch {
  at::Tensor indices;            // [total] long: b * L + i of each valid token, in order
  at::Tensor positions;          // [total] long: each token's position in its row (for RoPE)
  at::Tensor cu_seqlens;         // [B + 1] int32: where each row starts; the last is total
  std::vector<int64_t> lengths;  // per row
  int64_t batch = 0, length = 0, max_length = 0, total = 0;  // B, L, the longest row, tokens
};

// The unpadded layout of key_mask [B, L]; nullopt when a row is not right-padded.
std::optional<UnpaddedBatch> unpad_batch(const at::Tensor& key_mask);
// x [B, L, ...] -> [total, ...]: the valid tokens.
at::Tensor unpad(const at::Tensor& x, const UnpaddedBatch& batch);
// x [total, ...] -> [B, L, ...], zeros at the padding.
at::Tensor repad(const at::Tensor& x, const UnpaddedBatch& batch);
// RoPE of unpadded tokens: x [total, heads, d], each token rotated by its row position.
at::Tensor apply_rope_unpadded(const at::Tensor& x, const RopeTables& tables,
                               const UnpaddedBatch& batch);

// How varlen_attention computes: FlashAttention (LibTorch's variable-length kernel) or each
// row through blockwise_attention.
enum class VarlenRoute { Flash, PerRow };
// The route for q [total, heads, d] on its device and dtype: Flash on CUDA in fp16 / bf16 with
// a head size FlashAttention takes (a multiple of 8, at most 256).
VarlenRoute varlen_route(const at::Tensor& q);

// Exact attention over an unpadded batch: q, k, v [total, heads, d]; each row attends within
// itself, within |i - j| <= half_window when half_window >= 0 (a local layer), and to j <= i
// when causal. Flash: one
// kernel call over cumulative lengths (no [L, L] matrix, no mask), windowed for local layers,
// with LibTorch's backward for training. PerRow: blockwise_attention of each row (the fused
// CPU kernel in fp32 on the CPU). Returns [total, heads, d].
at::Tensor varlen_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const UnpaddedBatch& batch, int64_t half_window, int64_t block,
                            bool causal = false);

// Whether training on the CPU in float32 takes the fused kernel's backward (the default) or the
// tensor ops (the formulation before it, whose memory grows with L²): lmk_train_bench's
// --attention-backward compares them. Process-wide; not for use while a model runs.
void set_fused_attention_backward(bool fused);

// The attention probabilities of the query positions rows[b] of each batch row b to every
// key: [B, heads (1 unless per_head), queries (1 when mean_over_rows), L], float32, with the
// keys each query may see as blockwise_attention. Rows are computed in chunks; a query that sees
// no key gets zeros.
at::Tensor attention_probabilities(const at::Tensor& q, const at::Tensor& k,
                                   const at::Tensor& key_mask, int64_t half_window,
                                   const std::vector<std::vector<int64_t>>& rows, bool per_head,
                                   bool mean_over_rows, bool causal = false);

}  // namespace lmk
