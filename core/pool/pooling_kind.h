#pragma once

// The poolings by name, without LibTorch (study planning and tables read them too).

#include <string>

#include "core/util/paper_defaults.h"

namespace lmk {

enum class Pooling {
  Cls,         // hidden state of the first token
  Mean,        // masked mean over tokens
  Landmark,    // mean over the landmark positions; rows without one fall back to Mean
  MultiCls,    // mean over the CLS positions of a MultiCLS input
  Latent,      // NV-Embed latent attention, then masked mean (trained parameters)
  Last,        // hidden state of the last real token
  MeanEveryK,  // mean over every k-th position (1-based k, 2k, ...): landmarks without inserted
               // tokens
};

// cls | mean | lmk | multicls | latent | last | mean_every_k; an InputError naming `where` (the
// field by default; the option, file field or key the name came from when the caller knows it)
// otherwise.
Pooling parse_pooling(const std::string& name, const std::string& where = "pooling");
const char* pooling_name(Pooling pooling);

// The granularity a pooling that needs one (multicls, mean_every_k) uses when given none: the
// paper's evaluation granularity.
constexpr int kDefaultGranularity = paper::kGranularity;

// Whether the pooling's encoding depends on a granularity (lmk, multicls, mean_every_k): only
// these are evaluated per granularity and have it chosen on dev.
bool reads_granularity(Pooling pooling);

}  // namespace lmk
