// The tokenizer.json models (core/tokenize/hf_models.cpp): BPE merge order, byte fallback and
// byte-level round trips, WordPiece's greedy longest match and its unknown words.
#include "core/tokenize/hf_models.h"

#include <gtest/gtest.h>

#include "core/tokenize/hf_components.h"
#include "core/tokenize/hf_tokenizer.h"
#include "core/util/error.h"
#include "tests/support/hf_tokenizer_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::Strings;
using testing::TempDir;
using testing::tokenizer_json;
using testing::tokens_of;

TEST(BpeTest, MergesApplyByRankNotLeftToRight) {
  TempDir dir;
  json model = {{"type", "BPE"},
                {"vocab", {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}, {"abc", 5}}},
                {"merges", {"b c", "a b", "ab c"}}};
  auto t = testing::load_json_tokenizer(dir, tokenizer_json(model));
  // "b c" has rank 0, so "abc" becomes a + bc, which has no merge.
  EXPECT_EQ(tokens_of(*t, "abc"), (Strings{"a", "bc"}));
  model["merges"] = json::array(
      {json::array({"a", "b"}), json::array({"ab", "c"}), json::array({"b", "c"})});  // pair form
  auto u = testing::load_json_tokenizer(dir, tokenizer_json(model), "pairs.json");
  EXPECT_EQ(tokens_of(*u, "abc"), (Strings{"abc"}));
  // Equal ranks at several positions: leftmost first.
  EXPECT_EQ(tokens_of(*u, "abab"), (Strings{"ab", "ab"}));
}

TEST(BpeTest, APairListedTwiceTakesItsLastRank) {
  // Hugging Face collects the merge list into a map, so a later duplicate overwrites the
  // earlier rank (npm tokenizers 0.23.2 encodes "abc" with these merges as a + bc).
  TempDir dir;
  json model = {{"type", "BPE"},
                {"vocab", {{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}}},
                {"merges", {"a b", "b c", "a b"}}};
  auto t = testing::load_json_tokenizer(dir, tokenizer_json(model));
  EXPECT_EQ(tokens_of(*t, "abc"), (Strings{"a", "bc"}));
  EXPECT_EQ(tokens_of(*t, "ab"), (Strings{"ab"}));
}

TEST(BpeTest, IgnoreMergesTakesWholeWordsFromTheVocabulary) {
  TempDir dir;
  json model = {{"type", "BPE"},
                {"vocab", {{"a", 0}, {"b", 1}, {"c", 2}, {"bc", 3}, {"abc", 4}}},
                {"merges", {"b c"}},
                {"ignore_merges", true}};
  auto t = testing::load_json_tokenizer(dir, tokenizer_json(model));
  EXPECT_EQ(tokens_of(*t, "abc"), (Strings{"abc"}));
  EXPECT_EQ(tokens_of(*t, "cbc"), (Strings{"c", "bc"}));
}

TEST(BpeTest, ByteFallbackAndFusedUnknowns) {
  TempDir dir;
  json vocab = {{"<unk>", 0}, {"a", 1}, {"<0xE2>", 2}, {"<0x82>", 3}, {"<0xAC>", 4}};
  json model = {{"type", "BPE"},        {"vocab", vocab},        {"merges", json::array()},
                {"unk_token", "<unk>"}, {"byte_fallback", true}, {"fuse_unk", true}};
  auto t = testing::load_json_tokenizer(dir, tokenizer_json(model));
  EXPECT_EQ(tokens_of(*t, "a€a"), (Strings{"a", "<0xE2>", "<0x82>", "<0xAC>", "a"}));
  // "é" (C3 A9) has no byte tokens: unknown; two unknowns in a row fuse into one.
  EXPECT_EQ(tokens_of(*t, "aééa"), (Strings{"a", "<unk>", "a"}));
  model["fuse_unk"] = false;
  auto u = testing::load_json_tokenizer(dir, tokenizer_json(model), "nofuse.json");
  EXPECT_EQ(tokens_of(*u, "aééa"), (Strings{"a", "<unk>", "<unk>", "a"}));
}

TEST(BpeTest, ByteLevelRoundTripsAnyText) {
  TempDir dir;
  json vocab = json::object();
  const auto& alphabet = hf::byte_level_alphabet();
  for (int b = 0; b < 256; ++b) vocab[alphabet[static_cast<size_t>(b)]] = b;
  vocab["Ġw"] = 256;
  json model = {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"Ġ w"}}};
  json pre = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  auto t = testing::load_json_tokenizer(
      dir, tokenizer_json(model, nullptr, pre, {{"type", "ByteLevel"}}, {{"type", "ByteLevel"}}));
  EXPECT_EQ(tokens_of(*t, "a w"), (Strings{"a", "Ġw"}));
  const std::string text = "Grüße, 世界! \t\n  naïve 🤷🏽‍♀️ x";
  EXPECT_EQ(t->decode(t->encode(text).ids), text);
  // Spans are byte ranges of the original text.
  const Encoding e = t->encode("ü");
  ASSERT_EQ(e.ids.size(), 2u);
  EXPECT_EQ(e.spans[0].begin, 0u);
  EXPECT_EQ(e.spans[1].end, 2u);
}

TEST(WordPieceTest, GreedyLongestMatchAndUnknownWords) {
  TempDir dir;
  json vocab = {{"[UNK]", 0}, {"un", 1}, {"##aff", 2}, {"##able", 3}, {"a", 4}, {"##b", 5}};
  json model = {{"type", "WordPiece"},
                {"vocab", vocab},
                {"unk_token", "[UNK]"},
                {"continuing_subword_prefix", "##"},
                {"max_input_chars_per_word", 10}};
  auto t = testing::load_json_tokenizer(
      dir, tokenizer_json(model, nullptr, {{"type", "BertPreTokenizer"}}));
  EXPECT_EQ(tokens_of(*t, "unaffable"), (Strings{"un", "##aff", "##able"}));
  EXPECT_EQ(tokens_of(*t, "unaffablex"), (Strings{"[UNK]"}))
      << "one failing piece makes the word unknown";
  EXPECT_EQ(tokens_of(*t, "abbbbbbbbbb"), (Strings{"[UNK]"}))
      << "longer than max_input_chars_per_word";
  Strings expected(10, "##b");
  expected[0] = "a";
  EXPECT_EQ(tokens_of(*t, "abbbbbbbbb"), expected);
}

}  // namespace
}  // namespace lmk
