// NormalizedString (core/tokenize/normalized_string.cpp): every byte of normalized text remembers
// the original byte it came from, through slicing, character rewrites (transform_chars) and a
// prepended prefix, and original_span maps normalized bytes back onto the input.
#include "core/tokenize/normalized_string.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace lmk {
namespace {

using Span = std::pair<uint32_t, uint32_t>;
using Origins = std::vector<uint32_t>;

// Each byte of the original text points at its own offset, counted from where the text
// starts in the input.
TEST(NormalizedStringTest, FromOriginalPointsEachByteAtItsOffset) {
  const NormalizedString s = NormalizedString::from_original("héllo", 10);  // é: two bytes
  EXPECT_EQ(s.text, "héllo");
  EXPECT_EQ(s.origin, (Origins{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(s.original_begin, 10u);
  EXPECT_EQ(s.original_end, 16u);
  EXPECT_FALSE(s.empty());
  const NormalizedString empty = NormalizedString::from_original("", 5);
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.original_begin, 5u);
  EXPECT_EQ(empty.original_end, 5u);
}

// A slice keeps its bytes' origins and covers the original span from its first byte's origin
// to the origin of the byte after it (the piece's end at the end of the text).
TEST(NormalizedStringTest, SlicesKeepTheirOrigins) {
  const NormalizedString s = NormalizedString::from_original("héllo", 10);
  const NormalizedString e = s.slice(1, 3);
  EXPECT_EQ(e.text, "é");
  EXPECT_EQ(e.origin, (Origins{11, 12}));
  EXPECT_EQ(e.original_begin, 11u);
  EXPECT_EQ(e.original_end, 13u);
  const NormalizedString tail = s.slice(3, 6);
  EXPECT_EQ(tail.text, "llo");
  EXPECT_EQ(tail.original_begin, 13u);
  EXPECT_EQ(tail.original_end, 16u);
  // Slicing a slice: origins are still offsets in the input.
  const NormalizedString lo = tail.slice(1, 3);
  EXPECT_EQ(lo.text, "lo");
  EXPECT_EQ(lo.original_begin, 14u);
  EXPECT_EQ(lo.original_end, 16u);
  EXPECT_EQ(s.original_span(0, 6), (Span{10, 16}));
}

// transform_chars: replacement bytes take the origin of the character they replace (ß -> "ss"
// both point at ß), a dropped character leaves no byte, an unchanged one keeps its origin; the
// piece's original span stays the same.
TEST(NormalizedStringTest, TransformCharsKeepsEachReplacementsOrigin) {
  NormalizedString s = NormalizedString::from_original("aßb-É", 0);  // a ß(1,2) b - É(5,6)
  transform_chars(s, [](char32_t cp, std::string& out) {
    if (cp == U'ß') {
      out += "ss";
    } else if (cp == U'-') {
      // dropped
    } else if (cp == U'É') {
      out += "é";
    } else {
      out.push_back(static_cast<char>(cp));
    }
  });
  EXPECT_EQ(s.text, "assbé");
  EXPECT_EQ(s.origin, (Origins{0, 1, 1, 3, 5, 5}));
  EXPECT_EQ(s.original_begin, 0u);
  EXPECT_EQ(s.original_end, 7u);
}

// original_span of normalized bytes: from the first byte's origin to the next byte's; a span
// inside the expansion of one character (one "s" of ß's "ss") still covers that whole character;
// at the end of the text the span runs to the piece's end.
TEST(NormalizedStringTest, OriginalSpanCoversWholeSourceCharacters) {
  NormalizedString s = NormalizedString::from_original("aßb", 0);  // ß: bytes 1, 2
  transform_chars(s, [](char32_t cp, std::string& out) {
    if (cp == U'ß')
      out += "ss";
    else
      out.push_back(static_cast<char>(cp));
  });
  ASSERT_EQ(s.text, "assb");
  EXPECT_EQ(s.original_span(0, 1), (Span{0, 1}));
  EXPECT_EQ(s.original_span(1, 2), (Span{1, 3})) << "the first s covers ß";
  EXPECT_EQ(s.original_span(2, 3), (Span{1, 3})) << "the second s covers ß";
  EXPECT_EQ(s.original_span(1, 3), (Span{1, 3}));
  EXPECT_EQ(s.original_span(3, 4), (Span{3, 4}));
  EXPECT_EQ(s.original_span(0, 4), (Span{0, 4}));
  EXPECT_EQ(s.original_span(4, 4), (Span{4, 4})) << "an empty span at the end";
}

// A prepended prefix (Metaspace's ▁) points at the piece's first original byte.
TEST(NormalizedStringTest, PrependPointsAtTheFirstOriginalByte) {
  NormalizedString s = NormalizedString::from_original("hello world", 0).slice(6, 11);
  s.prepend("▁");  // three bytes
  EXPECT_EQ(s.text, "▁world");
  EXPECT_EQ(s.origin, (Origins{6, 6, 6, 6, 7, 8, 9, 10}));
  EXPECT_EQ(s.original_begin, 6u);
  EXPECT_EQ(s.original_end, 11u);
  EXPECT_EQ(s.original_span(3, 8), (Span{6, 11})) << "the word itself";
}

}  // namespace
}  // namespace lmk
