#pragma once

// Where the pooling tokens look: the final-layer attention from the pooling positions (the CLS,
// or every landmark) to every position, averaged over heads and pooling tokens — the paper's
// Figure 1, computed without forming the attention matrix.

#include <string>
#include <vector>

#include "engine/embed/embed.h"

namespace lmk {

struct AttentionProfile {
  size_t document = 0;          // index into the texts
  int64_t layer = 0;            // encoder layer (0-based)
  int64_t head = -1;            // attention head, or -1 for the mean over heads
  int64_t length = 0;           // model input length (tokens, special ones included)
  std::vector<double> weights;  // per position, sums to 1
  // Sums the weights into `bins` equal spans of positions; bin b covers
  // [b * length / bins, (b + 1) * length / bins).
  std::vector<double> binned(int bins) const;
};

// InputError naming --layers when a layer is not one of the model's 0..num_layers-1.
void require_layers(const std::vector<int64_t>& layers, int64_t num_layers);

struct AttentionProfileOptions {
  bool per_head = false;        // one profile per head, besides none for the mean
  std::vector<int64_t> layers;  // empty: the final layer only
};

// The profiles of each text (document order, then layer, then head): queries are position 0
// for cls / mean / last / mean_every_k, the landmark positions for lmk, the CLS positions for
// multicls; averaged over the queries. One document at a time.
// `plan`: the command's plan of `options` over the model (plan_pooling), passed down.
std::vector<AttentionProfile> attention_profiles(const LoadedModel& model,
                                                 const Tokenizer& tokenizer,
                                                 const std::vector<std::string>& texts,
                                                 const EncodeOptions& options,
                                                 const PoolingPlan& plan,
                                                 const AttentionProfileOptions& profile_options);
// The same with plan_pooling(options, model).
std::vector<AttentionProfile> attention_profiles(
    const LoadedModel& model, const Tokenizer& tokenizer, const std::vector<std::string>& texts,
    const EncodeOptions& options, const AttentionProfileOptions& profile_options = {});

}  // namespace lmk
