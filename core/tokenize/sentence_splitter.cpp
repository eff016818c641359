#include "core/tokenize/sentence_splitter.h"

#include <algorithm>
#include <string>
#include <unordered_set>

namespace lmk {
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
// Character classes (hand-written for the few code points the rules need)

// Returns true for ASCII 0-9.
bool is_ascii_digit(char32_t cp) {
  return cp >= '0' && cp <= '9';
}

// Returns true for ASCII and fullwidth digits.
bool is_digit(char32_t cp) {
  return is_ascii_digit(cp) || (cp >= 0xFF10 && cp <= 0xFF19);
}

// Returns true for Unicode white space (the White_Space property).
bool is_whitespace(char32_t cp) {
  return cp == ' ' || (cp >= '\t' && cp <= '\r') || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

// Returns true for characters that end a line (CR is handled with its LF by the caller).
bool is_line_break(char32_t cp) {
  return cp == '\n' || cp == '\r' || cp == '\v' || cp == '\f' || cp == 0x85 || cp == 0x2028 ||
         cp == 0x2029;
}

// Returns true for code points at or above U+0370 that are not letters: punctuation, symbols,
// spaces, format and private-use characters. Everything else there counts as a letter.
bool is_non_letter_above_greek(char32_t cp) {
  struct Range {
    char32_t first;
    char32_t last;
  };
  static constexpr Range kNonLetters[] = {
      {0x037E, 0x037E},   {0x0387, 0x0387},    {0x055A, 0x055F}, {0x0589, 0x058A},
      {0x05BE, 0x05BE},   {0x05C0, 0x05C0},    {0x05C3, 0x05C3}, {0x05F3, 0x05F4},
      {0x0600, 0x060F},   {0x061B, 0x061F},    {0x066A, 0x066D}, {0x06D4, 0x06D4},
      {0x0964, 0x0965},   {0x0970, 0x0970},    {0x0E4F, 0x0E4F}, {0x0E5A, 0x0E5B},
      {0x104A, 0x104B},   {0x10FB, 0x10FB},    {0x1360, 0x1368}, {0x166D, 0x166E},
      {0x1680, 0x1680},   {0x16EB, 0x16ED},    {0x17D4, 0x17DA}, {0x1800, 0x180A},
      {0x2000, 0x2BFF},   {0x2E00, 0x2E7F},    {0x3000, 0x303F}, {0x30FB, 0x30FB},
      {0xD800, 0xF8FF},   {0xFE00, 0xFE6F},    {0xFF00, 0xFF0F}, {0xFF1A, 0xFF20},
      {0xFF3B, 0xFF40},   {0xFF5B, 0xFF65},    {0xFFE0, 0xFFFF}, {0x1F000, 0x1FAFF},
      {0xE0000, 0xE007F}, {0xF0000, 0x10FFFF},
  };
  for (const Range& range : kNonLetters) {
    if (cp >= range.first && cp <= range.last) return true;
  }
  return false;
}

// Returns true for letters of any script (approximate outside Latin; combining marks of other
// scripts count as letters, which is what the fragment rule wants) and non-ASCII digits.
bool is_letter(char32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z');
  if (cp < 0x0370) {
    return cp == 0xAA || cp == 0xB5 || cp == 0xBA ||
           (cp >= 0xC0 && cp <= 0x02FF && cp != 0xD7 && cp != 0xF7);
  }
  return !is_non_letter_above_greek(cp);
}

// Returns true for letters and digits of any script.
bool is_alphanumeric(char32_t cp) {
  return is_ascii_digit(cp) || is_letter(cp);
}

// Returns true for letters of the Latin script (ASCII, Latin-1, extensions, fullwidth).
bool is_latin_letter(char32_t cp) {
  if (cp < 0x0300) return is_letter(cp);
  return (cp >= 0x1E00 && cp <= 0x1EFF) || (cp >= 0x2C60 && cp <= 0x2C7F) ||
         (cp >= 0xA720 && cp <= 0xA7FF) || (cp >= 0xFF21 && cp <= 0xFF3A) ||
         (cp >= 0xFF41 && cp <= 0xFF5A);
}

// Returns true for uppercase Latin letters (ASCII, Latin-1, Latin Extended-A and Additional,
// fullwidth). Latin Extended-B counts as not uppercase, so it never starts a sentence.
bool is_latin_uppercase(char32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return true;
  if (cp >= 0xC0 && cp <= 0xDE) return cp != 0xD7;
  if (cp >= 0x0100 && cp <= 0x0137) return cp % 2 == 0;
  if (cp >= 0x0139 && cp <= 0x0148) return cp % 2 == 1;
  if (cp >= 0x014A && cp <= 0x0177) return cp % 2 == 0;
  if (cp == 0x0178) return true;
  if (cp >= 0x0179 && cp <= 0x017E) return cp % 2 == 1;
  if (cp >= 0x1E00 && cp <= 0x1EFF) return cp % 2 == 0;
  return cp >= 0xFF21 && cp <= 0xFF3A;
}

// Returns true for lowercase letters of the cased non-Latin scripts (Greek, Cyrillic,
// Armenian); such a letter after ". " continues the sentence like a Latin lowercase one.
bool is_non_latin_lowercase(char32_t cp) {
  if (cp >= 0x03AC && cp <= 0x03CE) return true;              // Greek
  if (cp >= 0x1F00 && cp <= 0x1FFF) return (cp & 0x8u) == 0;  // Greek Extended
  if (cp >= 0x0430 && cp <= 0x045F) return true;              // Cyrillic
  if (cp >= 0x0460 && cp <= 0x0481) return cp % 2 == 1;
  if (cp >= 0x048A && cp <= 0x04BF) return cp % 2 == 1;
  if (cp >= 0x04C1 && cp <= 0x04CE) return cp % 2 == 0;
  if (cp == 0x04CF) return true;
  if (cp >= 0x04D0 && cp <= 0x052F) return cp % 2 == 1;
  return cp >= 0x0561 && cp <= 0x0588;  // Armenian
}

// Returns true for . ! ? and their compatibility forms; they end a sentence only when
// whitespace and a plausible sentence start follow.
bool is_whitespace_terminator(char32_t cp) {
  return cp == '.' || cp == '!' || cp == '?' || cp == 0x2026 /* … */ || cp == 0x203C /* ‼ */ ||
         (cp >= 0x2047 && cp <= 0x2049) /* ⁇⁈⁉ */ || cp == 0x037E /* Greek question mark */;
}

// Returns true for terminators of scripts written without spaces or with their own stop
// (CJK 。！？．｡, Devanagari । ॥, Arabic ؟ ۔, Armenian ։, Ethiopic ። ፧, Myanmar ။, Khmer ។);
// they end a sentence even when no whitespace follows.
bool is_standalone_terminator(char32_t cp) {
  switch (cp) {
    case 0x3002:
    case 0xFF01:
    case 0xFF1F:
    case 0xFF0E:
    case 0xFF61:
    case 0x0964:
    case 0x0965:
    case 0x061F:
    case 0x06D4:
    case 0x0589:
    case 0x1362:
    case 0x1367:
    case 0x104B:
    case 0x17D4:
      return true;
    default:
      return false;
  }
}

// Returns true for any sentence terminator.
bool is_terminator(char32_t cp) {
  return is_whitespace_terminator(cp) || is_standalone_terminator(cp);
}

// Returns true for closing quotes, brackets and emphasis marks that may follow a terminator
// and still belong to the sentence it ends ("Go." / (done.) / **Done.** / 。」).
bool is_closing_punctuation(char32_t cp) {
  switch (cp) {
    case '"':
    case '\'':
    case ')':
    case ']':
    case '}':
    case '*':
    case '_':
    case 0x00AB:  // « (closes German »…«)
    case 0x00BB:  // »
    case 0x2018:  // ‘ (closes German ‚…‘)
    case 0x2019:  // ’
    case 0x201C:  // “ (closes German „…“)
    case 0x201D:  // ”
    case 0x2039:  // ‹
    case 0x203A:  // ›
    case 0x3009:  // 〉
    case 0x300B:  // 》
    case 0x300D:  // 」
    case 0x300F:  // 』
    case 0x3011:  // 】
    case 0x3015:  // 〕
    case 0xFF02:  // ＂
    case 0xFF07:  // ＇
    case 0xFF09:  // ）
    case 0xFF3D:  // ］
    case 0xFF5D:  // ｝
      return true;
    default:
      return false;
  }
}

// Returns true for opening quotes and brackets (and Spanish ¿ ¡) that may start a sentence.
bool is_opening_punctuation(char32_t cp) {
  switch (cp) {
    case '"':
    case '\'':
    case '(':
    case '[':
    case '{':
    case 0x00A1:  // ¡
    case 0x00AB:  // «
    case 0x00BF:  // ¿
    case 0x2018:  // ‘
    case 0x201A:  // ‚
    case 0x201C:  // “
    case 0x201E:  // „
    case 0x2039:  // ‹
    case 0x3008:  // 〈
    case 0x300A:  // 《
    case 0x300C:  // 「
    case 0x300E:  // 『
    case 0x3010:  // 【
    case 0x3014:  // 〔
    case 0xFF02:  // ＂
    case 0xFF08:  // （
    case 0xFF3B:  // ［
    case 0xFF5B:  // ｛
      return true;
    default:
      return false;
  }
}

// Returns true for list bullets and Markdown block markers that start a sentence when they
// open a line ("- item", "* item", "# Heading", "> quote").
bool is_line_start_marker(char32_t cp) {
  return cp == '-' || cp == '*' || cp == '+' || cp == '#' || cp == '>' || cp == 0x2013 ||
         cp == 0x2014 || cp == 0x2022 || cp == 0x2023 || cp == 0x25E6;
}

// ---------------------------------------------------------------------------------------------
// Word lists

// Abbreviations that (almost) never end a sentence: titles and reference markers that a name,
// number or phrase follows ("Mr. Smith", "e.g. Python", "Fig. 3", "cf. Table 2").
const std::unordered_set<std::string_view>& abbreviations_never_final() {
  static const std::unordered_set<std::string_view> kWords = {
      "Mr",  "Mrs",  "Ms",   "Mx",  "Dr",   "Prof", "Gen",  "Col",    "Capt", "Lt",
      "Sgt", "Maj",  "Adm",  "Gov", "Sen",  "Rep",  "Rev",  "Hon",    "Pres", "Messrs",
      "Mme", "Mlle", "Mt",   "Ft",  "vs",   "cf",   "viz",  "approx", "ca",   "e.g",
      "i.e", "Fig",  "Figs", "Eq",  "Eqs",  "Vol",  "Vols", "pp",     "Sec",  "Sect",
      "Ch",  "Chap", "Art",  "Ref", "Refs", "Tab",  "Nos",  "Dept",   "Univ", "Assn"};
  return kWords;
}

// Abbreviations that may also end a sentence ("Acme Inc." / "in the U.S." / "in Jan."): they
// end one only when a common sentence-opening word follows.
const std::unordered_set<std::string_view>& abbreviations_maybe_final() {
  static const std::unordered_set<std::string_view> kWords = {
      "St", "Sr",  "Jr",  "No",  "Inc", "Ltd", "Co",  "Corp", "Bros", "Esq",  "Ave", "Blvd", "Rd",
      "al", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug",  "Sep",  "Sept", "Oct", "Nov",  "Dec"};
  return kWords;
}

// Frequent capitalized first words of English sentences; after a may-be-final abbreviation
// ("... the U.S. The next year") they tell a sentence end from a name ("U.S. Army").
const std::unordered_set<std::string_view>& common_sentence_openers() {
  static const std::unordered_set<std::string_view> kWords = {
      "A",       "After",     "All",   "Also",    "Although", "An",    "And",  "As",    "At",
      "Because", "Before",    "But",   "By",      "Each",     "Every", "For",  "From",  "He",
      "Her",     "His",       "How",   "However", "I",        "If",    "In",   "It",    "Its",
      "Many",    "Meanwhile", "Most",  "My",      "Now",      "On",    "One",  "Our",   "She",
      "Since",   "So",        "Some",  "That",    "The",      "Their", "Then", "There", "These",
      "They",    "This",      "Those", "Thus",    "To",       "Today", "We",   "What",  "When",
      "Where",   "Which",     "While", "Who",     "Why",      "With",  "Yet",  "You",   "Your"};
  return kWords;
}

// Returns true if `word` is in `words` as written, with its first letter's case flipped, or,
// when written in capitals, capitalized ("mr", "MR" and "Etc" match "Mr" and "etc"; "CA" does
// not match "ca").
bool contains_word(const std::unordered_set<std::string_view>& words, const std::string& word) {
  if (word.empty()) return false;
  if (words.count(word) > 0) return true;
  const auto is_upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  const auto is_lower = [](char c) { return c >= 'a' && c <= 'z'; };
  std::string variant = word;
  if (is_lower(variant[0]))
    variant[0] = static_cast<char>(variant[0] - 'a' + 'A');
  else if (is_upper(variant[0]))
    variant[0] = static_cast<char>(variant[0] - 'A' + 'a');
  if (words.count(variant) > 0) return true;
  bool all_capitals = true;
  for (const char c : word) all_capitals = all_capitals && !is_lower(c);
  if (!all_capitals) return false;
  variant = word;
  for (size_t i = 1; i < variant.size(); ++i) {
    if (is_upper(variant[i])) variant[i] = static_cast<char>(variant[i] - 'A' + 'a');
  }
  return words.count(variant) > 0;
}

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
