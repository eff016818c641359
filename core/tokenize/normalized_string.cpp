#include "core/tokenize/normalized_string.h"

#include <numeric>
#include <tuple>

namespace lmk {

NormalizedString NormalizedString::from_original(std::string_view text, uint32_t offset) {
  NormalizedString s;
  s.text.assign(text);
  s.origin.resize(text.size());
  std::iota(s.origin.begin(), s.origin.end(), offset);
  s.original_begin = offset;
  s.original_end = offset + static_cast<uint32_t>(text.size());
  return s;
}

NormalizedString NormalizedString::slice(size_t begin, size_t end) const {
  NormalizedString s;
  s.text.assign(text, begin, end - begin);
  s.origin.assign(origin.begin() + begin, origin.begin() + end);
  std::tie(s.original_begin, s.original_end) = original_span(begin, end);
  return s;
}

std::pair<uint32_t, uint32_t> NormalizedString::original_span(size_t begin, size_t end) const {
  const uint32_t first = begin < origin.size() ? origin[begin] : original_end;
  uint32_t last = end < origin.size() ? origin[end] : original_end;
  if (last < first) last = first;
  // Bytes that expanded from one source character (a decomposition, a replacement) share
  // its origin; a span inside such a group still covers that character.
  if (last == first && end > begin && first < original_end) {
    size_t next = end;
    while (next < origin.size() && origin[next] == first) ++next;
    last = next < origin.size() ? origin[next] : original_end;
  }
  return {first, last};
}

void NormalizedString::prepend(std::string_view prefix) {
  text.insert(0, prefix);
  origin.insert(origin.begin(), prefix.size(), original_begin);
}

}  // namespace lmk
