#pragma once

#include "core/util/unicode.h"

namespace lmk {

template <typename Map>
void transform_chars(NormalizedString& s, Map&& map) {
  NormalizedString out;
  out.original_begin = s.original_begin;
  out.original_end = s.original_end;
  out.text.reserve(s.text.size() + 8);
  out.origin.reserve(s.text.size() + 8);
  size_t pos = 0;
  while (pos < s.text.size()) {
    const size_t begin = pos;
    const char32_t cp = unicode::next_code_point(s.text, pos);
    map(cp, out.text);
    out.origin.resize(out.text.size(), s.origin[begin]);
  }
  s = std::move(out);
}

}  // namespace lmk
