#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lmk {

// A piece of text on its way through normalization and pre-tokenization that remembers,
// for every byte, which byte of the original input it came from -- so tokens can be placed
// back onto the original text (sentence landmarks, evidence positions).
struct NormalizedString {
  std::string text;
  std::vector<uint32_t> origin;  // per byte of text: original offset of its source character
  uint32_t original_begin = 0;   // the original span this piece covers
  uint32_t original_end = 0;

  // Wraps original text that starts at byte `offset` of the input.
  static NormalizedString from_original(std::string_view text, uint32_t offset);

  bool empty() const { return text.empty(); }
  // Returns bytes [begin, end) of the normalized text with their origins.
  NormalizedString slice(size_t begin, size_t end) const;
  // Original byte span of normalized bytes [begin, end).
  std::pair<uint32_t, uint32_t> original_span(size_t begin, size_t end) const;
  // Puts `prefix` in front; its bytes point at the first original byte.
  void prepend(std::string_view prefix);
};

// Rebuilds s character by character: map(cp, out) appends the replacement of each code point
// (nothing to drop it); every appended byte keeps the origin of the character it replaced.
template <typename Map>
void transform_chars(NormalizedString& s, Map&& map);

}  // namespace lmk

#include "core/tokenize/normalized_string_inl.h"
