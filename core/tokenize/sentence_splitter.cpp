#include "core/tokenize/sentence_splitter.h"

#include <algorithm>
#include <string>

#include "core/tokenize/sentence_splitter_internal.h"

namespace lmk {

using namespace sentence_split;

namespace {

// A sentence needs at least this many letters/digits; smaller pieces join a neighbour.
constexpr size_t kMinAlphanumericPerSentence = 2;
// Longest word (in code points, dots included) looked up as an abbreviation.
constexpr size_t kMaxAbbreviationLength = 16;
// Longest word (in code points) compared against the common sentence-opening words.
constexpr size_t kMaxOpeningWordLength = 12;
// Longest token (in code points) that can be a list marker such as "12." or "iv.".
constexpr size_t kMaxListMarkerLength = 5;

constexpr char32_t kReplacementCharacter = 0xFFFD;

// ---------------------------------------------------------------------------------------------
// UTF-8 decoding

// One code point of the text and the byte offset where its encoding starts.
struct CodePoint {
  char32_t value;
  size_t offset;
};

// Decodes the code point at text[pos] into `value` and returns its length in bytes. Invalid,
// overlong, surrogate or truncated sequences (RFC 3629) decode as U+FFFD covering one byte,
// so a valid multi-byte sequence is always one unit and never split.
size_t decode_code_point(std::string_view text, size_t pos, char32_t& value) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) {
    value = lead;
    return 1;
  }
  size_t length = 0;
  char32_t bits = 0;
  unsigned char second_low = 0x80;
  unsigned char second_high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    bits = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    bits = lead & 0x0Fu;
    if (lead == 0xE0) second_low = 0xA0;   // overlong
    if (lead == 0xED) second_high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    bits = lead & 0x07u;
    if (lead == 0xF0) second_low = 0x90;   // overlong
    if (lead == 0xF4) second_high = 0x8F;  // above U+10FFFF
  }
  if (length == 0 || length > text.size() - pos) {
    value = kReplacementCharacter;
    return 1;
  }
  for (size_t k = 1; k < length; ++k) {
    const auto byte = static_cast<unsigned char>(text[pos + k]);
    const unsigned char low = k == 1 ? second_low : 0x80;
    const unsigned char high = k == 1 ? second_high : 0xBF;
    if (byte < low || byte > high) {
      value = kReplacementCharacter;
      return 1;
    }
    bits = (bits << 6) | (byte & 0x3Fu);
  }
  value = bits;
  return length;
}

// The text as code points, with bounds-safe access: at() past either end reads as 0.
class DecodedText {
 public:
  // Decodes all of `text`.
  explicit DecodedText(std::string_view text) : byte_size_(text.size()) {
    code_points_.reserve(text.size());
    size_t pos = 0;
    while (pos < text.size()) {
      char32_t value = 0;
      const size_t length = decode_code_point(text, pos, value);
      code_points_.push_back({value, pos});
      pos += length;
    }
  }

  // Number of code points.
  size_t size() const { return code_points_.size(); }
  // Number of bytes of the original text.
  size_t byte_size() const { return byte_size_; }
  // Code point at `index`, or 0 when out of range.
  char32_t at(size_t index) const { return index < size() ? code_points_[index].value : 0; }
  // Byte offset where code point `index` starts; byte_size() for index == size().
  size_t offset(size_t index) const {
    return index < size() ? code_points_[index].offset : byte_size_;
  }

 private:
  std::vector<CodePoint> code_points_;
  size_t byte_size_;
};

// ---------------------------------------------------------------------------------------------
// Rules

// A maximal run of whitespace and how many line breaks it holds (CR LF counts once).
struct WhitespaceRun {
  size_t end;
  size_t line_breaks;
};

// Scans the whitespace starting at code point `begin`.
WhitespaceRun scan_whitespace(const DecodedText& text, size_t begin) {
  WhitespaceRun run{begin, 0};
  while (run.end < text.size() && is_whitespace(text.at(run.end))) {
    const char32_t cp = text.at(run.end);
    const bool is_cr_before_lf = cp == '\r' && text.at(run.end + 1) == '\n';
    if (is_line_break(cp) && !is_cr_before_lf) run.line_breaks += cp == 0x2029 ? 2 : 1;
    ++run.end;
  }
  return run;
}

// Returns the index after the run of code points from `begin` that satisfy `predicate`.
template <typename Predicate>
size_t scan_while(const DecodedText& text, size_t begin, Predicate predicate) {
  size_t end = begin;
  while (end < text.size() && predicate(text.at(end))) ++end;
  return end;
}

