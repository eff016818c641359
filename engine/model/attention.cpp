#include "engine/model/attention.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "engine/model/attention_kernel.h"
#include "engine/model/layers.h"

namespace lmk {

RopeTables rope_tables(int64_t L, int64_t d, double theta) {
  // inv_freq[i] = theta^(-2i/d); angle[p, i] = p * inv_freq[i]; cos/sin repeated for both halves.
  const at::Tensor inv_freq =
      at::pow(theta, at::arange(0, d, 2, at::kFloat).div(static_cast<double>(d))).reciprocal();
  const at::Tensor angles = at::outer(at::arange(L, at::kFloat), inv_freq);  // [L, d/2]
  const at::Tensor emb = at::cat({angles, angles}, -1);                      // [L, d]
  return {emb.cos(), emb.sin()};
}

namespace {

// One pass of rotate_half RoPE on the CPU for float32 without gradients: x [B, heads, L, d]
// (rows of d contiguous) into a contiguous [B, heads, L, d] tensor.
at::Tensor apply_rope_cpu(const at::Tensor& x, const RopeTables& tables) {
  const int64_t B = x.size(0), heads = x.size(1), L = x.size(2), d = x.size(3), half = d / 2;
  const at::Tensor in = x.stride(3) == 1 ? x : x.contiguous();
  const at::Tensor cos = tables.cos.contiguous(), sin = tables.sin.contiguous();
  at::Tensor out = at::empty({B, heads, L, d}, x.options());
  const float* src = in.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  const float* c = cos.data_ptr<float>();
  const float* s = sin.data_ptr<float>();
  const int64_t sb = in.stride(0), sh = in.stride(1), sl = in.stride(2);
  const int64_t ob = out.stride(0), oh = out.stride(1), ol = out.stride(2);
  at::parallel_for(0, B * heads * L, 256, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t i = row % L, h = (row / L) % heads, b = row / (L * heads);
      const float* xr = src + b * sb + h * sh + i * sl;
      float* yr = dst + b * ob + h * oh + i * ol;
      const float* cr = c + i * d;
      const float* sr = s + i * d;
      for (int64_t j = 0; j < half; ++j) {
        yr[j] = xr[j] * cr[j] - xr[j + half] * sr[j];
        yr[j + half] = xr[j + half] * cr[j + half] + xr[j] * sr[j + half];
      }
    }
  });
  return out;
}

// x · cos + rotate_half(x) · sin in tensor ops, cos / sin broadcast against x.
at::Tensor rotate(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  const int64_t d = x.size(-1);
  const at::Tensor rotated =
      at::cat({x.narrow(-1, d / 2, d / 2).neg(), x.narrow(-1, 0, d / 2)}, -1);
  return x * cos.to(x.device(), x.scalar_type()) + rotated * sin.to(x.device(), x.scalar_type());
}

}  // namespace

at::Tensor apply_rope(const at::Tensor& x, const RopeTables& tables) {
  const int64_t d = x.size(3);
  if (x.device().is_cpu() && x.scalar_type() == at::kFloat && d % 2 == 0 && !wants_grad(x) &&
      tables.cos.scalar_type() == at::kFloat) {
    return apply_rope_cpu(x, tables);
  }
  return rotate(x, tables.cos, tables.sin);
}

at::Tensor apply_rope(const at::Tensor& x, double theta) {
  return apply_rope(x, rope_tables(x.size(2), x.size(3), theta));
}

