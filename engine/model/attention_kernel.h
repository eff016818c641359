#pragma once

// Exact softmax attention on the CPU without a score matrix larger than one tile: for each
// (batch row, head, tile of queries) it streams tiles of keys through an L2-sized buffer,
// S = scale · Q Kᵀ, keeps each query's running maximum and sum (FlashAttention's online
// softmax), and accumulates O += P V. With AVX2 and a head size that is a multiple of 16 (every
// preset: 64) the two products run in the kernel's own register-blocked micro-kernel: the query
// tile is packed once (transposed) for all its key tiles, the scores are computed transposed so
// that the softmax runs across queries in vector lanes, and no BLAS call (with its per-call
// packing) is made. Otherwise each product is one sgemm of the machine's BLAS. Local
// (sliding-window) layers visit only the keys of their band, causal attention only the keys up
// to each query tile's last query (the tiles above the diagonal are never computed).

#include <cstdint>

namespace lmk {

// A [batch, heads, length, head_dim] float tensor through its strides (in elements); each row
// of head_dim values is contiguous.
struct HeadsView {
  float* data = nullptr;
  int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
  float* row(int64_t b, int64_t h, int64_t i) const {
    return data + b * batch_stride + h * head_stride + i * row_stride;
  }
};

struct FusedAttentionProblem {
  int64_t batch = 0, heads = 0, length = 0, head_dim = 0;
  HeadsView q, k, v, out;
  const bool* key_mask = nullptr;  // [batch, length], row-major; true = may be attended to
  int64_t half_window = -1;        // < 0: global; else query i sees keys |i - j| <= half_window
  bool causal = false;             // query i sees keys j <= i only (a decoder's attention)
  float scale = 1.0f;
  // When set, [batch, heads, length] contiguous: each query's log-sum-exp of its scaled, masked
  // scores (minus infinity when it sees no key), what the backward needs instead of the
  // probabilities.
  float* lse = nullptr;
};

// out = softmax(scale · q kᵀ, masked) v for every query. A query that may see no key at all
// (a padding position far from any token) gets zeros. Runs on LibTorch's intra-op threads.
void fused_attention(const FusedAttentionProblem& problem, int64_t query_tile = 64,
                     int64_t key_tile = 256);

// Which products the kernels run: their own micro-kernel where it applies (AVX2, head size a
// multiple of 16; the default), the BLAS sgemm always (for benchmarks comparing the two), or
// sgemm with the softmax's lane passes in plain C++ too (what a CPU without AVX2 runs; for
// tests).
enum class AttentionProducts { MicroKernel, Blas, Portable };
void set_attention_products(AttentionProducts products);
// The products a problem of this head size gets now (MicroKernel falls back to Blas where it
// does not apply).
AttentionProducts attention_products(int64_t head_dim);

// What the backward of fused_attention reads and writes (FlashAttention-2's backward).
struct FusedAttentionGradients {
  HeadsView grad_out;                // dL/d out
  const float* lse = nullptr;        // the forward's [batch, heads, length]
  const float* delta = nullptr;      // [batch, heads, length]: rowsum(grad_out ∘ out)
  HeadsView grad_q, grad_k, grad_v;  // zero-filled by the caller; each (b, h) is written once
};

// dq, dk, dv of `problem` (its q, k, v, mask, band and scale; out is not read) with only the
// per-row log-sum-exp kept from the forward: per (batch row, head) the scores are recomputed
// tile by tile, P = exp(S − lse), and dV += Pᵀ dO, dP = dO Vᵀ, dS = P ∘ (dP − delta),
// dK += scale dSᵀ Q, dQ += scale dS K, each product in the forward's micro-kernel (on transposed
// tiles) where the forward uses it, else one sgemm. Local layers visit their band only; memory
// is one tile pair per thread. Parallel over (batch row, head) pairs, so no two
// threads write the same gradient row.
void fused_attention_backward(const FusedAttentionProblem& problem,
                              const FusedAttentionGradients& gradients, int64_t query_tile = 64,
                              int64_t key_tile = 256);

}  // namespace lmk
