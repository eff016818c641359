#include "core/tokenize/sentence_splitter.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace lmk {
namespace {

// Cuts `text` at the ends split_sentences returns.
std::vector<std::string> sentences_of(std::string_view text) {
  std::vector<std::string> sentences;
  size_t begin = 0;
  for (const size_t end : split_sentences(text)) {
    sentences.emplace_back(text.substr(begin, end - begin));
    begin = end;
  }
  return sentences;
}

// One input and the sentences it must be cut into.
struct SplitCase {
  std::string text;
  std::vector<std::string> expected;
};

// Checks every case, naming the failing input.
void expect_sentences(const std::vector<SplitCase>& cases) {
  for (const SplitCase& split_case : cases) {
    SCOPED_TRACE("text: " + split_case.text);
    EXPECT_EQ(sentences_of(split_case.text), split_case.expected);
  }
}

// Checks that each text comes back as a single sentence.
void expect_one_sentence(const std::vector<std::string>& texts) {
  for (const std::string& text : texts) {
    SCOPED_TRACE("text: " + text);
    EXPECT_EQ(split_sentences(text), std::vector<size_t>{text.size()});
  }
}

TEST(SentenceSplitterTest, EmptyTextHasNoSentences) {
  EXPECT_TRUE(split_sentences("").empty());
}

TEST(SentenceSplitterTest, SplitsAfterTerminalPunctuation) {
  expect_sentences({
      {"Hello world. How are you?", {"Hello world. ", "How are you?"}},
      {"Stop! Go now.", {"Stop! ", "Go now."}},
      {"Really?! Yes, really.", {"Really?! ", "Yes, really."}},
      {"Wait... The end came.", {"Wait... ", "The end came."}},
      {"Wait… The end came.", {"Wait… ", "The end came."}},
      {"Is it? No!", {"Is it? ", "No!"}},
      {"First line.\nSecond line.", {"First line.\n", "Second line."}},
      {"He was 5. 6 people came.", {"He was 5. ", "6 people came."}},
      {"Pi is 3.14. Next is e.", {"Pi is 3.14. ", "Next is e."}},
      {"It ended. \"Why?\" she asked.", {"It ended. ", "\"Why?\" she asked."}},
      {"It ended. (Then it began.)", {"It ended. ", "(Then it began.)"}},
      {"Ask. ¿Qué pasa?", {"Ask. ", "¿Qué pasa?"}},
      {"English first. 日本語の文", {"English first. ", "日本語の文"}},
      {"Done. Привет мир.", {"Done. ", "Привет мир."}},
      {"Done. Éclair time.", {"Done. ", "Éclair time."}},
      {"Done.\n- next item\n- last item", {"Done.\n", "- next item\n- last item"}},
  });
}

TEST(SentenceSplitterTest, ClosingQuotesAndBracketsStayWithTheirSentence) {
  expect_sentences({
      {"He said \"Go.\" Then he left.", {"He said \"Go.\" ", "Then he left."}},
      {"He said 'Go.' Then he left.", {"He said 'Go.' ", "Then he left."}},
      {"(It was late.) We slept.", {"(It was late.) ", "We slept."}},
      {"See [the note.] Next one.", {"See [the note.] ", "Next one."}},
      {"“Quoted.” Next one.", {"“Quoted.” ", "Next one."}},
      {"It’s ‘done.’ Next one.", {"It’s ‘done.’ ", "Next one."}},
      {"«Fin.» Suite ici.", {"«Fin.» ", "Suite ici."}},
      {"\"Really?!\") Yes.", {"\"Really?!\") ", "Yes."}},
  });
}

TEST(SentenceSplitterTest, WhitespaceAfterTheTerminatorBelongsToTheSentence) {
  expect_sentences({
      {"Ends here.  \t Next one.", {"Ends here.  \t ", "Next one."}},
      {"  Leading space. Next one.  ", {"  Leading space. ", "Next one.  "}},
      {"Trailing space.   ", {"Trailing space.   "}},
  });
}

TEST(SentenceSplitterTest, SplitsAfterCjkAndOtherScriptTerminatorsWithoutWhitespace) {
  expect_sentences({
      {"今日は晴れです。明日は雨です。", {"今日は晴れです。", "明日は雨です。"}},
      {"本当？はい！行こう。", {"本当？", "はい！", "行こう。"}},
      {"什么？！不知道。", {"什么？！", "不知道。"}},
      {"第一句．第二句．", {"第一句．", "第二句．"}},
      {"他说：“你好。”然后走了。", {"他说：“你好。”", "然后走了。"}},
      {"यह एक वाक्य है। यह दूसरा है।", {"यह एक वाक्य है। ", "यह दूसरा है।"}},
      {"هل أنت بخير؟ نعم أنا بخير.", {"هل أنت بخير؟ ", "نعم أنا بخير."}},
      {"هل أنت بخير؟نعم", {"هل أنت بخير؟", "نعم"}},
  });
}

TEST(SentenceSplitterTest, FullwidthDecimalPointDoesNotSplit) {
  expect_one_sentence({"価格は３．５ドルです。"});
}

TEST(SentenceSplitterTest, BlankLineIsAlwaysABoundary) {
  expect_sentences({
      {"# Heading\n\nBody text here", {"# Heading\n\n", "Body text here"}},
      {"item one\n\nitem two\n \n\titem three", {"item one\n\n", "item two\n \n\t", "item three"}},
      {"int x = 1;\n\nint y = 2;", {"int x = 1;\n\n", "int y = 2;"}},
      {"line one\r\n\r\nline two", {"line one\r\n\r\n", "line two"}},
      {"See e.g.\n\nthe next part", {"See e.g.\n\n", "the next part"}},
      {"it ends. \n\n lower case goes on", {"it ends. \n\n ", "lower case goes on"}},
      {"Title\u2029paragraph two", {"Title\u2029", "paragraph two"}},
  });
}

TEST(SentenceSplitterTest, SingleNewlinesInsideAParagraphDoNotSplit) {
  expect_one_sentence({"line one\nline two\nline three", "a list\r\nof lines\r\nwithout stops"});
}

TEST(SentenceSplitterTest, DoesNotSplitAfterAbbreviations) {
  expect_one_sentence({
      "Mr. Smith met Mrs. Jones and Ms. Lee.",
      "Dr. Who and Prof. Xavier arrived.",
      "John Smith Sr. and John Smith Jr. came.",
      "Bob Jones Jr. Visited us.",
      "He lives on St. Mark's Place.",
      "It was Apples vs. Oranges today.",
      "Bring pens, paper, etc. and some tea.",
      "Use a tool, e.g. Python or Rust.",
      "Use one, i.e. The best one.",
      "See Fig. 3 and cf. Table 2.",
      "It is No. 5 in Vol. 2 of the series.",
      "It takes approx. 5 minutes.",
      "He joined Acme Inc. Research last year.",
      "Acme Ltd. Group was sold.",
      "It happened on Jan. 5 and Dec. 24 each year.",
      "The U.S. Army and the U.K. Navy met.",
      "Smith et al. (2020) showed this.",
      "Work begins at 9 a.m. Monday.",
      "MR. SMITH and mr. Smith met.",
  });
}

TEST(SentenceSplitterTest, MaybeFinalAbbreviationSplitsBeforeACommonOpeningWord) {
  expect_sentences({
      {"She moved to the U.S. The next year she left.",
       {"She moved to the U.S. ", "The next year she left."}},
      {"He works at Acme Inc. He likes it.", {"He works at Acme Inc. ", "He likes it."}},
      {"Bring pens, etc. Then go home.", {"Bring pens, etc. ", "Then go home."}},
      {"He said No. Then he left.", {"He said No. ", "Then he left."}},
  });
}

TEST(SentenceSplitterTest, DoesNotSplitAfterInitials) {
  expect_one_sentence({
      "J. R. R. Tolkien wrote books.",
      "The author is J. K. Rowling.",
      "George W. Bush spoke.",
      "J. A. Smith wrote it.",
      "Л. Н. Толстой написал роман.",
  });
}

TEST(SentenceSplitterTest, DoesNotSplitInsideNumbersUrlsFileNamesOrCode) {
  expect_one_sentence({
      "Pi is 3.14 roughly.",
      "Use v1.2.3 now.",
      "Ping 192.168.0.1 please.",
      "Visit example.com/a.b today.",
      "Visit https://example.com/A.B?x=1.Y today.",
      "Call obj.method() then obj.Other().",
      "Open config.yaml and Main.cpp files.",
      "Hello .NET world.",
      "It costs $1,000.50 today.",
  });
}

TEST(SentenceSplitterTest, DoesNotSplitAfterEllipsisBeforeALowercaseWord) {
  expect_one_sentence({"Wait... what happened?", "Hmm… maybe not.", "So?! and then?"});
}

TEST(SentenceSplitterTest, DoesNotSplitBeforeALowercaseWord) {
  expect_one_sentence({"He asked why? no one knew.", "It ended. and then it went on.",
                       "Done. привет мир.", "Done. ñu time."});
}

TEST(SentenceSplitterTest, ListMarkerStaysWithItsItem) {
  expect_one_sentence({"1. First item", "Steps:\n1. First item\n2. Second item",
                       "  a. Indented item", "iv. Fourth point", "10. Tenth item"});
  expect_sentences({
      {"1. Buy milk.\n2. Buy eggs.", {"1. Buy milk.\n", "2. Buy eggs."}},
      {"In 1999. The year ended.", {"In 1999. ", "The year ended."}},
  });
}

TEST(SentenceSplitterTest, TextWithoutPunctuationIsOneSentence) {
  std::string many_words;
  for (int i = 0; i < 500; ++i) many_words += "Word" + std::to_string(i) + " ";
  expect_one_sentence({
      "for i in range(10) print(i) x = y + z",
      "int main() {\n  return a.b.c(d);\n}\n",
      many_words,
      "東京大阪京都名古屋札幌福岡",
  });
}

TEST(SentenceSplitterTest, MergesPiecesWithFewerThanTwoLettersOrDigits) {
  expect_sentences({
      {"!!! Hi.", {"!!! Hi."}},
      {"? Hello world.", {"? Hello world."}},
      {"Hello there. A.", {"Hello there. A."}},
      {"Ok. Fine.", {"Ok. ", "Fine."}},
      {"—\n\nReal text here.", {"—\n\nReal text here."}},
      {"x\n\ny", {"x\n\ny"}},
      {"....", {"...."}},
      {"   ", {"   "}},
      {"好。很好。", {"好。很好。"}},
      {"Intro.\n\n---\n\nBody.", {"Intro.\n\n", "---\n\nBody."}},
  });
}

TEST(SentenceSplitterTest, InvalidUtf8IsReadByteByByte) {
  expect_sentences({
      {"Bad \xff byte. Next \xc3 one.", {"Bad \xff byte. ", "Next \xc3 one."}},
      {"Cut \xe2\x82. \xac\xac More.", {"Cut \xe2\x82. \xac\xac More."}},
  });
}

TEST(SentenceSplitterTest, LongInputsSplitAsExpected) {
  std::string no_punctuation;
  while (no_punctuation.size() < 200000) no_punctuation += "lorem ipsum dolor ";
  EXPECT_EQ(split_sentences(no_punctuation), std::vector<size_t>{no_punctuation.size()});

  std::string lowercase_after_periods;
  for (int i = 0; i < 60000; ++i) lowercase_after_periods += "a. ";
  EXPECT_EQ(split_sentences(lowercase_after_periods),
            std::vector<size_t>{lowercase_after_periods.size()});

  std::string short_sentences;
  for (int i = 0; i < 50000; ++i) short_sentences += "Ab. ";
  const std::vector<size_t> ends = split_sentences(short_sentences);
  ASSERT_EQ(ends.size(), 50000u);
  EXPECT_EQ(ends.front(), 4u);
}

// Length of the valid UTF-8 sequence starting at text[pos], or 0 when none starts there.
// Written independently of the splitter's decoder to check it.
size_t valid_utf8_length_at(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(pos);
  size_t length = 0;
  uint8_t low = 0x80;
  uint8_t high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) length = 2;
  if (lead >= 0xE0 && lead <= 0xEF) length = 3;
  if (lead >= 0xF0 && lead <= 0xF4) length = 4;
  if (lead == 0xE0) low = 0xA0;
  if (lead == 0xED) high = 0x9F;
  if (lead == 0xF0) low = 0x90;
  if (lead == 0xF4) high = 0x8F;
  if (length == 0 || pos + length > text.size()) return 0;
  if (byte(pos + 1) < low || byte(pos + 1) > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if (byte(pos + i) < 0x80 || byte(pos + i) > 0xBF) return 0;
  }
  return length;
}