namespace {

// Whether query positions qi see key positions kj (broadcast): |i - j| <= half_window when
// half_window >= 0, j <= i when causal.
at::Tensor band_allows(const at::Tensor& qi, const at::Tensor& kj, int64_t half_window,
                       bool causal) {
  const at::Tensor offset = qi - kj;
  at::Tensor allowed =
      half_window >= 0 ? offset.abs().le(half_window) : at::ones_like(offset).to(at::kBool);
  return causal ? allowed.logical_and(offset.ge(0)) : allowed;
}

// The tiled tensor-op formulation, for devices and dtypes the fused CPU kernel does not take
// (CUDA, bf16): blocks of queries against all keys (or the band), softmax, product.
at::Tensor blocked_attention_ops(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                 const at::Tensor& key_mask, int64_t half_window, int64_t block,
                                 bool causal) {
  const int64_t B = q.size(0), heads = q.size(1), L = q.size(2), d = q.size(3);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  at::Tensor out = at::empty_like(q);
  // A finite "minus infinity": a padding row whose whole window is padding stays finite.
  const double masked = std::numeric_limits<float>::lowest();
  const at::Tensor keys_allowed = key_mask.to(at::kBool).view({B, 1, 1, L});
  if (block <= 0 && half_window >= 0 && q.device().is_cpu()) {
    // A local layer on the CPU (training): blocks of 2·half_window queries score about twice
    // the band, where one block of the whole sequence would score every key.
    block = std::max<int64_t>(16, 2 * half_window);
  } else if (block <= 0) {
    // About 64 MiB of scores per block.
    const int64_t span = half_window >= 0 ? std::min<int64_t>(L, 2 * half_window + 1) : L;
    block =
        std::clamp<int64_t>((int64_t{1} << 24) / std::max<int64_t>(1, B * heads * span), 16, 4096);
  }
  for (int64_t start = 0; start < L; start += block) {
    const int64_t end = std::min(L, start + block);
    // Keys a query in [start, end) may see: all, or the band around the block, and none after
    // the block's last query when causal.
    const int64_t key_start = half_window >= 0 ? std::max<int64_t>(0, start - half_window) : 0;
    const int64_t key_end = causal ? end : half_window >= 0 ? std::min(L, end + half_window) : L;
    const at::Tensor qb = q.narrow(2, start, end - start);
    const at::Tensor kb = k.narrow(2, key_start, key_end - key_start);
    const at::Tensor vb = v.narrow(2, key_start, key_end - key_start);
    // In fp32 (bf16 cannot hold the finite "minus infinity" below: masked_fill throws), as
    // attention_probabilities computes them; the probabilities meet v in its dtype.
    at::Tensor scores =
        at::matmul(qb, kb.transpose(-1, -2)).to(at::kFloat).mul_(scale);  // [B, heads, bq, bk]
    at::Tensor allowed = keys_allowed.narrow(3, key_start, key_end - key_start);
    if (half_window >= 0 || causal) {
      const at::Tensor qi = at::arange(start, end, q.options().dtype(at::kLong)).view({-1, 1});
      const at::Tensor kj =
          at::arange(key_start, key_end, q.options().dtype(at::kLong)).view({1, -1});
      allowed = allowed.logical_and(
          band_allows(qi, kj, half_window, causal).view({1, 1, end - start, key_end - key_start}));
    }
    // In place: autograd keeps only the mask for it (matmul saved its inputs, not its output).
    scores.masked_fill_(allowed.logical_not(), masked);
    out.narrow(2, start, end - start)
        .copy_(at::matmul(at::softmax(scores, -1).to(vb.scalar_type()), vb));
  }
  return out;
}

HeadsView heads_view(const at::Tensor& t) {
  return {t.data_ptr<float>(), t.stride(0), t.stride(1), t.stride(2)};
}

// The fused kernel's inputs: keys and values contiguous per head (every query tile streams all
// of them, and rows 3·H floats apart, the fused qkv projection's layout, cost a TLB miss per row
// at 32k tokens), queries with contiguous rows, the mask as bools.
struct FusedInputs {
  at::Tensor q, k, v, mask;
  int64_t half_window = -1, tile = 0;  // tile 0: the kernel's defaults
  bool causal = false;

  FusedAttentionProblem problem() const {
    FusedAttentionProblem p;
    p.batch = q.size(0), p.heads = q.size(1), p.length = q.size(2), p.head_dim = q.size(3);
    p.q = heads_view(q), p.k = heads_view(k), p.v = heads_view(v);
    p.key_mask = mask.data_ptr<bool>();
    p.half_window = half_window;
    p.causal = causal;
    p.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_dim)));
    return p;
  }
};

