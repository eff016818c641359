#include "engine/model/architecture.h"

#include <ATen/ATen.h>

#include <cmath>

#include "engine/model/layers.h"
#include "engine/model/lora.h"

namespace lmk {

at::Tensor Linear::operator()(const at::Tensor& x) const {
  at::Tensor y = at::linear(x, weight, bias);
  if (lora && lora->attached()) y = y + lora->delta(x);
  return y;
}

at::Tensor Norm::operator()(const at::Tensor& x) const {
  return at::layer_norm(x, {size}, weight, bias, eps);
}

at::Tensor RmsNorm::operator()(const at::Tensor& x) const {
  const at::Tensor x32 = x.to(at::kFloat);
  const at::Tensor normed = x32 * at::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * normed.to(x.scalar_type());
}

WeightBuilder::WeightBuilder(const EncoderConfig& config, AddWeight add, AddLinear add_linear)
    : config_(config),
      add_(std::move(add)),
      add_linear_(std::move(add_linear)),
      std_in_(0.02),
      std_out_(0.02 / std::sqrt(2.0 * static_cast<double>(config.num_layers))) {}

Linear WeightBuilder::dense(const std::string& prefix, int64_t out, int64_t in, double init_std,
                            bool bias, bool head) const {
  Linear l;
  l.weight = add_(prefix + ".weight", {out, in}, init_std, head);
  if (bias) l.bias = add_(prefix + ".bias", {out}, kInitZeros, head);
  if (!head && add_linear_) {
    l.lora = std::make_shared<LoraAdapter>();
    add_linear_(prefix, l.lora);
  }
  return l;
}

Norm WeightBuilder::norm(const std::string& prefix, bool bias, bool head) const {
  Norm n;
  n.size = config_.hidden_size;
  n.eps = config_.norm_eps;
  n.weight = add_(prefix + ".weight", {config_.hidden_size}, kInitOnes, head);
  if (bias) n.bias = add_(prefix + ".bias", {config_.hidden_size}, kInitZeros, head);
  return n;
}

RmsNorm WeightBuilder::rms_norm(const std::string& prefix, int64_t size) const {
  RmsNorm n;
  n.eps = config_.norm_eps;
  n.weight = add_(prefix + ".weight", {size}, kInitOnes, false);
  return n;
}

BertEmbeddings BertEmbeddings::declare(const WeightBuilder& w) {
  const EncoderConfig& c = w.config();
  BertEmbeddings e;
  e.word = w.tensor("embeddings.word_embeddings.weight", {c.vocab_size, c.hidden_size}, w.std_in());
  if (!c.uses_rope()) {
    e.position = w.tensor("embeddings.position_embeddings.weight",
                          {c.max_position_embeddings, c.hidden_size}, w.std_in());
  }
  if (c.type_vocab_size > 0) {
    e.token_type = w.tensor("embeddings.token_type_embeddings.weight",
                            {c.type_vocab_size, c.hidden_size}, w.std_in());
  }
  e.norm = w.norm("embeddings.LayerNorm", true);
  return e;
}

at::Tensor BertEmbeddings::operator()(const at::Tensor& ids) const {
  // Token (+ absolute position) (+ token type 0) embeddings, then LayerNorm.
  at::Tensor x = at::embedding(word, ids);
  if (position.defined()) x = x + position.narrow(0, 0, ids.size(1)).unsqueeze(0);
  if (token_type.defined()) x = x + token_type[0];
  return norm(x);
}

MlmHead MlmHead::declare(const WeightBuilder& w, const std::string& dense_name,
                         const std::string& norm_name, const std::string& bias_name,
                         bool dense_bias, bool norm_bias, const at::Tensor& decoder) {
  const int64_t H = w.config().hidden_size;
  MlmHead head;
  head.dense = w.dense(dense_name, H, H, w.std_out(), dense_bias, true);
  head.norm = w.norm(norm_name, norm_bias, true);
  if (!bias_name.empty())
    head.decoder_bias = w.tensor(bias_name, {w.config().vocab_size}, kInitZeros, true);
  head.decoder = decoder;
  return head;
}

at::Tensor MlmHead::operator()(const at::Tensor& hidden, const std::string& activation) const {
  return at::linear(norm(apply_activation(dense(hidden), activation)), decoder, decoder_bias);
}

}  // namespace lmk
