#include "engine/eval/attention_profile.h"

#include <ATen/ATen.h>

#include "core/util/error.h"

namespace lmk {

std::vector<double> AttentionProfile::binned(int bins) const {
  if (bins <= 0) throw FieldError("bins", "must be > 0");
  std::vector<double> out(static_cast<size_t>(bins), 0.0);
  for (int64_t p = 0; p < length; ++p)
    out[static_cast<size_t>(p * bins / length)] += weights[static_cast<size_t>(p)];
  return out;
}

void require_layers(const std::vector<int64_t>& layers, int64_t num_layers) {
  for (int64_t layer : layers)
    if (layer < 0 || layer >= num_layers)
      throw FieldError("layers", "layer " + std::to_string(layer) +
                                     " out of range (the model has " + std::to_string(num_layers) +
                                     " layers, 0.." + std::to_string(num_layers - 1) + ")");
}

std::vector<AttentionProfile> attention_profiles(const LoadedModel& model,
                                                 const Tokenizer& tokenizer,
                                                 const std::vector<std::string>& texts,
                                                 const EncodeOptions& options,
                                                 const AttentionProfileOptions& profile_options) {
  return attention_profiles(model, tokenizer, texts, options, plan_pooling(options, model),
                            profile_options);
}

std::vector<AttentionProfile> attention_profiles(const LoadedModel& model,
                                                 const Tokenizer& tokenizer,
                                                 const std::vector<std::string>& texts,
                                                 const EncodeOptions& options,
                                                 const PoolingPlan& plan,
                                                 const AttentionProfileOptions& profile_options) {
  require_layers(profile_options.layers, model.encoder->config().num_layers);
  const LandmarkTokenizer landmarks =
      input_tokenizer(tokenizer, plan, options, model.encoder->config());
  const c10::Device device = parse_device(options.device, "device");
  model.encoder->to(device);
  at::NoGradGuard no_grad;
  std::vector<AttentionProfile> profiles;
  for (size_t i = 0; i < texts.size(); ++i) {
    const TokenizedText t = landmarks.tokenize(texts[i], i);
    const auto L = static_cast<int64_t>(t.ids.size());
    AttentionCapture capture;
    capture.query_positions = {plan.query_positions(t)};
    capture.per_head = profile_options.per_head;
    capture.mean_over_queries = true;
    capture.layers = profile_options.layers;
    const at::Tensor ids =
        at::tensor(std::vector<int64_t>(t.ids.begin(), t.ids.end()), at::kLong).view({1, L});
    model.encoder->forward(ids.to(device), at::ones({1, L}, at::kLong).to(device), &capture);
    for (const auto& [layer, weights] : capture.weights) {
      // [1, heads or 1, 1, L]: the mean over heads first, then each head.
      const at::Tensor per_head =
          weights.select(0, 0).select(1, 0).to(at::kCPU, at::kDouble);  // [h, L]
      std::vector<std::pair<int64_t, at::Tensor>> rows = {{-1, per_head.mean(0)}};
      if (profile_options.per_head) {
        for (int64_t h = 0; h < per_head.size(0); ++h) rows.emplace_back(h, per_head[h]);
      }
      for (auto& [head, row] : rows) {
        const at::Tensor values = row.contiguous();
        AttentionProfile profile;
        profile.document = i;
        profile.layer = layer;
        profile.head = head;
        profile.length = L;
        profile.weights.assign(values.data_ptr<double>(), values.data_ptr<double>() + L);
        profiles.push_back(std::move(profile));
      }
    }
  }
  return profiles;
}

}  // namespace lmk
