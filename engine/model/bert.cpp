// BERT: absolute position embeddings, post-norm layers, separate Q / K / V projections, a GELU
// feed-forward, and the transform + LayerNorm MLM head with its own bias.
#include <ATen/ATen.h>

#include "engine/model/architecture.h"
#include "engine/model/layers.h"

namespace lmk {

namespace {

class Bert : public ArchitectureGraph {
 public:
  explicit Bert(const WeightBuilder& w) : config_(w.config()) {
    const EncoderConfig& c = config_;
    const int64_t H = c.hidden_size, I = c.intermediate_size;
    embeddings_ = BertEmbeddings::declare(w);
    for (int64_t i = 0; i < c.num_layers; ++i) {
      const std::string p = "encoder.layer." + std::to_string(i) + ".";
      Layer l;
      l.query = w.dense(p + "attention.self.query", H, H, w.std_in(), true);
      l.key = w.dense(p + "attention.self.key", H, H, w.std_in(), true);
      l.value = w.dense(p + "attention.self.value", H, H, w.std_in(), true);
      l.attention_out = w.dense(p + "attention.output.dense", H, H, w.std_out(), true);
      l.attention_norm = w.norm(p + "attention.output.LayerNorm", true);
      l.intermediate = w.dense(p + "intermediate.dense", I, H, w.std_in(), true);
      l.output = w.dense(p + "output.dense", H, I, w.std_out(), true);
      l.output_norm = w.norm(p + "output.LayerNorm", true);
      layers_.push_back(std::move(l));
    }
    head_ = MlmHead::declare(w, "cls.predictions.transform.dense",
                             "cls.predictions.transform.LayerNorm", "cls.predictions.bias", true,
                             true, embeddings_.word);
  }

  at::Tensor embed(const at::Tensor& ids) const override { return embeddings_(ids); }

  at::Tensor layer(int64_t i, at::Tensor hidden, const Attend& attend) const override {
    const Layer& l = layers_[static_cast<size_t>(i)];
    // Post-norm.
    hidden = l.attention_norm(
        hidden + l.attention_out(attend(l.query(hidden), l.key(hidden), l.value(hidden), i)));
    return l.output_norm(hidden +
                         l.output(apply_activation(l.intermediate(hidden), config_.activation)));
  }

  at::Tensor mlm_logits(const at::Tensor& hidden) const override {
    return head_(hidden, config_.activation);
  }

 private:
  struct Layer {
    Linear query, key, value, attention_out, intermediate, output;
    Norm attention_norm, output_norm;
  };
  const EncoderConfig& config_;
  BertEmbeddings embeddings_;
  std::vector<Layer> layers_;
  MlmHead head_;
};

}  // namespace

std::unique_ptr<ArchitectureGraph> build_bert(const WeightBuilder& w) {
  return std::make_unique<Bert>(w);
}

}  // namespace lmk