// Returns true if the code point at `index` may begin a sentence: an uppercase letter, a digit,
// an opening quote or bracket, a letter of a caseless or uppercase non-Latin script, or, at the
// start of a line, a list bullet or Markdown marker.
bool is_plausible_sentence_start(const DecodedText& text, size_t index, bool starts_line) {
  const char32_t cp = text.at(index);
  if (is_digit(cp) || is_latin_uppercase(cp) || is_opening_punctuation(cp)) return true;
  if (starts_line && is_line_start_marker(cp)) return true;
  return is_letter(cp) && !is_latin_letter(cp) && !is_non_latin_lowercase(cp);
}

// Returns true if code point `index` is preceded, on its line, only by spaces or tabs.
bool is_at_line_start(const DecodedText& text, size_t index) {
  while (index > 0 && (text.at(index - 1) == ' ' || text.at(index - 1) == '\t')) --index;
  return index == 0 || is_line_break(text.at(index - 1));
}

// Returns true if the period at `period_index` ends a list marker opening its line: "1.",
// "12.", "iv.", "a." as in "1. First item".
bool is_list_marker_period(const DecodedText& text, size_t period_index) {
  size_t start = period_index;
  while (start > 0 && period_index - start <= kMaxListMarkerLength &&
         is_alphanumeric(text.at(start - 1))) {
    --start;
  }
  const size_t length = period_index - start;
  if (length == 0 || length > kMaxListMarkerLength) return false;
  bool all_digits = true;
  bool all_roman = true;
  for (size_t i = start; i < period_index; ++i) {
    const char32_t cp = text.at(i);
    all_digits = all_digits && is_ascii_digit(cp);
    all_roman =
        all_roman && (cp == 'i' || cp == 'v' || cp == 'x' || cp == 'I' || cp == 'V' || cp == 'X');
  }
  const bool is_marker = (all_digits && length <= 3) || all_roman || length == 1;
  return is_marker && is_at_line_start(text, start);
}

// How the word right before a period relates to abbreviations.
enum class AbbreviationKind {
  kNone,        // an ordinary word, a number, or nothing: the period may end a sentence
  kNeverFinal,  // "Mr.", "e.g.", "Fig.": the period does not end a sentence
  kMaybeFinal,  // "Inc.", "U.S.", "J.": ends a sentence only before a common opening word
};

// Classifies the word of letters and inner dots that ends right before `period_index`.
AbbreviationKind classify_word_before_period(const DecodedText& text, size_t period_index) {
  size_t start = period_index;
  while (start > 0 && period_index - start <= kMaxAbbreviationLength &&
         (is_letter(text.at(start - 1)) || text.at(start - 1) == '.')) {
    --start;
  }
  if (period_index - start > kMaxAbbreviationLength) return AbbreviationKind::kNone;
  if (start > 0 && is_alphanumeric(text.at(start - 1))) return AbbreviationKind::kNone;  // "5a."
  while (start < period_index && text.at(start) == '.') ++start;                         // ".NET."
  if (start == period_index) return AbbreviationKind::kNone;

  std::string ascii_word;
  bool is_ascii = true;
  size_t pieces = 1;
  size_t piece_length = 0;
  size_t longest_piece = 0;
  for (size_t i = start; i < period_index; ++i) {
    const char32_t cp = text.at(i);
    if (cp < 0x80) {
      ascii_word.push_back(static_cast<char>(cp));
    } else {
      is_ascii = false;
    }
    if (cp == '.') {
      if (piece_length == 0) return AbbreviationKind::kNone;  // "a..b."
      ++pieces;
      piece_length = 0;
    } else {
      longest_piece = std::max(longest_piece, ++piece_length);
    }
  }
  if (is_ascii && contains_word(abbreviations_never_final(), ascii_word)) {
    return AbbreviationKind::kNeverFinal;
  }
  if (is_ascii && contains_word(abbreviations_maybe_final(), ascii_word)) {
    return AbbreviationKind::kMaybeFinal;
  }
  const bool is_initial = pieces == 1 && longest_piece == 1;            // "J." "Л."
  const bool is_dotted_initialism = pieces >= 2 && longest_piece <= 2;  // "U.S." "Ph.D." "a.m."
  if (is_initial || is_dotted_initialism) return AbbreviationKind::kMaybeFinal;
  return AbbreviationKind::kNone;
}

// Returns true if a common sentence-opening word ("The", "It", ...) starts at `index` and is
// not itself followed by a period (so "A." stays an initial).
bool starts_with_common_opener(const DecodedText& text, size_t index) {
  std::string word;
  size_t end = index;
  while (end < text.size() && text.at(end) < 0x80 && is_letter(text.at(end))) {
    if (word.size() == kMaxOpeningWordLength) return false;
    word.push_back(static_cast<char>(text.at(end)));
    ++end;
  }
  if (is_letter(text.at(end)) || text.at(end) == '.') return false;
  return common_sentence_openers().count(word) > 0;
}

