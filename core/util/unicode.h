#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// UTF-8 decoding and the few Unicode character properties the tokenizers need. Properties
// come from utf8proc; nothing here re-derives Unicode tables by hand.
namespace lmk::unicode {

// Decodes the code point starting at s[pos] (s must be valid UTF-8) and advances pos past it.
inline char32_t next_code_point(std::string_view s, size_t& pos) {
  const auto b0 = static_cast<unsigned char>(s[pos]);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  const auto cont = [&](size_t i) { return static_cast<unsigned char>(s[pos + i]) & 0x3Fu; };
  char32_t cp;
  if (b0 < 0xE0) {
    cp = ((b0 & 0x1Fu) << 6) | cont(1);
    pos += 2;
  } else if (b0 < 0xF0) {
    cp = ((b0 & 0x0Fu) << 12) | (cont(1) << 6) | cont(2);
    pos += 3;
  } else {
    cp = ((b0 & 0x07u) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
    pos += 4;
  }
  return cp;
}

// Byte length of the UTF-8 sequence whose first byte is b (1 for invalid lead bytes).
inline size_t sequence_length(unsigned char b) {
  return b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

// Start of the code point that ends just before s[pos] (pos > floor), never below floor.
inline size_t previous_code_point_start(std::string_view s, size_t pos, size_t floor = 0) {
  size_t start = pos - 1;
  while (start > floor && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
  return start;
}

// Moves pos forward past whitespace code points, up to end; returns the new position.
size_t skip_whitespace_forward(std::string_view s, size_t pos, size_t end);
// Moves pos backward past whitespace code points, down to floor; returns the new position.
size_t skip_whitespace_backward(std::string_view s, size_t pos, size_t floor);

// Appends the UTF-8 encoding of cp to out.
void append_utf8(std::string& out, char32_t cp);

// Returns the byte offset of the first invalid UTF-8 sequence in s, or npos when s is valid.
size_t find_invalid_utf8(std::string_view s);

// Replaces every invalid UTF-8 sequence by U+FFFD the way the WHATWG Encoding Standard's
// decoder does (maximal subparts) -- what Node.js, browsers and Python's "replace" produce.
std::string replace_invalid_utf8(std::string_view s);

// Rust's char::is_whitespace (the Unicode White_Space property), as Hugging Face uses it.
bool is_whitespace(char32_t cp);
// General category P* (Pc Pd Ps Pe Pi Pf Po).
bool is_punctuation(char32_t cp);
// General categories Cc Cf Cs Co (assigned "other" characters; unassigned Cn excluded).
bool is_other(char32_t cp);
// General category Mn.
bool is_nonspacing_mark(char32_t cp);
// General categories M* (Mn Mc Me).
bool is_mark(char32_t cp);
// General categories N* (Rust's char::is_numeric).
bool is_numeric(char32_t cp);
// General categories L*.
bool is_letter(char32_t cp);
// General categories L*, N* (Rust's char::is_alphanumeric).
bool is_alphanumeric(char32_t cp);
// Whether cp was assigned by Unicode 8.0 (the tables Hugging Face's BERT components use).
bool assigned_in_unicode_8(char32_t cp);
// Canonical combining class (0 for starters).
int combining_class(char32_t cp);

// Full lowercase mapping of cp appended to out (Rust's char::to_lowercase).
void append_lowercase(std::string& out, char32_t cp);

enum class NormalForm { NFC, NFD, NFKC, NFKD };
// Normalizes a valid UTF-8 string.
std::string normalize(std::string_view s, NormalForm form);

}  // namespace lmk::unicode