// Runs the kernel into a [B, L, heads, d] tensor (so that the caller's [B, L, H] view costs no
// copy); with `lse`, also each query's log-sum-exp [B, heads, L].
at::Tensor run_fused(const FusedInputs& in, at::Tensor* lse) {
  const int64_t B = in.q.size(0), heads = in.q.size(1), L = in.q.size(2), d = in.q.size(3);
  const at::Tensor out = at::empty({B, L, heads, d}, in.q.options());
  FusedAttentionProblem problem = in.problem();
  problem.out = heads_view(out.transpose(1, 2));
  if (lse) {
    *lse = at::empty({B, heads, L}, in.q.options());
    problem.lse = lse->data_ptr<float>();
  }
  if (in.tile > 0) {
    fused_attention(problem, in.tile, in.tile);
  } else {
    fused_attention(problem);
  }
  return out;
}

// The fused kernel's backward (FlashAttention-2's): from the saved inputs, output and per-row
// log-sum-exp — no probabilities, so a training step's attention memory is linear in L.
class FusedAttentionBackward : public torch::autograd::Node {
 public:
  FusedAttentionBackward(FusedInputs inputs, at::Tensor out, at::Tensor lse)
      : inputs_(std::move(inputs)), out_(std::move(out)), lse_(std::move(lse)) {}

  torch::autograd::variable_list apply(torch::autograd::variable_list&& grads) override {
    const at::Tensor& grad = grads.at(0);  // [B, L, heads, d], as the output
    if (!grad.defined()) return {at::Tensor(), at::Tensor(), at::Tensor()};
    const at::NoGradGuard no_grad;
    const at::Tensor grad_out = grad.to(at::kFloat).contiguous();
    const at::Tensor delta = (grad_out * out_).sum(-1).transpose(1, 2).contiguous();  // [B, h, L]
    at::Tensor dq = at::zeros_like(inputs_.q, at::MemoryFormat::Contiguous),
               dk = at::zeros_like(inputs_.k, at::MemoryFormat::Contiguous),
               dv = at::zeros_like(inputs_.v, at::MemoryFormat::Contiguous);
    FusedAttentionGradients g;
    g.grad_out = heads_view(grad_out.transpose(1, 2));
    g.lse = lse_.data_ptr<float>();
    g.delta = delta.data_ptr<float>();
    g.grad_q = heads_view(dq), g.grad_k = heads_view(dk), g.grad_v = heads_view(dv);
    const FusedAttentionProblem problem = inputs_.problem();
    if (inputs_.tile > 0) {
      fused_attention_backward(problem, g, inputs_.tile, inputs_.tile);
    } else {
      fused_attention_backward(problem, g);
    }
    return {dq, dk, dv};
  }

  std::string name() const override { return "lmk::FusedAttentionBackward"; }
  void release_variables() override {
    inputs_ = {};
    out_.reset();
    lse_.reset();
  }

 private:
  FusedInputs inputs_;
  at::Tensor out_, lse_;
};

bool fused_backward = true;  // set_fused_attention_backward

}  // namespace

void set_fused_attention_backward(bool fused) {
  fused_backward = fused;
}

at::Tensor masked_sdpa(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                       const at::Tensor& key_mask) {
  // A row with no key at all (an empty text in a batch) would give NaN (a softmax over nothing)
  // and NaN in a backward reaches every weight: such a row sees its first key instead (its
  // output is padding, never read).
  at::Tensor keys = key_mask.to(at::kBool);
  const at::Tensor none = keys.any(-1).logical_not();
  if (none.any().item<bool>()) {
    keys = keys.clone();
    keys.select(1, 0).logical_or_(none);
  }
  return at::scaled_dot_product_attention(q, k, v, keys.view({q.size(0), 1, 1, q.size(2)}));
}