// Returns true if the fullwidth stop at `run_begin` (a run of one) sits between digits ("３．５").
bool is_fullwidth_decimal_point(const DecodedText& text, size_t run_begin, size_t run_end) {
  return run_end == run_begin + 1 && text.at(run_begin) == 0xFF0E && run_begin > 0 &&
         is_digit(text.at(run_begin - 1)) && is_digit(text.at(run_end));
}

// Returns true if the run of . ! ? at [run_begin, run_end), followed (after any closers) by
// `whitespace` and then more text, ends a sentence.
bool whitespace_terminator_ends_sentence(const DecodedText& text, size_t run_begin, size_t run_end,
                                         const WhitespaceRun& whitespace) {
  if (whitespace.line_breaks >= 2) return true;  // a blank line always ends a sentence
  const size_t next_index = whitespace.end;
  if (!is_plausible_sentence_start(text, next_index, whitespace.line_breaks > 0)) return false;
  const bool is_single_period = run_end == run_begin + 1 && text.at(run_begin) == '.';
  if (!is_single_period) return true;  // "?", "!", "?!", "...", "…"
  if (is_list_marker_period(text, run_begin)) return false;
  switch (classify_word_before_period(text, run_begin)) {
    case AbbreviationKind::kNone:
      return true;
    case AbbreviationKind::kNeverFinal:
      return false;
    case AbbreviationKind::kMaybeFinal:
      return starts_with_common_opener(text, next_index);
  }
  return true;
}

// Returns the byte offsets where sentences may end (before fragment merging), ending with
// text.byte_size().
std::vector<size_t> find_sentence_ends(const DecodedText& text) {
  std::vector<size_t> ends;
  // Records an end before code point `index`; ends at 0, at the text's end and repeats are
  // skipped so the result stays strictly increasing.
  const auto add_end_before = [&](size_t index) {
    const size_t offset = text.offset(index);
    if (offset == 0 || offset >= text.byte_size()) return;
    if (!ends.empty() && ends.back() >= offset) return;
    ends.push_back(offset);
  };

  size_t index = 0;
  while (index < text.size()) {
    const char32_t cp = text.at(index);
    if (is_whitespace(cp)) {
      const WhitespaceRun whitespace = scan_whitespace(text, index);
      if (whitespace.line_breaks >= 2) add_end_before(whitespace.end);
      index = whitespace.end;
      continue;
    }
    if (!is_terminator(cp)) {
      ++index;
      continue;
    }
    const size_t run_end = scan_while(text, index, is_terminator);
    const size_t closers_end = scan_while(text, run_end, is_closing_punctuation);
    const WhitespaceRun whitespace = scan_whitespace(text, closers_end);
    bool has_standalone_terminator = false;
    for (size_t i = index; i < run_end; ++i) {
      has_standalone_terminator = has_standalone_terminator || is_standalone_terminator(text.at(i));
    }
    bool ends_sentence = false;
    if (has_standalone_terminator) {
      ends_sentence = !is_fullwidth_decimal_point(text, index, run_end);
    } else if (whitespace.end > closers_end && whitespace.end < text.size()) {
      ends_sentence = whitespace_terminator_ends_sentence(text, index, run_end, whitespace);
    }
    if (ends_sentence) {
      add_end_before(whitespace.end);
      index = whitespace.end;
    } else {
      index = run_end;  // closers and whitespace are scanned again by the loop
    }
  }
  ends.push_back(text.byte_size());
  return ends;
}

// Merges every piece with fewer than kMinAlphanumericPerSentence letters/digits into the
// following piece, or into the previous one when it is the last.
std::vector<size_t> merge_small_pieces(const DecodedText& text, const std::vector<size_t>& ends) {
  std::vector<size_t> merged;
  merged.reserve(ends.size());
  size_t index = 0;
  size_t pending_alphanumerics = 0;
  for (const size_t end : ends) {
    for (; index < text.size() && text.offset(index) < end; ++index) {
      if (is_alphanumeric(text.at(index))) ++pending_alphanumerics;
    }
    if (pending_alphanumerics >= kMinAlphanumericPerSentence) {
      merged.push_back(end);
      pending_alphanumerics = 0;
    }
  }
  if (merged.empty()) {
    merged.push_back(text.byte_size());
  } else {
    merged.back() = text.byte_size();
  }
  return merged;
}

}  // namespace

std::vector<size_t> split_sentences(std::string_view text) {
  if (text.empty()) return {};
  const DecodedText decoded(text);
  return merge_small_pieces(decoded, find_sentence_ends(decoded));
}

std::vector<std::string> sentence_texts(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end : split_sentences(text)) {
    out.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return out;
}

}  // namespace lmk
