// Pins the behaviours of the tokenizer.json pipeline that the parity test (tests/parity) can
// only catch in bulk: merge order, byte fallback, WordPiece failure, added-token stripping,
// split behaviours, normalizers, templates, decoding and error messages.
#include "core/tokenize/hf_tokenizer.h"

#include <gtest/gtest.h>

#include "core/tokenize/hf_components.h"
#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::TempDir;

json tokenizer_json(json model, json normalizer = nullptr, json pre_tokenizer = nullptr,
                    json post_processor = nullptr, json decoder = nullptr,
                    json added = json::array()) {
  return {{"version", "1.0"},
          {"added_tokens", added},
          {"normalizer", normalizer},
          {"pre_tokenizer", pre_tokenizer},
          {"post_processor", post_processor},
          {"decoder", decoder},
          {"model", model}};
}

std::vector<std::string> tokens_of(const Tokenizer& t, const std::string& text) {
  std::vector<std::string> out;
  for (int32_t id : t.encode(text).ids) out.push_back(t.id_to_token(id));
  return out;
}

using Strings = std::vector<std::string>;

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

TEST(BertNormalizerTest, CleansStripsAccentsLowercasesAndSplitsChinese) {
  TempDir dir;
  json vocab = {{"[UNK]", 0}, {"hello", 1}, {"cafe", 2}, {"世", 3}, {"界", 4}, {"!", 5}};
  json model = {{"type", "WordPiece"}, {"vocab", vocab}, {"unk_token", "[UNK]"}};
  json norm = {{"type", "BertNormalizer"},
               {"clean_text", true},
               {"handle_chinese_chars", true},
               {"strip_accents", nullptr},
               {"lowercase", true}};
  auto t = testing::load_json_tokenizer(
      dir, tokenizer_json(model, norm, {{"type", "BertPreTokenizer"}}));
  EXPECT_EQ(tokens_of(*t, "HeLLo\x01 Café世界!"), (Strings{"hello", "cafe", "世", "界", "!"}));
  // Spans survive normalization: "Café" is bytes 7..12 of the original.
  const Encoding e = t->encode("HeLLo\x01 Café世界!");
  EXPECT_EQ(e.spans[1].begin, 7u);
  EXPECT_EQ(e.spans[1].end, 12u);
  // Characters assigned after Unicode 8.0 are not punctuation for BERT (U+2E4F, Unicode 11).
  EXPECT_EQ(tokens_of(*t, "hello\u2E4F"), (Strings{"[UNK]"}));
  EXPECT_EQ(tokens_of(*t, "hello\u2E2E"), (Strings{"hello", "[UNK]"}));
}

TEST(AddedTokensTest, StripFlagsSingleWordAndNormalizedMatching) {
  TempDir dir;
  json vocab = {{"[UNK]", 0}, {"a", 1}, {"b", 2}};
  json model = {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "[UNK]"}};
  json added = json::array();
  added.push_back({{"id", 10},
                   {"content", "<mask>"},
                   {"lstrip", true},
                   {"rstrip", true},
                   {"normalized", false},
                   {"special", true},
                   {"single_word", false}});
  added.push_back({{"id", 11},
                   {"content", "xy"},
                   {"single_word", true},
                   {"normalized", false},
                   {"special", false},
                   {"lstrip", false},
                   {"rstrip", false}});
  added.push_back({{"id", 12},
                   {"content", "HI"},
                   {"normalized", true},
                   {"special", false},
                   {"single_word", false},
                   {"lstrip", false},
                   {"rstrip", false}});
  auto t = testing::load_json_tokenizer(
      dir, tokenizer_json(model, {{"type", "Lowercase"}}, {{"type", "WhitespaceSplit"}}, nullptr,
                          nullptr, added));
  EXPECT_EQ(t->encode("a   <mask>   b").ids, (std::vector<int32_t>{1, 10, 2}));
  const Encoding e = t->encode("a   <mask>   b");
  EXPECT_EQ(e.spans[1].begin, 1u) << "lstrip takes the spaces before";
  EXPECT_EQ(e.spans[1].end, 13u) << "rstrip takes the spaces after";
  EXPECT_EQ(t->encode("a xy b").ids, (std::vector<int32_t>{1, 11, 2}));
  EXPECT_EQ(t->encode("axy").ids, (std::vector<int32_t>{0}))
      << "single_word does not match inside a word";
  // A normalized token matches the normalized text: "Hi" lowercases to "hi" = normalized "HI".
  EXPECT_EQ(t->encode("a Hi").ids, (std::vector<int32_t>{1, 12}));
  EXPECT_TRUE(t->is_special(10));
  EXPECT_FALSE(t->is_special(11));
  EXPECT_EQ(t->decode({1, 10, 2}, true), "ab");
}

