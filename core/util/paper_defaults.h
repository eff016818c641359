#pragma once

// The paper's settings (arXiv 2601.21525), each defined here once and used everywhere a default
// needs one: the landmark layout a model is trained with (variable granularity drawn per text
// from {32, 64, 128, 256}) and the one it is evaluated with (fixed 32), which is also the
// granularity of the poolings that take one when given none (multicls, mean_every_k).

#include <array>
#include <string>

namespace lmk::paper {

inline constexpr int kGranularity = 32;
inline constexpr std::array<int, 4> kTrainGranularities = {32, 64, 128, 256};
// A sentence layout's cap on the tokens between two landmarks when given none.
inline constexpr int kSentenceGranularity = 64;

// "32,64,128,256".
inline std::string train_granularities_text() {
  std::string text;
  for (int g : kTrainGranularities) text += (text.empty() ? "" : ",") + std::to_string(g);
  return text;
}
// The landmark specs as LandmarkSpec::parse reads them: "variable:32,64,128,256", "fixed:32".
inline std::string train_landmarks_text() {
  return "variable:" + train_granularities_text();
}
inline std::string eval_landmarks_text() {
  return "fixed:" + std::to_string(kGranularity);
}

}  // namespace lmk::paper