at::Tensor blockwise_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& key_mask, int64_t half_window, int64_t block,
                               bool causal) {
  const bool training = wants_grad(q) || wants_grad(k) || wants_grad(v);
  const bool fused = q.device().is_cpu() && q.scalar_type() == at::kFloat &&
                     k.scalar_type() == at::kFloat && v.scalar_type() == at::kFloat &&
                     (!training || fused_backward);
  if (!fused && q.is_cuda() && half_window < 0 && !causal) {
    // A global layer on CUDA over a padded batch: LibTorch's fused attention (its memory-
    // efficient kernel takes the key mask; memory linear in L). Unpadded batches take
    // varlen_attention instead. (It takes a key mask or causality, not both: causal padded
    // batches go through the tensor ops, exactly.)
    return masked_sdpa(q, k, v, key_mask);
  }
  if (!fused) return blocked_attention_ops(q, k, v, key_mask, half_window, block, causal);
  FusedInputs inputs;
  inputs.half_window = half_window;
  inputs.causal = causal;
  inputs.tile = block;
  // Training runs the same kernel forward, keeping each row's log-sum-exp for the backward.
  at::Tensor lse, out;
  {
    const at::NoGradGuard no_grad;
    inputs.q = (q.stride(3) == 1 ? q : q.contiguous()).detach();
    inputs.k = k.contiguous().detach();
    inputs.v = v.contiguous().detach();
    inputs.mask = key_mask.to(at::kBool).contiguous();
    out = run_fused(inputs, training ? &lse : nullptr);
  }
  if (!training) return out.transpose(1, 2);
  auto node = std::shared_ptr<FusedAttentionBackward>(new FusedAttentionBackward(inputs, out, lse),
                                                      torch::autograd::deleteNode);
  node->set_next_edges(torch::autograd::collect_next_edges(q, k, v));
  torch::autograd::set_history(out, node);
  return out.transpose(1, 2);
}

