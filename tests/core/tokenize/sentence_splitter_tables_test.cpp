// The sentence splitter's character classes and word lists
// (core/tokenize/sentence_splitter_tables.cpp), against Unicode's own lists where the header
// promises them (White_Space, the case pairs of the Latin blocks) and against the characters
// the header names.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/tokenize/sentence_splitter_internal.h"
#include "core/util/unicode.h"

namespace lmk {
namespace {

using namespace sentence_split;

// The code points of a UTF-8 string.
std::vector<char32_t> code_points(std::string_view text) {
  std::vector<char32_t> out;
  size_t pos = 0;
  while (pos < text.size()) out.push_back(unicode::next_code_point(text, pos));
  return out;
}

// is_whitespace is Unicode's White_Space property (PropList.txt) over the whole BMP; line
// breaks are LF, VT, FF, CR, NEL and the two separators; digits are ASCII and fullwidth only.
TEST(SentenceSplitterTablesTest, WhitespaceLineBreaksAndDigits) {
  const std::set<char32_t> white_space = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0x85,
                                          0xA0,   0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
                                          0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A, 0x2028,
                                          0x2029, 0x202F, 0x205F, 0x3000};
  for (char32_t cp = 0; cp < 0x10000; ++cp)
    ASSERT_EQ(is_whitespace(cp), white_space.count(cp) == 1)
        << std::hex << "U+" << static_cast<uint32_t>(cp);
  EXPECT_FALSE(is_whitespace(0x200B)) << "zero width space is not White_Space";
  for (char32_t cp :
       {U'\n', U'\v', U'\f', U'\r', char32_t{0x85}, char32_t{0x2028}, char32_t{0x2029}})
    EXPECT_TRUE(is_line_break(cp)) << std::hex << static_cast<uint32_t>(cp);
  for (char32_t cp : {U' ', U'\t', char32_t{0xA0}}) EXPECT_FALSE(is_line_break(cp));
  EXPECT_TRUE(is_ascii_digit(U'7'));
  EXPECT_FALSE(is_ascii_digit(U'７'));
  EXPECT_TRUE(is_digit(U'７'));
  EXPECT_TRUE(is_digit(U'0'));
  EXPECT_FALSE(is_digit(U'٣'));
  EXPECT_FALSE(is_digit(U'a'));
}

// Letters of any script count, punctuation, symbols and spaces do not; digits are
// alphanumeric, not letters (ASCII ones; other scripts' digits count as letters).
TEST(SentenceSplitterTablesTest, LettersOfAnyScript) {
  for (char32_t cp : code_points("aZéÆßαЖщաअक中あ한ªº"))
    EXPECT_TRUE(is_letter(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
  for (char32_t cp : code_points("7.,!?;:'\"()[] \t×÷。、「」“”—…€😀\u00A0\u3000"))
    EXPECT_FALSE(is_letter(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
  EXPECT_TRUE(is_alphanumeric(U'7'));
  EXPECT_TRUE(is_alphanumeric(U'é'));
  EXPECT_FALSE(is_alphanumeric(U'-'));
  for (char32_t cp : code_points("aZéÿĀſẞＡｚ"))
    EXPECT_TRUE(is_latin_letter(cp)) << std::hex << static_cast<uint32_t>(cp);
  for (char32_t cp : code_points("αЖ中7"))
    EXPECT_FALSE(is_latin_letter(cp)) << std::hex << static_cast<uint32_t>(cp);
}

// Uppercase Latin letters: ASCII, Latin-1 (not ×), Latin Extended-A by its case pairs (Ā ā,
// Ĺ ĺ, Ŋ ŋ, Ÿ, Ź ź; ĸ, ŉ and ſ are lowercase), Latin Extended Additional's pairs, fullwidth;
// Latin Extended-B never.
TEST(SentenceSplitterTablesTest, LatinUppercaseFollowsTheCasePairs) {
  for (char32_t cp : code_points("AZÀÉÞĀĂĶĹĻŇŊŌŶŸŹŻŽḀẞỸＡＺ"))
    EXPECT_TRUE(is_latin_uppercase(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
  for (char32_t cp : code_points("azàéßÿāķĸĺňŉŋŷźžſḁỹａ×Ɓƀ1"))
    EXPECT_FALSE(is_latin_uppercase(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
}

// Lowercase letters of Greek, Cyrillic and Armenian continue a sentence; their capitals, and
// Latin letters, do not count here.
TEST(SentenceSplitterTablesTest, NonLatinLowercase) {
  for (char32_t cp : code_points("αωάώςἀἁаяёџѡҋӂӏӑԯաֆ"))
    EXPECT_TRUE(is_non_latin_lowercase(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
  for (char32_t cp : code_points("ΑΩἈАЯЁЏѠҊӁӀӐԮԱՖaA"))
    EXPECT_FALSE(is_non_latin_lowercase(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
}

// Unicode's lowercase letters inside the blocks the two functions above treat by parity: Latin
// Extended Additional's U+1E96..U+1E9D and U+1E9F (ẖ ẗ ẘ ẙ ẚ ẛ ẜ ẝ ẟ) and Greek Extended's
// U+1F70..U+1F7D (ὰ ά ὲ έ ὴ ή ὶ ί ὸ ό ὺ ύ ὼ ώ) are lowercase (the parity rules alone counted
// ẖ ẘ ẚ ẜ as uppercase and ὸ ό ὺ ύ ὼ ώ as not lowercase).
TEST(SentenceSplitterTablesTest, LowercaseExceptionsOfTheParityBlocks) {
  for (char32_t cp = 0x1E96; cp <= 0x1E9F; ++cp)
    if (cp != 0x1E9E)
      EXPECT_FALSE(is_latin_uppercase(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
  for (char32_t cp = 0x1F70; cp <= 0x1F7D; ++cp)
    EXPECT_TRUE(is_non_latin_lowercase(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
}

// Terminators: . ! ? and their compatibility forms need whitespace after them; the scripts'
// own stops the header names (CJK 。！？．｡, Devanagari । ॥, Arabic ؟ ۔, Armenian ։, Ethiopic ።
// ፧, Myanmar ။, Khmer ។) do not; is_terminator is either.
TEST(SentenceSplitterTablesTest, TerminatorsOfEachKind) {
  std::vector<char32_t> whitespace_terminators = code_points(".!?…‼⁇⁈⁉");
  whitespace_terminators.push_back(0x037E);  // the Greek question mark (NFC turns it into ';')
  for (char32_t cp : whitespace_terminators) {
    EXPECT_TRUE(is_whitespace_terminator(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
    EXPECT_FALSE(is_standalone_terminator(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
    EXPECT_TRUE(is_terminator(cp));
  }
  for (char32_t cp : code_points("。！？．｡।॥؟۔։።፧။។")) {
    EXPECT_TRUE(is_standalone_terminator(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
    EXPECT_FALSE(is_whitespace_terminator(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
    EXPECT_TRUE(is_terminator(cp));
  }
  for (char32_t cp : code_points(",;:-、，a \n"))
    EXPECT_FALSE(is_terminator(cp)) << std::hex << static_cast<uint32_t>(cp);
}

// Closing marks that stay with the sentence they end, opening marks that may start one, and
// the markers that start a line's item.
TEST(SentenceSplitterTablesTest, PunctuationAroundSentences) {
  for (char32_t cp : code_points("\"')]}*_»«’‘”“›‹〉》」』】〕＂＇）］｝"))
    EXPECT_TRUE(is_closing_punctuation(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
  for (char32_t cp : code_points("([{.,¿¡„‚「（"))
    EXPECT_FALSE(is_closing_punctuation(cp)) << std::hex << static_cast<uint32_t>(cp);
  for (char32_t cp : code_points("\"'([{¡¿«‘‚“„‹〈《「『【〔＂（［｛"))
    EXPECT_TRUE(is_opening_punctuation(cp)) << std::hex << "U+" << static_cast<uint32_t>(cp);
  for (char32_t cp : code_points(")]}.»”」）"))
    EXPECT_FALSE(is_opening_punctuation(cp)) << std::hex << static_cast<uint32_t>(cp);
  for (char32_t cp : code_points("-*+#>–—•‣◦"))
    EXPECT_TRUE(is_line_start_marker(cp)) << std::hex << static_cast<uint32_t>(cp);
  for (char32_t cp : code_points(".1a(="))
    EXPECT_FALSE(is_line_start_marker(cp)) << std::hex << static_cast<uint32_t>(cp);
}

// The word lists: the examples the header gives are in them, no abbreviation is both never
// and maybe final, and every sentence opener is a capitalized word.
TEST(SentenceSplitterTablesTest, WordLists) {
  const auto& never = abbreviations_never_final();
  const auto& maybe = abbreviations_maybe_final();
  const auto& openers = common_sentence_openers();
  for (const char* word : {"Mr", "e.g", "Fig", "cf", "Dr", "i.e"})
    EXPECT_EQ(never.count(word), 1u) << word;
  for (const char* word : {"Inc", "Jan", "St", "Jr", "Co"})
    EXPECT_EQ(maybe.count(word), 1u) << word;
  for (const char* word : {"The", "However", "In", "It"})
    EXPECT_EQ(openers.count(word), 1u) << word;
  for (std::string_view word : never) EXPECT_EQ(maybe.count(word), 0u) << word;
  for (std::string_view word : openers) {
    EXPECT_TRUE(word[0] >= 'A' && word[0] <= 'Z') << word;
    for (char c : word.substr(1)) EXPECT_TRUE(c >= 'a' && c <= 'z') << word;
  }
  EXPECT_EQ(openers.count("Army"), 0u) << "U.S. Army is a name, not a sentence start";
}

// contains_word: as written, with the first letter's case flipped, or, in capitals,
// capitalized -- the header's examples: "mr", "MR" and "Etc" match "Mr" and "etc"; "CA" does
// not match "ca".
TEST(SentenceSplitterTablesTest, ContainsWordFlipsTheFirstLetterOrCapitalizes) {
  const std::unordered_set<std::string_view> words = {"Mr", "etc", "ca"};
  for (const char* word : {"Mr", "mr", "MR", "etc", "Etc", "ca", "Ca"})
    EXPECT_TRUE(contains_word(words, word)) << word;
  for (const char* word : {"CA", "ETC", "mR", "M", "", "Mrs", "cA"})
    EXPECT_FALSE(contains_word(words, word)) << word;
}

}  // namespace
}  // namespace lmk
