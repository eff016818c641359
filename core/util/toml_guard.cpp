#include "core/util/toml_guard.h"

#include <cstdio>

namespace lmk {
namespace {

// The code point of the UTF-8 sequence at text[i] (the byte's value when it starts none).
unsigned code_point(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned lead = byte(i);
  const int extra = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 : 0;
  if (extra == 0 || i + extra >= text.size()) return lead;
  unsigned value = lead & (0x3Fu >> extra);
  for (int k = 1; k <= extra; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return lead;
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  return value;
}

std::string unsafe_at(std::string_view text, size_t i, size_t line, const char* where) {
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "line %zu: character U+%04X %s", line, code_point(text, i),
                where);
  return buffer;
}

// How many quotes close a multi-line string at text[i]: three, after up to two that still
// belong to the string.
size_t closing_run(std::string_view text, size_t i, char quote) {
  size_t n = 0;
  while (i + n < text.size() && text[i + n] == quote && n < 5) ++n;
  return n;
}

bool horizontal_space(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// Whether a quote at text[i] can open a string: after "=", "[", ",", "{" or "." (values, array
// items, quoted keys), or first on its line. Elsewhere toml++ reads it as part of a broken
// bare value, and may classify what follows.
bool string_may_start(std::string_view text, size_t i) {
  while (i > 0 && horizontal_space(text[i - 1])) --i;
  if (i == 0) return true;
  const char before = text[i - 1];
  return before == '\n' || before == '=' || before == '[' || before == ',' || before == '{' ||
         before == '.';
}

// The length of the valid UTF-8 sequence at text[i], 0 when there is none (TOML text is UTF-8;
// toml++ classifies what it decodes from a broken one).
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned lead = byte(i);
  if (lead < 0x80) return 1;
  const size_t length = lead >= 0xC2 && lead <= 0xDF   ? 2
                        : lead >= 0xE0 && lead <= 0xEF ? 3
                        : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                       : 0;
  if (length == 0 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  const unsigned value = code_point(text, i);
  const bool overlong = (length == 3 && value < 0x800) || (length == 4 && value < 0x10000);
  if (overlong || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 0;
  return length;
}

}  // namespace

std::string toml_unsafe_text(std::string_view text) {
  enum class State { Normal, Comment, Basic, Literal, MultiBasic, MultiLiteral };
  State state = State::Normal;
  size_t line = 1;
  const auto starts = [&](size_t i, std::string_view s) { return text.substr(i, s.size()) == s; };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (static_cast<unsigned char>(c) >= 0x80) {
      const size_t length = utf8_length(text, i);
      if (length == 0) {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "line %zu: not UTF-8 (byte 0x%02X)", line,
                      static_cast<unsigned char>(c));
        return buffer;
      }
      if (state == State::Normal) return unsafe_at(text, i, line, "outside a string or comment");
      i += length - 1;  // one character of a string or comment
      continue;
    }
    switch (state) {
      case State::Normal:
        if (c == '#') {
          state = State::Comment;
        } else if ((c == '"' || c == '\'') && !string_may_start(text, i)) {
          // Not a string: what follows stays under the rule for bare text.
        } else if (starts(i, "\"\"\"") || starts(i, "'''")) {
          state = c == '"' ? State::MultiBasic : State::MultiLiteral;
          i += 2;
        } else if (c == '"' || c == '\'') {
          state = c == '"' ? State::Basic : State::Literal;
        }
        break;
      case State::Comment:
        if (c == '\n') state = State::Normal;
        break;
      case State::Basic:
        if (c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
          ++i;  // an escaped character (a newline ends the string: not valid TOML)
        } else if (c == '"' || c == '\n') {
          state = State::Normal;
        }
        break;
      case State::Literal:
        if (c == '\'' || c == '\n') state = State::Normal;
        break;
      case State::MultiBasic:
        if (c == '\\') {
          // A line-ending backslash: toml++ skips the whitespace and newlines after it.
          size_t k = i + 1;
          while (k < text.size() && horizontal_space(text[k])) ++k;
          if (k < text.size() && text[k] == '\n') {
            while (k < text.size() && (horizontal_space(text[k]) || text[k] == '\n')) {
              if (text[k] == '\n') ++line;
              ++k;
            }
            if (k < text.size() && static_cast<unsigned char>(text[k]) >= 0x80)
              return unsafe_at(text, k, line, "after a line-ending backslash");
            i = k - 1;
          } else {
            ++i;  // an escaped character
          }
        } else if (starts(i, "\"\"\"")) {
          i += closing_run(text, i, '"') - 1;
          state = State::Normal;
        }
        break;
      case State::MultiLiteral:
        if (starts(i, "'''")) {
          i += closing_run(text, i, '\'') - 1;
          state = State::Normal;
        }
        break;
    }
  }
  return "";
}

}  // namespace lmk
