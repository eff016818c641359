#include "core/model/encoder.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/model/attention_kernel.h"

namespace lmk {

namespace {

std::string layer_name(const char* prefix, int64_t layer, const char* rest) {
  return std::string(prefix) + std::to_string(layer) + "." + rest;
}

// Whether autograd needs x's history (training): then only differentiable tensor ops run.
bool wants_grad(const at::Tensor& x) {
  return at::GradMode::is_enabled() && x.requires_grad();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parameters: names and shapes per architecture.

void Encoder::add_weight(const std::string& name, std::vector<int64_t> shape, double init_std,
                         bool head) {
  std::string registered = name;
  std::replace(registered.begin(), registered.end(), '.', '_');
  weights_[name] = register_parameter(registered, at::empty(shape, at::kFloat));
  init_std_[name] = init_std;
  if (head) head_names_.push_back(name);
  // Otherwise a checkpoint fills it.
  if (initialize_) initialize_weight(name);
}

void Encoder::initialize_weight(const std::string& name) {
  at::NoGradGuard no_grad;
  at::Tensor& t = weights_.at(name);
  const double init_std = init_std_.at(name);
  if (init_std > 0) {
    // Truncated at ±2σ, as ModernBERT's initialization (cutoff factor 2).
    t.normal_(0.0, init_std).clamp_(-2 * init_std, 2 * init_std);
  } else if (init_std == 0) {
    t.zero_();
  } else {
    t.fill_(1.0);  // norm weights
  }
}

Encoder::Encoder(EncoderConfig config, uint64_t seed, bool initialize)
    : initialize_(initialize), config_(std::move(config)) {
  config_.validate("encoder config");
  at::manual_seed(seed);
  const int64_t H = config_.hidden_size, I = config_.intermediate_size, V = config_.vocab_size;
  const double std_in = 0.02,
               std_out = 0.02 / std::sqrt(2.0 * static_cast<double>(config_.num_layers));
  constexpr double kOnes = -1, kZeros = 0;
  // A LayerNorm (weight, and bias when the architecture has one).
  auto norm = [&](const std::string& prefix, bool bias, bool head = false) {
    add_weight(prefix + ".weight", {H}, kOnes, head);
    if (bias) add_weight(prefix + ".bias", {H}, kZeros, head);
  };
  // BERT and GTE: word (+ absolute position for BERT) (+ token type) embeddings, LayerNorm.
  auto bert_style_embeddings = [&] {
    add_weight("embeddings.word_embeddings.weight", {V, H}, std_in, false);
    if (!config_.uses_rope()) {
      add_weight("embeddings.position_embeddings.weight", {config_.max_position_embeddings, H},
                 std_in, false);
    }
    if (config_.type_vocab_size > 0) {
      add_weight("embeddings.token_type_embeddings.weight", {config_.type_vocab_size, H}, std_in,
                 false);
    }
    norm("embeddings.LayerNorm", true);
  };
  auto dense = [&](const std::string& prefix, int64_t out, int64_t in, double std, bool bias,
                   bool head = false) {
    add_weight(prefix + ".weight", {out, in}, std, head);
    if (bias) add_weight(prefix + ".bias", {out}, kZeros, head);
  };
  switch (config_.architecture) {
    case Architecture::ModernBert:
      add_weight("embeddings.tok_embeddings.weight", {V, H}, std_in, false);
      norm("embeddings.norm", config_.norm_bias);
      for (int64_t i = 0; i < config_.num_layers; ++i) {
        const std::string p = "layers." + std::to_string(i) + ".";
        if (i > 0) norm(p + "attn_norm", config_.norm_bias);  // layer 0 reads the embedding norm
        dense(p + "attn.Wqkv", 3 * H, H, std_in, config_.attention_bias);
        dense(p + "attn.Wo", H, H, std_out, config_.attention_bias);
        norm(p + "mlp_norm", config_.norm_bias);
        dense(p + "mlp.Wi", 2 * I, H, std_in, config_.mlp_bias);
        dense(p + "mlp.Wo", H, I, std_out, config_.mlp_bias);
      }
      norm("final_norm", config_.norm_bias);
      dense("head.dense", H, H, std_out, config_.classifier_bias, true);
      norm("head.norm", config_.norm_bias, true);
      if (config_.decoder_bias) add_weight("decoder.bias", {V}, kZeros, true);
      break;
    case Architecture::Bert:
      bert_style_embeddings();
      for (int64_t i = 0; i < config_.num_layers; ++i) {
        const std::string p = "encoder.layer." + std::to_string(i) + ".";
        dense(p + "attention.self.query", H, H, std_in, true);
        dense(p + "attention.self.key", H, H, std_in, true);
        dense(p + "attention.self.value", H, H, std_in, true);
        dense(p + "attention.output.dense", H, H, std_out, true);
        norm(p + "attention.output.LayerNorm", true);
        dense(p + "intermediate.dense", I, H, std_in, true);
        dense(p + "output.dense", H, I, std_out, true);
        norm(p + "output.LayerNorm", true);
      }
      dense("cls.predictions.transform.dense", H, H, std_out, true, true);
      norm("cls.predictions.transform.LayerNorm", true, true);
      add_weight("cls.predictions.bias", {V}, kZeros, true);
      break;
    case Architecture::Gte:
      bert_style_embeddings();
      for (int64_t i = 0; i < config_.num_layers; ++i) {
        const std::string p = "encoder.layer." + std::to_string(i) + ".";
        if (config_.pack_qkv) {
          dense(p + "attention.qkv_proj", 3 * H, H, std_in, true);
        } else {
          for (const char* n : {"q_proj", "k_proj", "v_proj"})
            dense(p + "attention." + n, H, H, std_in, true);
        }
        dense(p + "attention.o_proj", H, H, std_out, true);
        norm(p + "attn_ln", true);
        dense(p + "mlp.up_gate_proj", 2 * I, H, std_in, false);
        dense(p + "mlp.down_proj", H, I, std_out, true);
        norm(p + "mlp_ln", true);
      }
      dense("lm_head.dense", H, H, std_out, true, true);
      norm("lm_head.norm", true, true);
      add_weight("lm_head.decoder.bias", {V}, kZeros, true);
      break;
  }
}

bool Encoder::is_head_weight(const std::string& name) const {
  return std::find(head_names_.begin(), head_names_.end(), name) != head_names_.end();
}

// ---------------------------------------------------------------------------------------------
// Building blocks.

at::Tensor Encoder::layer_norm(const at::Tensor& x, const std::string& prefix) {
  const std::string bias = prefix + ".bias";
  return at::layer_norm(x, {config_.hidden_size}, w(prefix + ".weight"),
                        has(bias) ? w(bias) : at::Tensor(), config_.norm_eps);
}

at::Tensor Encoder::linear(const at::Tensor& x, const std::string& prefix) {
  const std::string bias = prefix + ".bias";
  return at::linear(x, w(prefix + ".weight"), has(bias) ? w(bias) : at::Tensor());
}

at::Tensor apply_activation(const at::Tensor& x, const std::string& activation) {
  if (activation == "gelu") return at::gelu(x);
  if (activation == "gelu_new" || activation == "gelu_pytorch_tanh") return at::gelu(x, "tanh");
  if (activation == "silu") return at::silu(x);
  return at::relu(x);
}

at::Tensor gated_linear_unit(const at::Tensor& projected, const std::string& activation,
                             GluOrder order) {
  const auto halves = projected.chunk(2, -1);
  const at::Tensor& gate = order == GluOrder::ActivateFirst ? halves[0] : halves[1];
  const at::Tensor& up = order == GluOrder::ActivateFirst ? halves[1] : halves[0];
  // In place saves a pass when no gradient is wanted (relu's backward would need its output).
  if (!wants_grad(projected)) {
    return apply_activation(gate, activation).mul_(up);
  }
  return apply_activation(gate, activation) * up;
}

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

}  // namespace

at::Tensor apply_rope(const at::Tensor& x, const RopeTables& tables) {
  const int64_t d = x.size(3);
  if (x.device().is_cpu() && x.scalar_type() == at::kFloat && d % 2 == 0 && !wants_grad(x) &&
      tables.cos.scalar_type() == at::kFloat) {
    return apply_rope_cpu(x, tables);
  }
  const at::Tensor rotated =
      at::cat({x.narrow(-1, d / 2, d / 2).neg(), x.narrow(-1, 0, d / 2)}, -1);
  return x * tables.cos.to(x.device(), x.scalar_type()) +
         rotated * tables.sin.to(x.device(), x.scalar_type());
}

at::Tensor apply_rope(const at::Tensor& x, double theta) {
  return apply_rope(x, rope_tables(x.size(2), x.size(3), theta));
}

namespace {

// The tiled tensor-op formulation, for devices and dtypes the fused CPU kernel does not take
// (CUDA, bf16): blocks of queries against all keys (or the band), softmax, product.
at::Tensor blocked_attention_ops(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                 const at::Tensor& key_mask, int64_t half_window, int64_t block) {
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
    // Keys a query in [start, end) may see: all, or the band around the block.
    const int64_t key_start = half_window >= 0 ? std::max<int64_t>(0, start - half_window) : 0;
    const int64_t key_end = half_window >= 0 ? std::min(L, end + half_window) : L;
    const at::Tensor qb = q.narrow(2, start, end - start);
    const at::Tensor kb = k.narrow(2, key_start, key_end - key_start);
    const at::Tensor vb = v.narrow(2, key_start, key_end - key_start);
    at::Tensor scores = at::matmul(qb, kb.transpose(-1, -2)).mul_(scale);  // [B, heads, bq, bk]
    at::Tensor allowed = keys_allowed.narrow(3, key_start, key_end - key_start);
    if (half_window >= 0) {
      const at::Tensor qi = at::arange(start, end, q.options().dtype(at::kLong)).view({-1, 1});
      const at::Tensor kj =
          at::arange(key_start, key_end, q.options().dtype(at::kLong)).view({1, -1});
      allowed = allowed.logical_and(
          (qi - kj).abs().le(half_window).view({1, 1, end - start, key_end - key_start}));
    }
    // In place: autograd keeps only the mask for it (matmul saved its inputs, not its output).
    scores.masked_fill_(allowed.logical_not(), masked);
    out.narrow(2, start, end - start).copy_(at::matmul(at::softmax(scores, -1), vb));
  }
  return out;
}

HeadsView heads_view(const at::Tensor& t) {
  return {t.data_ptr<float>(), t.stride(0), t.stride(1), t.stride(2)};
}

}  // namespace

at::Tensor blockwise_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               const at::Tensor& key_mask, int64_t half_window, int64_t block) {
  // The fused kernel has no backward: training (gradients wanted) takes the tensor ops.
  const bool training = wants_grad(q) || wants_grad(k) || wants_grad(v);
  const bool fused = !training && q.device().is_cpu() && q.scalar_type() == at::kFloat &&
                     k.scalar_type() == at::kFloat && v.scalar_type() == at::kFloat;
  if (!fused) return blocked_attention_ops(q, k, v, key_mask, half_window, block);
  const int64_t B = q.size(0), heads = q.size(1), L = q.size(2), d = q.size(3);
  // Keys and values contiguous per head: every query tile streams all of them, and rows 3·H
  // floats apart (the fused qkv projection's layout) cost a TLB miss per row at 32k tokens.
  const at::Tensor qc = q.stride(3) == 1 ? q : q.contiguous(), kc = k.contiguous(),
                   vc = v.contiguous();
  const at::Tensor mask = key_mask.to(at::kBool).contiguous();
  // [B, L, heads, d] in memory, so that the caller's [B, L, H] view costs no copy.
  const at::Tensor out = at::empty({B, L, heads, d}, q.options()).transpose(1, 2);
  FusedAttentionProblem problem;
  problem.batch = B, problem.heads = heads, problem.length = L, problem.head_dim = d;
  problem.q = heads_view(qc), problem.k = heads_view(kc), problem.v = heads_view(vc);
  problem.out = heads_view(out);
  problem.key_mask = mask.data_ptr<bool>();
  problem.half_window = half_window;
  problem.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  if (block > 0) {
    fused_attention(problem, block, block);
  } else {
    fused_attention(problem);
  }
  return out;
}

