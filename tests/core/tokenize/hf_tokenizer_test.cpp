// Pins the behaviours of the tokenizer.json pipeline as a whole that the parity test
// (tests/parity) can only catch in bulk: added-token stripping and error messages (the models'
// in hf_models_test, the normalizers', pre-tokenizers' and templates' in hf_components_test).
#include "core/tokenize/hf_tokenizer.h"

#include <gtest/gtest.h>

#include "core/tokenize/hf_components.h"
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
