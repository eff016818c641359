#include "core/eval/attention_profile.h"

#include <ATen/ATen.h>

#include "core/util/error.h"

namespace lmk {

std::vector<double> AttentionProfile::binned(int bins) const {
  if (bins <= 0) throw input_error("--bins", "must be > 0");
  std::vector<double> out(static_cast<size_t>(bins), 0.0);
  for (int64_t p = 0; p < length; ++p)
    out[static_cast<size_t>(p * bins / length)] += weights[static_cast<size_t>(p)];
  return out;
}

std::vector<AttentionProfile> attention_profiles(const LoadedModel& model,
                                                 const Tokenizer& tokenizer,
                                                 const std::vector<std::string>& texts,
                                                 const EncodeOptions& options) {
  LandmarkOptions landmark_options;
  landmark_options.spec = landmark_spec_for(options.pooling, options.granularity, model.pooling);
  landmark_options.max_length = options.max_length;
  const LandmarkTokenizer landmarks(tokenizer, landmark_options);
  const bool pooled_positions =
      options.pooling == Pooling::Landmark || options.pooling == Pooling::MultiCls;
  at::NoGradGuard no_grad;
  std::vector<AttentionProfile> profiles;
  for (size_t i = 0; i < texts.size(); ++i) {
    const TokenizedText t = landmarks.tokenize(texts[i], i);
    const auto L = static_cast<int64_t>(t.ids.size());
    AttentionCapture capture;
    std::vector<int64_t> queries;
    if (pooled_positions) {
      for (int32_t p : t.pool_positions) queries.push_back(p);
    }
    if (queries.empty()) queries.push_back(0);
    capture.query_positions = {queries};
    const at::Tensor ids =
        at::tensor(std::vector<int64_t>(t.ids.begin(), t.ids.end()), at::kLong).view({1, L});
    model.encoder->forward(ids, at::ones({1, L}, at::kLong), &capture);
    // [1, heads, Q, L] -> mean over heads and queries -> [L]
    const at::Tensor mean = capture.weights.mean({0, 1, 2}).to(at::kDouble).contiguous();
    AttentionProfile profile;
    profile.length = L;
    profile.weights.assign(mean.data_ptr<double>(), mean.data_ptr<double>() + L);
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

}  // namespace lmk
