#include "core/util/unicode.h"

#include <gtest/gtest.h>

namespace lmk::unicode {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8Test, ReplacesMaximalSubpartsLikeTheWhatwgDecoder) {
  // Cases from the WHATWG Encoding Standard / Unicode "U+FFFD substitution of maximal subparts".
  struct Case {
    std::string in, out;
  } cases[] = {
      {"abc", "abc"},
      {"\xF0\x9F\x98", kFffd},  // truncated 4-byte sequence: one
      {"\xF0\x9F\x98"
       "A",
       kFffd + "A"},                            // the breaking byte is decoded afresh
      {"\xED\xA0\x80", kFffd + kFffd + kFffd},  // UTF-8 encoded surrogate: ED then A0 80
      {"\xC0\xAF", kFffd + kFffd},              // overlong: C0 is never valid
      {"\xE0\x80\xAF", kFffd + kFffd + kFffd},  // overlong 3-byte
      {"\x80\x80", kFffd + kFffd},              // lone continuation bytes
      {"\xFF", kFffd},
      {"\xF4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},  // above U+10FFFF
      {"\xE2\x82\xAC\xE2\x82", "\xE2\x82\xAC" + kFffd},     // € then truncated
  };
  for (const auto& c : cases) {
    EXPECT_EQ(replace_invalid_utf8(c.in), c.out) << "input bytes: " << c.in.size();
    EXPECT_EQ(find_invalid_utf8(c.in) == std::string_view::npos, c.in == c.out);
  }
  EXPECT_EQ(find_invalid_utf8("ab\xC3\x28"), 2u);
}

TEST(Utf8Test, EncodesAndDecodesEveryLength) {
  for (char32_t cp : {U'A', U'\u00E9', U'\u20AC', U'\U0001F600'}) {
    std::string s;
    append_utf8(s, cp);
    size_t pos = 0;
    EXPECT_EQ(next_code_point(s, pos), cp);
    EXPECT_EQ(pos, s.size());
    EXPECT_EQ(sequence_length(static_cast<unsigned char>(s[0])), s.size());
  }
}

TEST(PropertiesTest, CategoriesAndWhitespace) {
  EXPECT_TRUE(is_whitespace(U'\u3000'));
  EXPECT_TRUE(is_whitespace(U'\u0085'));
  EXPECT_FALSE(is_whitespace(U'\u200B'));  // zero width space is Cf, not White_Space
  EXPECT_TRUE(is_punctuation(U'\u00BF'));
  EXPECT_FALSE(is_punctuation(U'$'));  // Sc
  EXPECT_TRUE(is_other(U'\u200B'));
  EXPECT_FALSE(is_other(U'\uFFFF'));  // unassigned is not "other" here
  EXPECT_TRUE(is_nonspacing_mark(U'\u0301'));
  EXPECT_TRUE(is_mark(U'\u0903'));  // Mc
  EXPECT_TRUE(is_numeric(U'\u0663'));
  EXPECT_TRUE(assigned_in_unicode_8(U'\u2E2E'));
  EXPECT_FALSE(assigned_in_unicode_8(U'\u2E4F'));      // Unicode 11
  EXPECT_FALSE(assigned_in_unicode_8(U'\U0001F970'));  // Unicode 11 emoji
  EXPECT_TRUE(assigned_in_unicode_8(U'\U0001F600'));
}

TEST(PropertiesTest, LowercaseUsesFullMappings) {
  std::string s;
  for (char32_t cp : {U'A', U'\u00C9', U'\u0130', U'\u03A3'}) append_lowercase(s, cp);
  EXPECT_EQ(s, "a\u00E9i\u0307\u03C3");
}

TEST(NormalizeTest, Forms) {
  EXPECT_EQ(normalize("e\u0301", NormalForm::NFC), "\u00E9");
  EXPECT_EQ(normalize("\u00E9", NormalForm::NFD), "e\u0301");
  EXPECT_EQ(normalize("\uFB01", NormalForm::NFKC), "fi");
  EXPECT_EQ(normalize("\uFB01", NormalForm::NFC), "\uFB01");
}

}  // namespace
}  // namespace lmk::unicode
