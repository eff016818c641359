// The tokenizer.json components (core/tokenize/hf_components.cpp): the BERT normalizer, the
// split behaviours, Metaspace's prepend schemes and the post-processor's templates.
#include "core/tokenize/hf_components.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lmk
