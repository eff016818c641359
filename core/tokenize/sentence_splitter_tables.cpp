// The character classes and word lists of the sentence splitter
// (core/tokenize/sentence_splitter_internal.h).
#include "core/tokenize/sentence_splitter_internal.h"

namespace lmk::sentence_split {

// ---------------------------------------------------------------------------------------------
// Character classes (hand-written for the few code points the rules need)

bool is_ascii_digit(char32_t cp) {
  return cp >= '0' && cp <= '9';
}

bool is_digit(char32_t cp) {
  return is_ascii_digit(cp) || (cp >= 0xFF10 && cp <= 0xFF19);
}

bool is_whitespace(char32_t cp) {
  return cp == ' ' || (cp >= '\t' && cp <= '\r') || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

bool is_line_break(char32_t cp) {
  return cp == '\n' || cp == '\r' || cp == '\v' || cp == '\f' || cp == 0x85 || cp == 0x2028 ||
         cp == 0x2029;
}

namespace {

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

}  // namespace

bool is_letter(char32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') || (cp >= 'a' && cp <= 'z');
  if (cp < 0x0370) {
    return cp == 0xAA || cp == 0xB5 || cp == 0xBA ||
           (cp >= 0xC0 && cp <= 0x02FF && cp != 0xD7 && cp != 0xF7);
  }
  return !is_non_letter_above_greek(cp);
}

bool is_alphanumeric(char32_t cp) {
  return is_ascii_digit(cp) || is_letter(cp);
}

bool is_latin_letter(char32_t cp) {
  if (cp < 0x0300) return is_letter(cp);
  return (cp >= 0x1E00 && cp <= 0x1EFF) || (cp >= 0x2C60 && cp <= 0x2C7F) ||
         (cp >= 0xA720 && cp <= 0xA7FF) || (cp >= 0xFF21 && cp <= 0xFF3A) ||
         (cp >= 0xFF41 && cp <= 0xFF5A);
}

bool is_latin_uppercase(char32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return true;
  if (cp >= 0xC0 && cp <= 0xDE) return cp != 0xD7;
  if (cp >= 0x0100 && cp <= 0x0137) return cp % 2 == 0;
  if (cp >= 0x0139 && cp <= 0x0148) return cp % 2 == 1;
  if (cp >= 0x014A && cp <= 0x0177) return cp % 2 == 0;
  if (cp == 0x0178) return true;
  if (cp >= 0x0179 && cp <= 0x017E) return cp % 2 == 1;
  // Latin Extended Additional pairs by parity, except ẖ ẗ ẘ ẙ ẚ ẛ ẜ ẝ (lowercase without a
  // pair), ẞ (uppercase) and ẟ.
  if (cp >= 0x1E96 && cp <= 0x1E9F) return cp == 0x1E9E;
  if (cp >= 0x1E00 && cp <= 0x1EFF) return cp % 2 == 0;
  return cp >= 0xFF21 && cp <= 0xFF3A;
}

bool is_non_latin_lowercase(char32_t cp) {
  if (cp >= 0x03AC && cp <= 0x03CE) return true;              // Greek
  if (cp >= 0x1F70 && cp <= 0x1F7D) return true;              // ὰ ά ... ώ: no capitals
  if (cp >= 0x1F00 && cp <= 0x1FFF) return (cp & 0x8u) == 0;  // Greek Extended
  if (cp >= 0x0430 && cp <= 0x045F) return true;              // Cyrillic
  if (cp >= 0x0460 && cp <= 0x0481) return cp % 2 == 1;
  if (cp >= 0x048A && cp <= 0x04BF) return cp % 2 == 1;
  if (cp >= 0x04C1 && cp <= 0x04CE) return cp % 2 == 0;
  if (cp == 0x04CF) return true;
  if (cp >= 0x04D0 && cp <= 0x052F) return cp % 2 == 1;
  return cp >= 0x0561 && cp <= 0x0588;  // Armenian
}

bool is_whitespace_terminator(char32_t cp) {
  return cp == '.' || cp == '!' || cp == '?' || cp == 0x2026 /* … */ || cp == 0x203C /* ‼ */ ||
         (cp >= 0x2047 && cp <= 0x2049) /* ⁇⁈⁉ */ || cp == 0x037E /* Greek question mark */;
}

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

bool is_terminator(char32_t cp) {
  return is_whitespace_terminator(cp) || is_standalone_terminator(cp);
}

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

bool is_line_start_marker(char32_t cp) {
  return cp == '-' || cp == '*' || cp == '+' || cp == '#' || cp == '>' || cp == 0x2013 ||
         cp == 0x2014 || cp == 0x2022 || cp == 0x2023 || cp == 0x25E6;
}

// ---------------------------------------------------------------------------------------------
// Word lists

const std::unordered_set<std::string_view>& abbreviations_never_final() {
  static const std::unordered_set<std::string_view> kWords = {
      "Mr",  "Mrs",  "Ms",   "Mx",  "Dr",   "Prof", "Gen",  "Col",    "Capt", "Lt",
      "Sgt", "Maj",  "Adm",  "Gov", "Sen",  "Rep",  "Rev",  "Hon",    "Pres", "Messrs",
      "Mme", "Mlle", "Mt",   "Ft",  "vs",   "cf",   "viz",  "approx", "ca",   "e.g",
      "i.e", "Fig",  "Figs", "Eq",  "Eqs",  "Vol",  "Vols", "pp",     "Sec",  "Sect",
      "Ch",  "Chap", "Art",  "Ref", "Refs", "Tab",  "Nos",  "Dept",   "Univ", "Assn"};
  return kWords;
}

const std::unordered_set<std::string_view>& abbreviations_maybe_final() {
  static const std::unordered_set<std::string_view> kWords = {
      "St", "Sr",  "Jr",  "No",  "Inc", "Ltd", "Co",  "Corp", "Bros", "Esq",  "Ave", "Blvd", "Rd",
      "al", "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug",  "Sep",  "Sept", "Oct", "Nov",  "Dec"};
  return kWords;
}

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

}  // namespace lmk::sentence_split