TEST(SplitTest, EveryBehaviour) {
  const auto dash = hf::Pattern::literal("-");
  auto split = [&](hf::SplitBehavior b, bool invert = false) {
    std::vector<NormalizedString> out;
    hf::split_normalized(NormalizedString::from_original("a-b--c", 0), dash, b, invert, out);
    Strings pieces;
    for (const auto& p : out) pieces.push_back(p.text);
    return pieces;
  };
  EXPECT_EQ(split(hf::SplitBehavior::Removed), (Strings{"a", "b", "c"}));
  EXPECT_EQ(split(hf::SplitBehavior::Isolated), (Strings{"a", "-", "b", "-", "-", "c"}));
  EXPECT_EQ(split(hf::SplitBehavior::MergedWithPrevious), (Strings{"a-", "b-", "-", "c"}));
  EXPECT_EQ(split(hf::SplitBehavior::MergedWithNext), (Strings{"a", "-b", "-", "-c"}));
  EXPECT_EQ(split(hf::SplitBehavior::Contiguous), (Strings{"a", "-", "b", "--", "c"}));
  EXPECT_EQ(split(hf::SplitBehavior::Removed, true), (Strings{"-", "-", "-"}));
}

TEST(MetaspaceTest, PrependSchemes) {
  TempDir dir;
  json vocab = {{"<unk>", 0}, {"▁a", 1}, {"▁b", 2}, {"a", 3}, {"<s>", 4}};
  json model = {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "<unk>"}};
  json added =
      json::array({{{"id", 4}, {"content", "<s>"}, {"normalized", false}, {"special", true}}});
  auto with = [&](const char* scheme, const std::string& name) {
    json pre = {
        {"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", scheme}, {"split", true}};
    return testing::load_json_tokenizer(
        dir,
        tokenizer_json(model, nullptr, pre, nullptr,
                       {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", scheme}},
                       added),
        name);
  };
  auto first = with("first", "first.json");
  auto always = with("always", "always.json");
  auto never = with("never", "never.json");
  EXPECT_EQ(tokens_of(*first, "a b"), (Strings{"▁a", "▁b"}));
  EXPECT_EQ(tokens_of(*first, "<s>a"), (Strings{"<s>", "a"}))
      << "only the text's first piece gets ▁";
  EXPECT_EQ(tokens_of(*always, "<s>a"), (Strings{"<s>", "▁a"}));
  EXPECT_EQ(tokens_of(*never, "a b"), (Strings{"a", "▁b"}));
  EXPECT_EQ(first->decode(first->encode("a b").ids), "a b");
}

TEST(PostProcessorTest, TemplatesAndSpecialTokenRoles) {
  TempDir dir;
  auto t = testing::load_json_tokenizer(dir, testing::word_level_json(10));
  const Encoding e = t->add_special_tokens(t->encode("w1 w2"));
  EXPECT_EQ(e.ids, (std::vector<int32_t>{2, 6, 7, 3}));
  EXPECT_EQ(t->special_tokens().cls, 2);
  EXPECT_EQ(t->special_tokens().sep, 3);
  EXPECT_EQ(t->special_tokens().pad, 0);
  EXPECT_EQ(t->special_tokens().mask, 4);
  // A BOS-only template (Llama / Gemma): <s> is CLS, no SEP; EOS names the landmark fallback.
  json j = testing::word_level_json(10);
  j["model"]["vocab"]["<s>"] = 100;
  j["model"]["vocab"]["</s>"] = 101;
  j["post_processor"] = json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "special_tokens": {"<s>": {"id": "<s>", "ids": [100], "tokens": ["<s>"]}}})");
  j["added_tokens"] = json::array();
  j["model"]["vocab"].erase("[CLS]");
  j["model"]["vocab"].erase("[SEP]");
  auto u = testing::load_json_tokenizer(dir, j, "bos.json");
  EXPECT_EQ(u->add_special_tokens(u->encode("w1")).ids, (std::vector<int32_t>{100, 6}));
  EXPECT_EQ(u->special_tokens().cls, 100);
  EXPECT_FALSE(u->special_tokens().sep.has_value());
  EXPECT_EQ(u->special_tokens().eos, 101);
}

