#include "core/util/unicode.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <memory>

namespace lmk::unicode {

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

namespace {

// The WHATWG UTF-8 decoder. Calls emit(cp, begin) for every decoded code point and
// emit(0xFFFD, begin) for every maximal invalid subpart; returns false on the first error
// when stop_at_error is set.
template <typename Emit>
bool decode_whatwg(std::string_view s, bool stop_at_error, Emit&& emit) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      emit(b, i, i + 1);
      ++i;
      continue;
    }
    size_t needed = 0;
    unsigned lower = 0x80, upper = 0xBF;
    char32_t cp = 0;
    if (b >= 0xC2 && b <= 0xDF) {
      needed = 1;
      cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
      if (b == 0xE0) lower = 0xA0;
      if (b == 0xED) upper = 0x9F;
      needed = 2;
      cp = b & 0x0F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      if (b == 0xF0) lower = 0x90;
      if (b == 0xF4) upper = 0x8F;
      needed = 3;
      cp = b & 0x07;
    } else {
      if (stop_at_error) return false;
      emit(0xFFFD, i, i + 1);
      ++i;
      continue;
    }
    size_t j = i + 1;
    size_t seen = 0;
    while (seen < needed && j < s.size()) {
      const auto c = static_cast<unsigned char>(s[j]);
      if (c < lower || c > upper) break;
      lower = 0x80;
      upper = 0xBF;
      cp = (cp << 6) | (c & 0x3F);
      ++seen;
      ++j;
    }
    if (seen < needed) {
      // The lead byte and the valid continuation bytes seen so far form one maximal subpart;
      // the byte that broke the sequence is decoded afresh.
      if (stop_at_error) return false;
      emit(0xFFFD, i, j);
    } else {
      emit(cp, i, j);
    }
    i = j;
  }
  return true;
}

}  // namespace

size_t find_invalid_utf8(std::string_view s) {
  size_t valid_end = 0;
  bool ok = decode_whatwg(s, true, [&](char32_t, size_t, size_t end) { valid_end = end; });
  return ok ? std::string_view::npos : valid_end;
}

std::string replace_invalid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  decode_whatwg(s, false, [&](char32_t cp, size_t, size_t) { append_utf8(out, cp); });
  return out;
}

size_t skip_whitespace_forward(std::string_view s, size_t pos, size_t end) {
  while (pos < end) {
    size_t next = pos;
    if (!is_whitespace(next_code_point(s, next))) break;
    pos = next;
  }
  return pos;
}

size_t skip_whitespace_backward(std::string_view s, size_t pos, size_t floor) {
  while (pos > floor) {
    size_t start = previous_code_point_start(s, pos, floor);
    size_t next = start;
    if (!is_whitespace(next_code_point(s, next))) break;
    pos = start;
  }
  return pos;
}

bool is_whitespace(char32_t cp) {
  // The White_Space property (PropList.txt); it has not changed since Unicode 6.3.
  switch (cp) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

namespace {
utf8proc_category_t category(char32_t cp) {
  return static_cast<utf8proc_category_t>(utf8proc_category(static_cast<utf8proc_int32_t>(cp)));
}
}  // namespace

bool is_punctuation(char32_t cp) {
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

bool is_other(char32_t cp) {
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_CC && c <= UTF8PROC_CATEGORY_CO;
}

bool is_nonspacing_mark(char32_t cp) {
  return category(cp) == UTF8PROC_CATEGORY_MN;
}

bool is_mark(char32_t cp) {
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_MN && c <= UTF8PROC_CATEGORY_ME;
}

bool is_numeric(char32_t cp) {
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO;
}

bool is_letter(char32_t cp) {
  const auto c = category(cp);
  return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
}

bool is_alphanumeric(char32_t cp) {
  const auto c = category(cp);
  return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
         (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}

bool assigned_in_unicode_8(char32_t cp) {
  static const char32_t kRanges[][2] = {
#include "core/util/unicode_age_table.inc"
  };
  const auto* end = std::end(kRanges);
  const auto* it =
      std::upper_bound(std::begin(kRanges), end, cp,
                       [](char32_t value, const char32_t(&range)[2]) { return value < range[0]; });
  return it != std::begin(kRanges) && cp <= (it - 1)[0][1];
}

int combining_class(char32_t cp) {
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class;
}

void append_lowercase(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
    return;
  }
  // U+0130 is the one code point whose unconditional full lowercase mapping (SpecialCasing)
  // is longer than one code point; utf8proc_tolower gives simple mappings only.
  if (cp == 0x130) {
    out += "i\xCC\x87";
    return;
  }
  append_utf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
}

std::string normalize(std::string_view s, NormalForm form) {
  int options = UTF8PROC_STABLE;
  switch (form) {
    case NormalForm::NFC:
      options |= UTF8PROC_COMPOSE;
      break;
    case NormalForm::NFD:
      options |= UTF8PROC_DECOMPOSE;
      break;
    case NormalForm::NFKC:
      options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT;
      break;
    case NormalForm::NFKD:
      options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT;
      break;
  }
  utf8proc_uint8_t* result = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                              static_cast<utf8proc_ssize_t>(s.size()), &result,
                              static_cast<utf8proc_option_t>(options));
  if (n < 0) return std::string(s);  // only on invalid UTF-8, which callers exclude
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(result, &std::free);
  return std::string(reinterpret_cast<const char*>(result), static_cast<size_t>(n));
}

}  // namespace lmk::unicode
