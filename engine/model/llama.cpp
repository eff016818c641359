// The decoder families Llama and Qwen3 (transformers' LlamaModel / Qwen3Model): token embeddings,
// pre-norm layers with RMSNorm, grouped-query attention with RoPE (Qwen3 first normalizes each
// head's queries and keys with an RMSNorm of the head size), a SwiGLU feed-forward
// (down(act(gate) * up)), a final RMSNorm, and the LM head (the token embeddings when tied, else
// lm_head.weight) as the model's token logits. Attention is causal unless the config says
// bidirectional (EncoderConfig::causal); the Encoder's attention core applies it.
#include <ATen/ATen.h>

#include "engine/model/architecture.h"
#include "engine/model/layers.h"

namespace lmk {

namespace {

class Llama : public ArchitectureGraph {
 public:
  explicit Llama(const WeightBuilder& w) : config_(w.config()) {
    const EncoderConfig& c = config_;
    const int64_t H = c.hidden_size, I = c.intermediate_size, V = c.vocab_size, d = c.head_dim();
    const int64_t q_width = c.num_heads * d, kv_width = c.kv_heads() * d;
    const bool qwen3 = c.architecture == Architecture::Qwen3;
    embed_tokens_ = w.tensor("embed_tokens.weight", {V, H}, w.std_in());
    for (int64_t i = 0; i < c.num_layers; ++i) {
      const std::string p = "layers." + std::to_string(i) + ".";
      Layer l;
      l.input_norm = w.rms_norm(p + "input_layernorm", H);
      l.q = w.dense(p + "self_attn.q_proj", q_width, H, w.std_in(), c.attention_bias);
      l.k = w.dense(p + "self_attn.k_proj", kv_width, H, w.std_in(), c.attention_bias);
      l.v = w.dense(p + "self_attn.v_proj", kv_width, H, w.std_in(), c.attention_bias);
      l.o = w.dense(p + "self_attn.o_proj", H, q_width, w.std_out(), c.attention_bias);
      if (qwen3) {
        l.q_norm = w.rms_norm(p + "self_attn.q_norm", d);
        l.k_norm = w.rms_norm(p + "self_attn.k_norm", d);
      }
      l.post_attention_norm = w.rms_norm(p + "post_attention_layernorm", H);
      l.gate = w.dense(p + "mlp.gate_proj", I, H, w.std_in(), c.mlp_bias);
      l.up = w.dense(p + "mlp.up_proj", I, H, w.std_in(), c.mlp_bias);
      l.down = w.dense(p + "mlp.down_proj", H, I, w.std_out(), c.mlp_bias);
      layers_.push_back(std::move(l));
    }
    norm_ = w.rms_norm("norm", H);
    lm_head_ = c.tie_word_embeddings ? embed_tokens_
                                     : w.tensor("lm_head.weight", {V, H}, w.std_in(), true);
  }

  at::Tensor embed(const at::Tensor& ids) const override {
    return at::embedding(embed_tokens_, ids);
  }

  at::Tensor layer(int64_t i, at::Tensor hidden, const Attend& attend) const override {
    const Layer& l = layers_[static_cast<size_t>(i)];
    {
      const at::Tensor x = l.input_norm(hidden);
      hidden =
          hidden + l.o(attend(per_head(l.q_norm, l.q(x)), per_head(l.k_norm, l.k(x)), l.v(x), i));
    }
    const at::Tensor x = l.post_attention_norm(hidden);
    return hidden + l.down(apply_activation(l.gate(x), config_.activation) * l.up(x));
  }

  at::Tensor finish(const at::Tensor& hidden) const override { return norm_(hidden); }

  // The LM head's logits (no bias): what pretraining a decoder here trains.
  at::Tensor mlm_logits(const at::Tensor& hidden) const override {
    return at::linear(hidden, lm_head_);
  }

 private:
  struct Layer {
    RmsNorm input_norm, post_attention_norm, q_norm, k_norm;
    Linear q, k, v, o, gate, up, down;
  };
  // Qwen3's per-head RMSNorm of x [B, L, n · d] (none when the norm is undefined).
  at::Tensor per_head(const RmsNorm& norm, const at::Tensor& x) const {
    if (!norm.weight.defined()) return x;
    const int64_t d = config_.head_dim();
    auto shape = x.sizes().vec();
    shape.back() /= d;
    shape.push_back(d);
    return norm(x.view(shape)).flatten(-2);
  }
  const EncoderConfig& config_;
  at::Tensor embed_tokens_, lm_head_;
  std::vector<Layer> layers_;
  RmsNorm norm_;
};

}  // namespace

std::unique_ptr<ArchitectureGraph> build_llama(const WeightBuilder& w) {
  return std::make_unique<Llama>(w);
}

}  // namespace lmk