TEST(HfTokenizerErrorsTest, NameTheFileAndField) {
  TempDir dir;
  auto expect_error = [&](const std::string& content, const std::string& fragment) {
    const std::string path = dir.write("bad.json", content);
    try {
      load_tokenizer(path);
      ADD_FAILURE() << "accepted: " << content.substr(0, 80);
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path), std::string::npos) << message;
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  };
  json good = testing::word_level_json(3);
  expect_error("{\"model\": ", "invalid JSON");
  expect_error("[1, 2]", "expected");
  expect_error("{}", "model");
  json j = good;
  j["normalizer"] = {{"type", "Frobnicate"}};
  expect_error(j.dump(), "normalizer.type");
  j = good;
  j["pre_tokenizer"] = {
      {"type", "Split"}, {"pattern", {{"Regex", "(unclosed"}}}, {"behavior", "Isolated"}};
  expect_error(j.dump(), "pre_tokenizer.pattern");
  j = good;
  j["model"] = {{"type", "BPE"}, {"vocab", {{"a", 0}, {"b", 1}}}, {"merges", {"a c"}}};
  expect_error(j.dump(), "model.merges[0]");
  j["model"]["merges"] = {"ab"};
  expect_error(j.dump(), "model.merges[0]");
  // A dropout that is not a number (found by the tokenizer.json fuzzer: it was an uncaught
  // JSON type error) or is above 0.
  j["model"]["merges"] = json::array();
  j["model"]["dropout"] = true;
  expect_error(j.dump(), "model.dropout");
  j["model"]["dropout"] = 0.1;
  expect_error(j.dump(), "model.dropout");
  j = good;
  j["model"]["vocab"]["w0"] = "five";
  expect_error(j.dump(), "model.vocab");
  j = good;
  j["added_tokens"][0]["id"] = "x";
  expect_error(j.dump(), "added_tokens[0].id");
  j = good;
  j["added_tokens"][0]["id"] = 4294967297LL;  // must not wrap around to 1
  expect_error(j.dump(), "added_tokens[0].id");
  j = good;
  j["post_processor"]["special_tokens"]["[CLS]"]["ids"] = {99999999999LL};
  expect_error(j.dump(), "special_tokens.[CLS].ids[0]");
  expect_error(R"({"model": {"type": "WordLevel", "vocab": {"a": 1e999}}})", "invalid JSON");
  j = good;
  j["model"]["type"] = "Unigram";
  expect_error(j.dump(), "Unigram");
  expect_error(std::string("{\"model\": {\"type\": \"WordLevel\", \"vocab\": {\"\xff\": 0}}}"),
               "invalid JSON");
}

TEST(HfTokenizerTest, RejectsInvalidUtf8Text) {
  TempDir dir;
  auto t = testing::load_json_tokenizer(dir, testing::word_level_json(3));
  EXPECT_THROW(t->encode("w0 \xC3\x28"), InputError);
  EXPECT_TRUE(t->encode("").ids.empty());
}

TEST(HfTokenizerErrorsTest, DeeplyNestedJsonIsAnErrorNotAStackOverflow) {
  // 100k nested arrays would overflow the stack when nlohmann copies or destroys them.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  try {
    parse_hf_tokenizer(deep, "deep.json");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("deep.json: JSON nested deeper than 100 levels"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lmk