at::Tensor attention_probabilities(const at::Tensor& q, const at::Tensor& k,
                                   const at::Tensor& key_mask, int64_t half_window,
                                   const std::vector<std::vector<int64_t>>& rows, bool per_head,
                                   bool mean_over_rows) {
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
      if (half_window >= 0) {
        allowed = allowed.logical_and(
            (index.view({-1, 1}) - positions).abs().le(half_window).unsqueeze(0));
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
// The forward pass.

at::Tensor Encoder::embed(const at::Tensor& ids) {
  // ids [B, L] -> [B, L, H]
  if (config_.architecture == Architecture::ModernBert) {
    return layer_norm(at::embedding(w("embeddings.tok_embeddings.weight"), ids), "embeddings.norm");
  }
  // BERT and GTE: token (+ absolute position) (+ token type 0) embeddings, then LayerNorm.
  at::Tensor x = at::embedding(w("embeddings.word_embeddings.weight"), ids);
  if (!config_.uses_rope()) {
    x = x + w("embeddings.position_embeddings.weight").narrow(0, 0, ids.size(1)).unsqueeze(0);
  }
  if (config_.type_vocab_size > 0) x = x + w("embeddings.token_type_embeddings.weight")[0];
  return layer_norm(x, "embeddings.LayerNorm");
}

at::Tensor Encoder::attention(const at::Tensor& x, const at::Tensor& key_mask, int64_t layer,
                              AttentionCapture* capture, std::map<double, RopeTables>& rope) {
  const int64_t B = x.size(0), L = x.size(1), H = config_.hidden_size, heads = config_.num_heads,
                d = config_.head_dim();
  at::Tensor q, k, v;  // [B, L, H] each
  switch (config_.architecture) {
    case Architecture::ModernBert: {
      // Wqkv rows are Q, K, V.
      const auto qkv = linear(x, layer_name("layers.", layer, "attn.Wqkv")).chunk(3, -1);
      q = qkv[0], k = qkv[1], v = qkv[2];
      break;
    }
    case Architecture::Bert:
      q = linear(x, layer_name("encoder.layer.", layer, "attention.self.query"));
      k = linear(x, layer_name("encoder.layer.", layer, "attention.self.key"));
      v = linear(x, layer_name("encoder.layer.", layer, "attention.self.value"));
      break;
    case Architecture::Gte:
      if (config_.pack_qkv) {
        const auto qkv =
            linear(x, layer_name("encoder.layer.", layer, "attention.qkv_proj")).chunk(3, -1);
        q = qkv[0], k = qkv[1], v = qkv[2];
      } else {
        q = linear(x, layer_name("encoder.layer.", layer, "attention.q_proj"));
        k = linear(x, layer_name("encoder.layer.", layer, "attention.k_proj"));
        v = linear(x, layer_name("encoder.layer.", layer, "attention.v_proj"));
      }
      break;
  }
  auto heads_first = [&](const at::Tensor& t) {
    return t.reshape({B, L, heads, d}).transpose(1, 2);
  };  // [B, heads, L, d]
  q = heads_first(q), k = heads_first(k), v = heads_first(v);
  if (config_.rotates()) {
    const double theta = config_.layer_rope_theta(layer);
    auto tables = rope.find(theta);
    if (tables == rope.end()) tables = rope.emplace(theta, rope_tables(L, d, theta)).first;
    q = apply_rope(q, tables->second);
    k = apply_rope(k, tables->second);
  }
  const int64_t half_window = config_.is_global_layer(layer) ? -1 : config_.half_window();
  if (capture && capture->wants_layer(layer, config_.num_layers)) {
    capture->weights[layer] =
        attention_probabilities(q, k, key_mask, half_window, capture->query_positions,
                                capture->per_head, capture->mean_over_queries);
  }
  at::Tensor context = blockwise_attention(q, k, v, key_mask, half_window, attention_block_);
  context = context.transpose(1, 2).reshape({B, L, H});  // [B, L, H]
  switch (config_.architecture) {
    case Architecture::ModernBert:
      return linear(context, layer_name("layers.", layer, "attn.Wo"));
    case Architecture::Bert:
      return linear(context, layer_name("encoder.layer.", layer, "attention.output.dense"));
    case Architecture::Gte:
      return linear(context, layer_name("encoder.layer.", layer, "attention.o_proj"));
  }
  return {};
}

at::Tensor Encoder::feed_forward(const at::Tensor& x, int64_t layer) {
  switch (config_.architecture) {
    case Architecture::ModernBert:
      return linear(gated_linear_unit(linear(x, layer_name("layers.", layer, "mlp.Wi")),
                                      config_.activation, GluOrder::ActivateFirst),
                    layer_name("layers.", layer, "mlp.Wo"));
    case Architecture::Gte:
      return linear(
          gated_linear_unit(linear(x, layer_name("encoder.layer.", layer, "mlp.up_gate_proj")),
                            config_.activation, GluOrder::ActivateSecond),
          layer_name("encoder.layer.", layer, "mlp.down_proj"));
    case Architecture::Bert:
      return linear(
          apply_activation(linear(x, layer_name("encoder.layer.", layer, "intermediate.dense")),
                           config_.activation),
          layer_name("encoder.layer.", layer, "output.dense"));
  }
  return {};
}

at::Tensor Encoder::forward(const at::Tensor& ids, const at::Tensor& mask,
                            AttentionCapture* capture) {
  TORCH_CHECK(ids.dim() == 2 && mask.sizes() == ids.sizes(), "ids and mask must be [B, L]");
  TORCH_CHECK(config_.uses_rope() || ids.size(1) <= config_.max_position_embeddings,
              "sequence longer than max_position_embeddings");
  const at::Tensor key_mask = mask.to(at::kBool);
  at::Tensor hidden = embed(ids);  // [B, L, H]
  std::map<double, RopeTables> rope;
  for (int64_t i = 0; i < config_.num_layers; ++i) {
    if (config_.architecture == Architecture::ModernBert) {
      // Pre-norm; layer 0 has no attn_norm (the embedding norm precedes it).
      const at::Tensor x =
          i == 0 ? hidden : layer_norm(hidden, layer_name("layers.", i, "attn_norm"));
      hidden = hidden + attention(x, key_mask, i, capture, rope);
      hidden = hidden + feed_forward(layer_norm(hidden, layer_name("layers.", i, "mlp_norm")), i);
    } else if (config_.architecture == Architecture::Bert) {
      // Post-norm.
      hidden = layer_norm(hidden + attention(hidden, key_mask, i, capture, rope),
                          layer_name("encoder.layer.", i, "attention.output.LayerNorm"));
      hidden = layer_norm(hidden + feed_forward(hidden, i),
                          layer_name("encoder.layer.", i, "output.LayerNorm"));
    } else {
      hidden = layer_norm(hidden + attention(hidden, key_mask, i, capture, rope),
                          layer_name("encoder.layer.", i, "attn_ln"));
      hidden =
          layer_norm(hidden + feed_forward(hidden, i), layer_name("encoder.layer.", i, "mlp_ln"));
    }
  }
  if (config_.architecture == Architecture::ModernBert) hidden = layer_norm(hidden, "final_norm");
  return hidden;
}

at::Tensor Encoder::mlm_logits(const at::Tensor& hidden) {
  switch (config_.architecture) {
    case Architecture::ModernBert: {
      const at::Tensor h =
          layer_norm(apply_activation(linear(hidden, "head.dense"), config_.classifier_activation),
                     "head.norm");
      return at::linear(h, w("embeddings.tok_embeddings.weight"),
                        has("decoder.bias") ? w("decoder.bias") : at::Tensor());
    }
    case Architecture::Bert: {
      const at::Tensor h = layer_norm(
          apply_activation(linear(hidden, "cls.predictions.transform.dense"), config_.activation),
          "cls.predictions.transform.LayerNorm");
      return at::linear(h, w("embeddings.word_embeddings.weight"), w("cls.predictions.bias"));
    }
    case Architecture::Gte: {
      const at::Tensor h = layer_norm(
          apply_activation(linear(hidden, "lm_head.dense"), config_.activation), "lm_head.norm");
      return at::linear(h, w("embeddings.word_embeddings.weight"), w("lm_head.decoder.bias"));
    }
  }
  return {};
}

}  // namespace lmk
