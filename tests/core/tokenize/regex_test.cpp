// Regex (core/tokenize/regex.cpp): Oniguruma patterns as tokenizer.json writes them (Unicode
// classes, lookahead, inline flags), all matches as byte ranges, empty matches as the onig
// crate reports them, compile errors naming the field, and one compiled pattern shared by
// threads.
#include "core/tokenize/regex.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/util/error.h"

namespace lmk {
namespace {

using Ranges = std::vector<std::pair<size_t, size_t>>;

// GPT-2's pre-tokenizer pattern (tokenizer.json of gpt2).
const char* const kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Matches are byte ranges, left to right, not overlapping; \p{L} takes letters of any script
// (é and ö are two bytes each).
TEST(RegexTest, MatchesAreByteRangesOfUnicodeClasses) {
  const Regex letters(R"(\p{L}+)", "test");
  EXPECT_EQ(letters.find_all("héllo, wörld 42"), (Ranges{{0, 6}, {8, 14}}));
  EXPECT_EQ(letters.find_all("42 !"), Ranges{});
  const Regex digits(R"(\p{N}+)", "test");
  EXPECT_EQ(digits.find_all("a1b22٣"), (Ranges{{1, 2}, {3, 7}})) << "٣ is an Arabic-Indic digit";
}

// The GPT-2 pattern: contractions, a space kept with the word after it, and the negative
// lookahead that leaves the last space of a run to the next word.
TEST(RegexTest, Gpt2PatternWithLookahead) {
  const Regex gpt2(kGpt2, "test");
  // "I" "'m" " " " fine" "!" "   " (trailing spaces: \s+ at the end)
  EXPECT_EQ(gpt2.find_all("I'm  fine!   "),
            (Ranges{{0, 1}, {1, 3}, {3, 4}, {4, 9}, {9, 10}, {10, 13}}));
  const Regex insensitive("(?i:'s|'t)", "test");
  EXPECT_EQ(insensitive.find_all("IT'S it's"), (Ranges{{2, 4}, {7, 9}}));
}

// Empty matches are kept, except one where the previous match ended; the search then moves on
// by a whole character, never into the middle of a UTF-8 sequence.
TEST(RegexTest, EmptyMatchesAsTheOnigCrateReportsThem) {
  const Regex xs("x*", "test");
  EXPECT_EQ(xs.find_all("aé"), (Ranges{{0, 0}, {1, 1}, {3, 3}}));
  EXPECT_EQ(xs.find_all(""), (Ranges{{0, 0}}));
  const Regex as("a*", "test");
  EXPECT_EQ(as.find_all("baac"), (Ranges{{0, 0}, {1, 3}, {4, 4}}))
      << "no empty match at 3, right after aa";
}

// A pattern that does not compile is an InputError naming where it came from and the pattern.
TEST(RegexTest, InvalidPatternsNameTheField) {
  try {
    Regex bad("(unclosed", "tokenizer.json: pre_tokenizer.pattern.Regex");
    ADD_FAILURE() << "compiled";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("tokenizer.json: pre_tokenizer.pattern.Regex: invalid regex "
                            "/(unclosed/: ",
                            0),
              0u)
        << message;
    EXPECT_GT(message.size(), std::string("tokenizer.json: pre_tokenizer.pattern.Regex: invalid "
                                          "regex /(unclosed/: ")
                                  .size())
        << "Oniguruma's reason follows";
  }
  EXPECT_THROW(Regex(R"(\p{NoSuchClass})", "x"), InputError);
}

// One compiled pattern searched from several threads at once gives every thread the answer of
// a single thread (each call has its own match state).
TEST(RegexTest, OnePatternServesManyThreads) {
  const Regex gpt2(kGpt2, "test");
  std::string text;
  for (int i = 0; i < 50; ++i) text += "It's the café's 42nd   run, isn't it? ";
  const Ranges expected = gpt2.find_all(text);
  ASSERT_GT(expected.size(), 400u);
  std::vector<Ranges> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) results[t] = gpt2.find_all(text);
    });
  }
  for (auto& thread : threads) thread.join();
  for (const Ranges& r : results) EXPECT_EQ(r, expected);
}

}  // namespace
}  // namespace lmk
