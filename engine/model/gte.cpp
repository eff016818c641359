// GTE: BERT-style embeddings without absolute positions (RoPE), post-norm layers, packed or
// separate Q / K / V, a GLU feed-forward (up * act(gate)), and the lm_head MLM head. Tensors
// are named as they are stored on disk in both layouts (GteLayout): the hub's remote code named
// them so, and transformers' own port converts to and from these names when it loads and saves.
#include <ATen/ATen.h>

#include "engine/model/architecture.h"
#include "engine/model/layers.h"

namespace lmk {

namespace {

class Gte : public ArchitectureGraph {
 public:
  explicit Gte(const WeightBuilder& w) : config_(w.config()) {
    const EncoderConfig& c = config_;
    const int64_t H = c.hidden_size, I = c.intermediate_size;
    embeddings_ = BertEmbeddings::declare(w);
    for (int64_t i = 0; i < c.num_layers; ++i) {
      const std::string p = "encoder.layer." + std::to_string(i) + ".";
      Layer l;
      if (c.pack_qkv) {
        l.qkv = w.dense(p + "attention.qkv_proj", 3 * H, H, w.std_in(), true);
      } else {
        l.q = w.dense(p + "attention.q_proj", H, H, w.std_in(), true);
        l.k = w.dense(p + "attention.k_proj", H, H, w.std_in(), true);
        l.v = w.dense(p + "attention.v_proj", H, H, w.std_in(), true);
      }
      l.o = w.dense(p + "attention.o_proj", H, H, w.std_out(), true);
      l.attn_ln = w.norm(p + "attn_ln", true);
      l.up_gate = w.dense(p + "mlp.up_gate_proj", 2 * I, H, w.std_in(), false);
      l.down = w.dense(p + "mlp.down_proj", H, I, w.std_out(), true);
      l.mlp_ln = w.norm(p + "mlp_ln", true);
      layers_.push_back(std::move(l));
    }
    head_ = MlmHead::declare(w, "lm_head.dense", "lm_head.norm", "lm_head.decoder.bias", true, true,
                             embeddings_.word);
    // transformers' port applies erf GELU in the head whatever hidden_act says; the remote
    // code applies hidden_act.
    head_activation_ = c.gte_layout == GteLayout::Transformers ? "gelu" : c.activation;
  }

  at::Tensor embed(const at::Tensor& ids) const override { return embeddings_(ids); }

  at::Tensor layer(int64_t i, at::Tensor hidden, const Attend& attend) const override {
    const Layer& l = layers_[static_cast<size_t>(i)];
    // Post-norm.
    hidden = l.attn_ln(hidden + attention(l, hidden, i, attend));
    return l.mlp_ln(hidden + l.down(gated_linear_unit(l.up_gate(hidden), config_.activation,
                                                      GluOrder::ActivateSecond)));
  }

  at::Tensor mlm_logits(const at::Tensor& hidden) const override {
    return head_(hidden, head_activation_);
  }

 private:
  struct Layer {
    Linear qkv, q, k, v, o, up_gate, down;
    Norm attn_ln, mlp_ln;
  };
  // The attention block's output projection; Q, K and V end with it.
  at::Tensor attention(const Layer& l, const at::Tensor& x, int64_t i, const Attend& attend) const {
    if (!config_.pack_qkv) return l.o(attend(l.q(x), l.k(x), l.v(x), i));
    const auto qkv = l.qkv(x).chunk(3, -1);
    return l.o(attend(qkv[0], qkv[1], qkv[2], i));
  }
  const EncoderConfig& config_;
  BertEmbeddings embeddings_;
  std::vector<Layer> layers_;
  MlmHead head_;
  std::string head_activation_;
};

}  // namespace

std::unique_ptr<ArchitectureGraph> build_gte(const WeightBuilder& w) {
  return std::make_unique<Gte>(w);
}

}  // namespace lmk
