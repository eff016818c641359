#include "core/util/toml_guard.h"

#include <algorithm>
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

bool key_character(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
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
  enum class Bare { None, Key, Value };
  State state = State::Normal;
  // Outside strings: inside a bare key (letters, digits, _ and -, with "." before a quoted part)
  // or a bare value. toml++ reads a bare value up to whitespace , ] } or #, classifying every
  // character, quotes included: a quote there opens no string.
  Bare bare = Bare::None;
  bool value_side = false;  // after the "=" of this line (or of this inline table's pair)
  int braces = 0;           // inline tables open
  size_t line = 1;
  const auto starts = [&](size_t i, std::string_view s) { return text.substr(i, s.size()) == s; };
  const size_t start = starts(0, "\xEF\xBB\xBF") ? 3 : 0;  // toml++ skips a byte order mark
  for (size_t i = start; i < text.size(); ++i) {
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
      case State::Normal: {
        const bool quote = c == '"' || c == '\'';
        if (c == '\n') value_side = false;
        if (c == '\n' || horizontal_space(c)) {
          bare = Bare::None;
          break;
        }
        if (bare == Bare::Value) {
          if (c != ',' && c != ']' && c != '}' && c != '#') break;  // still the bare value
          bare = Bare::None;
        } else if (bare == Bare::Key) {
          if (key_character(c) || c == '.') break;
          bare = Bare::None;
          // Anything else ends the key; a quote only right after its ".": a quoted part.
          if (quote && text[i - 1] != '.') {
            bare = Bare::Value;
            break;
          }
        }
        if (c == '#') {
          state = State::Comment;
        } else if (starts(i, "\"\"\"") || starts(i, "'''")) {
          state = c == '"' ? State::MultiBasic : State::MultiLiteral;
          i += 2;
        } else if (quote) {
          state = c == '"' ? State::Basic : State::Literal;
        } else if (c == '=') {
          value_side = true;
        } else if (c == '{' || (c == ',' && braces > 0)) {
          braces += c == '{';
          value_side = false;  // an inline table's next key
        } else if (c == '}') {
          braces = std::max(0, braces - 1);
        } else if (c != '[' && c != ']' && c != '{' && c != '}' && c != ',' && c != '.') {
          bare = !value_side && key_character(c) ? Bare::Key : Bare::Value;
        }
        break;
      }
      case State::Comment:
        if (c == '\n') state = State::Normal;
        break;
      case State::Basic:
        if (c == '\\' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80) {
          return unsafe_at(text, i + 1, line, "after a backslash");  // not an escape either
        } else if (c == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
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
          // toml++ skips, classifying them, the spaces after a backslash, and after a
          // line-ending one the newlines and spaces that follow too.
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
          } else if (k < text.size() && static_cast<unsigned char>(text[k]) >= 0x80) {
            return unsafe_at(text, k, line, "after a backslash");  // not an escape either
          } else if (i + 1 < text.size()) {
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
