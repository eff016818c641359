// The attention explorer's computation (engine/eval/attention_explorer.h).
#include "engine/eval/attention_explorer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/util/error.h"
#include "engine/eval/attention_profile.h"
#include "engine/pool/pooling.h"

namespace lmk {

namespace {

std::vector<float> to_floats(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kCPU, at::kFloat).contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

}  // namespace

DocumentAttention explore_attention(const LoadedModel& model, const Tokenizer& tokenizer,
                                    const std::string& text, const EncodeOptions& options,
                                    const ExplorerOptions& explorer) {
  if (text.empty()) throw input_error("document", "empty text");
  const EncoderConfig& config = model.encoder->config();
  const int64_t num_layers = config.num_layers;
  std::vector<int64_t> row_layers = explorer.row_layers;
  if (row_layers.empty()) row_layers = {num_layers - 1};
  require_layers(row_layers, num_layers);
  const PoolingPlan plan = plan_pooling(options, model);
  const TokenizedText t =
      input_tokenizer(tokenizer, plan, options, model.encoder->config()).tokenize(text);
  const auto L = static_cast<int64_t>(t.ids.size());

  DocumentAttention d;
  d.model = explorer.model_name;
  d.pooling = pooling_name(plan.pooling);
  d.granularity = plan.granularity;
  d.layers = num_layers;
  d.heads = config.num_heads;
  for (int64_t layer = 0; layer < num_layers; ++layer)
    d.global_layers.push_back(config.is_global_layer(layer));
  d.text = text;
  d.content_tokens = static_cast<int64_t>(tokenizer.encode(text).ids.size());
  int64_t kept = 0;
  for (int32_t offset : t.token_offsets) kept += offset >= 0;
  d.truncated = kept < d.content_tokens;
  for (int64_t i = 0; i < L; ++i) {
    d.tokens.push_back(tokenizer.id_to_token(t.ids[static_cast<size_t>(i)]));
    const TokenSpan& span = t.spans[static_cast<size_t>(i)];
    d.spans.emplace_back(span.begin, std::max(span.begin, span.end));
  }
  d.pooling_positions = plan.query_positions(t);

  // One forward: profiles of every layer and head, rows of the chosen layers.
  AttentionCapture capture;
  capture.query_positions = {d.pooling_positions};
  capture.per_head = true;
  capture.mean_over_queries = true;
  for (int64_t layer = 0; layer < num_layers; ++layer) capture.layers.push_back(layer);
  capture.row_layers = row_layers;
  if (explorer.on_layer) capture.on_layer = [&](int64_t layer) { explorer.on_layer(layer + 1); };
  const c10::Device device = parse_device(options.device, "device");
  model.encoder->to(device);
  at::NoGradGuard no_grad;
  const at::Tensor ids =
      at::tensor(std::vector<int64_t>(t.ids.begin(), t.ids.end()), at::kLong).view({1, L});
  const at::Tensor mask = at::ones({1, L}, at::kLong);
  const at::Tensor hidden =
      model.encoder->forward(ids.to(device), mask.to(device), &capture).to(at::kCPU, at::kFloat);
  d.profiles.reserve(static_cast<size_t>(num_layers * (1 + d.heads) * L));
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    const at::Tensor per_head = capture.weights.at(layer).select(0, 0).select(1, 0);  // [h, L]
    const std::vector<float> mean = to_floats(per_head.to(at::kDouble).mean(0));
    const std::vector<float> heads = to_floats(per_head);
    d.profiles.insert(d.profiles.end(), mean.begin(), mean.end());
    d.profiles.insert(d.profiles.end(), heads.begin(), heads.end());
  }
  for (const auto& [layer, rows] : capture.rows)
    d.rows[layer] = to_floats(rows.select(0, 0).select(0, 0));  // [P, L]

  d.pooled_similarity = std::numeric_limits<float>::quiet_NaN();
  if (!explorer.query.empty()) {
    d.query = explorer.query;
    const at::Tensor query = encode_texts(model, tokenizer, {explorer.query}, options, plan)[0];
    const at::Tensor q = query / query.norm().clamp_min(1e-12);
    const at::Tensor index = at::tensor(d.pooling_positions, at::kLong);
    const at::Tensor states = hidden.select(0, 0).index_select(0, index);  // [P, H]
    const at::Tensor unit = states / states.norm(2, 1, true).clamp_min(1e-12);
    d.query_similarity = to_floats(at::matmul(unit, q));
    std::vector<std::vector<int32_t>> positions = {t.pool_positions};
    at::Tensor pooled = pool(plan.pooling, hidden, mask, positions, plan.options)[0];
    pooled = pooled / pooled.norm().clamp_min(1e-12);
    d.pooled_similarity = at::dot(pooled, q).item<float>();
  }
  return d;
}

}  // namespace lmk