// Returns true if byte offset `cut` falls strictly inside a valid multi-byte UTF-8 sequence.
bool is_inside_utf8_sequence(std::string_view text, size_t cut) {
  for (size_t back = 1; back <= 3 && back <= cut; ++back) {
    if (valid_utf8_length_at(text, cut - back) > back) return true;
  }
  return false;
}

// Checks the invariants every result must satisfy.
void expect_invariants(const std::string& text) {
  const std::vector<size_t> ends = split_sentences(text);
  if (text.empty()) {
    EXPECT_TRUE(ends.empty());
    return;
  }
  ASSERT_FALSE(ends.empty());
  EXPECT_EQ(ends.back(), text.size());
  std::string rebuilt;
  size_t begin = 0;
  for (const size_t end : ends) {
    ASSERT_GT(end, begin);
    ASSERT_LE(end, text.size());
    EXPECT_FALSE(is_inside_utf8_sequence(text, end)) << "cut at byte " << end;
    rebuilt.append(text, begin, end - begin);
    begin = end;
  }
  EXPECT_EQ(rebuilt, text);
}

TEST(SentenceSplitterTest, InvariantsHoldOnGeneratedAndRealText) {
  const std::vector<std::string> samples = {
      "Mr. Smith went to Washington. He arrived at 5 p.m. The meeting was long!",
      "今日は晴れです。明日は雨です。「本当？」と彼は言った。",
      "यह एक वाक्य है। यह दूसरा है। هل أنت بخير؟ نعم.",
      "# Title\n\n1. First item.\n2. Second item.\n\n```\nx = a.b(c)\n```\n",
      "Привет. Как дела? Всё хорошо! Ελληνικά. Ναι.",
      "Emoji 😀. Next 👍🏽 one! Flags 🇯🇵? Yes.",
  };
  std::vector<std::string> vocabulary = {
      "word", "Word", "The", "Mr", "U.S", "e.g", "3.14",   "J", "a",      "日本",   "。",    "！",
      "？",   "．",   "।",   "؟",  ".",   ".",   "!",      "?", "...",    "…",      " ",     " ",
      " ",    "\t",   "\"",  "'",  ")",   "(",   "”",      "“", "»",      "«",      "1",     "iv",
      "-",    "*",    "#",   "😀",  "é",   "É",   "Привет", "д", "\u2029", "\u00a0", "\u3000"};
  // Stray, truncated, surrogate, overlong and out-of-range UTF-8.
  const std::vector<std::string> invalid_utf8 = {
      "\xff",         "\x80",     "\xc3",         "\xe2\x82",         "\xf0\x9f",
      "\xed\xa0\x80", "\xc0\xaf", "\xe0\x80\x80", "\xf4\x90\x80\x80", "\xa9"};
  vocabulary.insert(vocabulary.end(), invalid_utf8.begin(), invalid_utf8.end());
  for (const char* line_break : {"\n", "\n\n", "\r\n"}) vocabulary.push_back(line_break);
  vocabulary.push_back(std::string(1, '\0'));

  std::mt19937 random(20260101);
  std::vector<std::string> texts = samples;
  for (int i = 0; i < 150; ++i) {  // random bytes
    std::string text(random() % 200, '\0');
    for (char& c : text) c = static_cast<char>(random() % 256);
    texts.push_back(text);
  }
  for (int i = 0; i < 250; ++i) {  // token soup, including invalid UTF-8 pieces
    std::string text;
    const size_t tokens = random() % 80;
    for (size_t t = 0; t < tokens; ++t) text += vocabulary[random() % vocabulary.size()];
    texts.push_back(text);
  }
  for (int i = 0; i < 50; ++i) {  // real text with random cuts and concatenations
    const std::string& first = samples[random() % samples.size()];
    const std::string& second = samples[random() % samples.size()];
    texts.push_back(first.substr(random() % first.size()) + second.substr(0, random() % 40));
  }

  for (const std::string& text : texts) {
    SCOPED_TRACE("text size " + std::to_string(text.size()));
    expect_invariants(text);
  }
}

}  // namespace
}  // namespace lmk
