// ModernBERT: pre-norm layers (layer 0 reads the embedding norm), fused QKV, GLU feed-forward
// (act(first half) * second half), a final norm, and a dense + norm MLM head.
#include <ATen/ATen.h>

#include "engine/model/architecture.h"
#include "engine/model/layers.h"

namespace lmk {

namespace {

class ModernBert : public ArchitectureGraph {
 public:
  explicit ModernBert(const WeightBuilder& w) : config_(w.config()) {
    const EncoderConfig& c = config_;
    const int64_t H = c.hidden_size, I = c.intermediate_size, V = c.vocab_size;
    tok_embeddings_ = w.tensor("embeddings.tok_embeddings.weight", {V, H}, w.std_in());
    embedding_norm_ = w.norm("embeddings.norm", c.norm_bias);
    for (int64_t i = 0; i < c.num_layers; ++i) {
      const std::string p = "layers." + std::to_string(i) + ".";
      Layer l;
      if (i > 0) l.attn_norm = w.norm(p + "attn_norm", c.norm_bias);
      l.wqkv = w.dense(p + "attn.Wqkv", 3 * H, H, w.std_in(), c.attention_bias);
      l.wo = w.dense(p + "attn.Wo", H, H, w.std_out(), c.attention_bias);
      l.mlp_norm = w.norm(p + "mlp_norm", c.norm_bias);
      l.wi = w.dense(p + "mlp.Wi", 2 * I, H, w.std_in(), c.mlp_bias);
      l.mlp_wo = w.dense(p + "mlp.Wo", H, I, w.std_out(), c.mlp_bias);
      layers_.push_back(std::move(l));
    }
    final_norm_ = w.norm("final_norm", c.norm_bias);
    head_ = MlmHead::declare(w, "head.dense", "head.norm", c.decoder_bias ? "decoder.bias" : "",
                             c.classifier_bias, c.norm_bias, tok_embeddings_);
  }

  at::Tensor embed(const at::Tensor& ids) const override {
    return embedding_norm_(at::embedding(tok_embeddings_, ids));
  }

  at::Tensor layer(int64_t i, at::Tensor hidden, const Attend& attend) const override {
    const Layer& l = layers_[static_cast<size_t>(i)];
    // Pre-norm; layer 0 has no attn_norm (the embedding norm precedes it).
    hidden = hidden + attention(l, i == 0 ? hidden : l.attn_norm(hidden), i, attend);
    return hidden + l.mlp_wo(gated_linear_unit(l.wi(l.mlp_norm(hidden)), config_.activation,
                                               GluOrder::ActivateFirst));
  }

  at::Tensor finish(const at::Tensor& hidden) const override { return final_norm_(hidden); }

  at::Tensor mlm_logits(const at::Tensor& hidden) const override {
    return head_(hidden, config_.classifier_activation);
  }

 private:
  struct Layer {
    Norm attn_norm, mlp_norm;
    Linear wqkv, wo, wi, mlp_wo;
  };
  // The attention block's output projection; Q, K and V end with it.
  at::Tensor attention(const Layer& l, const at::Tensor& x, int64_t i, const Attend& attend) const {
    const auto qkv = l.wqkv(x).chunk(3, -1);  // Wqkv rows are Q, K, V
    return l.wo(attend(qkv[0], qkv[1], qkv[2], i));
  }
  const EncoderConfig& config_;
  at::Tensor tok_embeddings_;
  Norm embedding_norm_, final_norm_;
  MlmHead head_;
  std::vector<Layer> layers_;
};

}  // namespace

std::unique_ptr<ArchitectureGraph> build_modern_bert(const WeightBuilder& w) {
  return std::make_unique<ModernBert>(w);
}

}  // namespace lmk
