#pragma once

// Where the pooling tokens look: the final-layer attention from the pooling positions (the CLS,
// or every landmark) to every position, averaged over heads and pooling tokens — the paper's
// Figure 1, computed without forming the attention matrix.

#include <string>
#include <vector>

#include "core/eval/encode.h"

namespace lmk {

struct AttentionProfile {
  int64_t length = 0;           // model input length (tokens, special ones included)
  std::vector<double> weights;  // per position, sums to 1
  // Sums the weights into `bins` equal spans of positions; bin b covers
  // [b * length / bins, (b + 1) * length / bins).
  std::vector<double> binned(int bins) const;
};

// The profile of each text: queries are position 0 for cls / mean / last / mean_every_k, the
// landmark positions for lmk, the CLS positions for multicls. One document at a time.
std::vector<AttentionProfile> attention_profiles(const LoadedModel& model,
                                                 const Tokenizer& tokenizer,
                                                 const std::vector<std::string>& texts,
                                                 const EncodeOptions& options);

}  // namespace lmk