at::Tensor attention_probabilities(const at::Tensor& q, const at::Tensor& k,
                                   const at::Tensor& key_mask, int64_t half_window,
                                   const std::vector<std::vector<int64_t>>& rows, bool per_head,
                                   bool mean_over_rows, bool causal) {
  const int64_t B = q.size(0), heads = q.size(1), L = q.size(2), d = q.size(3);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  int64_t most = 0;
  for (const auto& r : rows) most = std::max<int64_t>(most, static_cast<int64_t>(r.size()));
  at::Tensor result =
      at::zeros({B, per_head ? heads : 1, mean_over_rows ? std::min<int64_t>(most, 1) : most, L},
                q.options().dtype(at::kFloat));
  const at::Tensor mask = key_mask.to(at::kBool);
  const at::Tensor positions = at::arange(L, q.options().dtype(at::kLong)).view({1, -1});
  // Rows in chunks, so that [heads, chunk, L] scores stay small even at 32k tokens.
  constexpr int64_t kChunk = 64;
  for (int64_t b = 0; b < B && b < static_cast<int64_t>(rows.size()); ++b) {
    const auto& wanted = rows[static_cast<size_t>(b)];
    const auto R = static_cast<int64_t>(wanted.size());
    for (int64_t c0 = 0; c0 < R; c0 += kChunk) {
      const int64_t c1 = std::min(R, c0 + kChunk);
      const at::Tensor index =
          at::tensor(std::vector<int64_t>(wanted.begin() + c0, wanted.begin() + c1), at::kLong)
              .to(q.device());
      const at::Tensor qs = q.select(0, b).index_select(1, index);  // [heads, c, d]
      at::Tensor scores =
          at::matmul(qs, k.select(0, b).transpose(-1, -2)).to(at::kFloat).mul_(scale);
      at::Tensor allowed = mask.select(0, b).view({1, 1, L});
      if (half_window >= 0 || causal) {
        allowed = allowed.logical_and(
            band_allows(index.view({-1, 1}), positions, half_window, causal).unsqueeze(0));
      }
      scores.masked_fill_(allowed.logical_not(), -std::numeric_limits<float>::infinity());
      // A row that sees no key at all (softmax of only -inf is NaN) gets zeros.
      at::Tensor probs = at::softmax(scores, -1).nan_to_num_(0.0);  // [heads, c, L]
      if (!per_head) probs = probs.mean(0, /*keepdim=*/true);
      if (mean_over_rows) {
        result.select(0, b).select(1, 0).add_(probs.sum(1).div_(static_cast<double>(R)));
      } else {
        result.select(0, b).narrow(1, c0, c1 - c0).copy_(probs);
      }
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Unpadded batches.

std::optional<UnpaddedBatch> unpad_batch(const at::Tensor& key_mask) {
  const at::Tensor mask = key_mask.to(at::kCPU, at::kBool).contiguous();
  UnpaddedBatch b;
  b.batch = mask.size(0);
  b.length = mask.size(1);
  const bool* m = mask.data_ptr<bool>();
  std::vector<int64_t> indices, positions;
  std::vector<int32_t> starts{0};
  for (int64_t row = 0; row < b.batch; ++row) {
    int64_t n = 0;
    while (n < b.length && m[row * b.length + n]) ++n;
    for (int64_t i = n; i < b.length; ++i)
      if (m[row * b.length + i]) return std::nullopt;  // a valid token after padding
    for (int64_t i = 0; i < n; ++i) {
      indices.push_back(row * b.length + i);
      positions.push_back(i);
    }
    b.lengths.push_back(n);
    b.max_length = std::max(b.max_length, n);
    starts.push_back(static_cast<int32_t>(indices.size()));
  }
  b.total = static_cast<int64_t>(indices.size());
  const auto device = key_mask.device();
  b.indices = at::tensor(indices, at::kLong).to(device);
  b.positions = at::tensor(positions, at::kLong).to(device);
  b.cu_seqlens = at::tensor(starts, at::kInt).to(device);
  return b;
}

at::Tensor unpad(const at::Tensor& x, const UnpaddedBatch& batch) {
  auto shape = x.sizes().vec();
  shape.erase(shape.begin());
  shape[0] = batch.batch * batch.length;
  return x.reshape(shape).index_select(0, batch.indices);
}

at::Tensor repad(const at::Tensor& x, const UnpaddedBatch& batch) {
  auto shape = x.sizes().vec();
  shape[0] = batch.batch * batch.length;
  // index_copy is differentiable in its source: training backpropagates through it.
  at::Tensor out = at::zeros(shape, x.options()).index_copy(0, batch.indices, x);
  shape[0] = batch.length;
  shape.insert(shape.begin(), batch.batch);
  return out.view(shape);
}

at::Tensor apply_rope_unpadded(const at::Tensor& x, const RopeTables& tables,
                               const UnpaddedBatch& batch) {
  // Each token's row of the tables: [total, 1, d] against x [total, heads, d].
  const at::Tensor positions = batch.positions.to(tables.cos.device());
  return rotate(x, tables.cos.index_select(0, positions).unsqueeze(1),
                tables.sin.index_select(0, positions).unsqueeze(1));
}

VarlenRoute varlen_route(const at::Tensor& q) {
  const int64_t d = q.size(-1);
  const bool half = q.scalar_type() == at::kHalf || q.scalar_type() == at::kBFloat16;
  return q.is_cuda() && half && d % 8 == 0 && d <= 256 ? VarlenRoute::Flash : VarlenRoute::PerRow;
}

at::Tensor varlen_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const UnpaddedBatch& batch, int64_t half_window, int64_t block,
                            bool causal) {
  if (varlen_route(q) == VarlenRoute::Flash) {
    // FlashAttention-2 through LibTorch: [total, heads, d] with cumulative lengths; a window of
    // half_window keys on each side for a local layer (-1: unbounded), none after the query when
    // causal. Its autograd node runs FlashAttention's backward.
    const at::Tensor cu = batch.cu_seqlens.to(q.device(), at::kInt);
    const auto window = half_window >= 0 ? std::optional<int64_t>(half_window) : std::nullopt;
    const auto after = causal ? std::optional<int64_t>(0) : window;
    return std::get<0>(at::_flash_attention_forward(
        q.contiguous(), k.contiguous(), v.contiguous(), cu, cu, batch.max_length, batch.max_length,
        /*dropout_p=*/0.0, causal, /*return_debug_mask=*/false, /*scale=*/std::nullopt, window,
        after));
  }
  // Each row on its own: [1, heads, n, d] with every key valid.
  std::vector<at::Tensor> rows;
  rows.reserve(batch.lengths.size());
  int64_t start = 0;
  for (const int64_t n : batch.lengths) {
    if (n == 0) continue;
    auto heads_first = [&](const at::Tensor& t) {
      return t.narrow(0, start, n).transpose(0, 1).unsqueeze(0);
    };
    const at::Tensor all = at::ones({1, n}, q.options().dtype(at::kBool));
    rows.push_back(blockwise_attention(heads_first(q), heads_first(k), heads_first(v), all,
                                       half_window, block, causal)
                       .squeeze(0)
                       .transpose(0, 1));  // [n, heads, d]
    start += n;
  }
  if (rows.empty()) return at::empty_like(q);
  return at::cat(rows, 0);
}

}  // namespace lmk
