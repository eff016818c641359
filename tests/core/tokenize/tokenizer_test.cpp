// What every tokenizer shares (core/tokenize/tokenizer.cpp): load_tokenizer's choice of loader
// for a file or a model folder, with the folder's tokenizer_config.json; wrap_encoding and
// add_special_tokens; the UTF-8 check.
#include "core/tokenize/tokenizer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// The message of the InputError load_tokenizer throws ("" when it loads).
std::string load_error(const std::string& path) {
  try {
    load_tokenizer(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A tokenizer.json loads as a file or through the folder holding it, with the same ids; a
// folder's tokenizer.json comes before a sentencepiece model beside it.
TEST(TokenizerTest, LoadsATokenizerJsonOrItsFolder) {
  TempDir dir;
  const std::string json = testing::word_level_json(3).dump();
  const std::string file = dir.write("tokenizer.json", json);
  dir.write("tokenizer.model", "not a sentencepiece model");
  for (const std::string& path : {file, dir.path().string()}) {
    const auto t = load_tokenizer(path);
    EXPECT_EQ(t->encode("w0 w2 x").ids, (std::vector<int32_t>{5, 7, 1})) << path;
  }
  EXPECT_EQ(load_tokenizer(dir.write("other-name.json", json))->encode("w1").ids,
            std::vector<int32_t>{6});
}

// The tokenizer_config.json beside a tokenizer.json names the special tokens, whether the
// folder or the file is given; a JSON file of another name does not read it.
TEST(TokenizerTest, TokenizerConfigBesideNamesTheSpecialTokens) {
  TempDir dir;
  const std::string json = testing::word_level_json(3).dump();
  const std::string file = dir.write("tokenizer.json", json);
  dir.write("tokenizer_config.json", R"({"mask_token": "w1", "pad_token": {"content": "w2"}})");
  for (const std::string& path : {file, dir.path().string()}) {
    const auto t = load_tokenizer(path);
    EXPECT_EQ(t->special_tokens().mask, 6) << path;
    EXPECT_EQ(t->special_tokens().pad, 7) << path;
    EXPECT_EQ(t->special_tokens().cls, 2) << path << ": [CLS] by its well-known name";
  }
  const auto other = load_tokenizer(dir.write("other-name.json", json));
  EXPECT_EQ(other->special_tokens().mask, 4) << "[MASK]: no config read";
  EXPECT_EQ(other->special_tokens().pad, 0);
}

// A folder without tokenizer.json takes tokenizer.model, spiece.model or
// sentencepiece.bpe.model (the sentencepiece loader's error shows it was chosen), a file ending
// in .model is sentencepiece; nothing usable is an error naming the path.
TEST(TokenizerTest, ChoosesTheLoaderAndNamesWhatIsMissing) {
  for (const char* name : {"tokenizer.model", "spiece.model", "sentencepiece.bpe.model"}) {
    TempDir dir;
    const std::string model = dir.write(name, "not a sentencepiece model");
    const std::string error = load_error(dir.path().string());
    EXPECT_NE(error.find(model + ": not a valid sentencepiece model"), std::string::npos) << error;
  }
  TempDir dir;
  const std::string model = dir.write("x.model", "not a sentencepiece model");
  EXPECT_NE(load_error(model).find(model + ": not a valid sentencepiece model"), std::string::npos);
  EXPECT_EQ(
      load_error(dir.path().string()),
      dir.path().string() + ": folder holds no tokenizer.json, tokenizer.model or spiece.model");
  const std::string missing = (dir.path() / "missing.json").string();
  EXPECT_EQ(load_error(missing), missing + ": no such file or folder");
}

// wrap_encoding puts the prefix and suffix ids around the content; inserted tokens get empty
// spans at the content's first and last byte (at 0 for no content).
TEST(TokenizerTest, WrapEncodingGivesInsertedTokensEmptySpans) {
  Encoding content;
  content.ids = {10, 11};
  content.spans = {{2, 5}, {6, 9}};
  const Encoding wrapped = wrap_encoding(content, {1}, {2, 3});
  EXPECT_EQ(wrapped.ids, (std::vector<int32_t>{1, 10, 11, 2, 3}));
  ASSERT_EQ(wrapped.spans.size(), 5u);
  const std::vector<std::pair<uint32_t, uint32_t>> expected = {
      {2, 2}, {2, 5}, {6, 9}, {9, 9}, {9, 9}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(wrapped.spans[i].begin, expected[i].first) << i;
    EXPECT_EQ(wrapped.spans[i].end, expected[i].second) << i;
  }
  const Encoding empty = wrap_encoding({}, {1}, {2});
  EXPECT_EQ(empty.ids, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(empty.spans[0].begin, 0u);
  EXPECT_EQ(empty.spans[1].end, 0u);
  EXPECT_EQ(wrap_encoding(content, {}, {}).ids, content.ids);
}

// add_special_tokens wraps content in the tokenizer's template ([CLS] ... [SEP]), the
// inserted tokens placed at the text's ends.
TEST(TokenizerTest, AddSpecialTokensWrapsInTheTemplate) {
  TempDir dir;
  const auto t = testing::load_json_tokenizer(dir, testing::word_level_json(3));
  EXPECT_EQ(t->sequence_template().prefix, std::vector<int32_t>{2});
  EXPECT_EQ(t->sequence_template().suffix, std::vector<int32_t>{3});
  const Encoding e = t->add_special_tokens(t->encode(" w0 w1 "));
  EXPECT_EQ(e.ids, (std::vector<int32_t>{2, 5, 6, 3}));
  EXPECT_EQ(e.spans.front().begin, 1u);
  EXPECT_EQ(e.spans.front().end, 1u);
  EXPECT_EQ(e.spans[1].begin, 1u);
  EXPECT_EQ(e.spans[2].end, 6u);
  EXPECT_EQ(e.spans.back().begin, 6u);
  EXPECT_EQ(e.spans.back().end, 6u);
}

// require_valid_utf8 accepts UTF-8 and names the first bad byte's offset otherwise: a lone
// continuation byte, an overlong form, a surrogate, a sequence cut short.
TEST(TokenizerTest, RequireValidUtf8NamesTheFirstBadByte) {
  EXPECT_NO_THROW(require_valid_utf8("plain, café, 漢字, 😀", "text"));
  EXPECT_NO_THROW(require_valid_utf8("", "text"));
  auto error = [](const std::string& text) {
    try {
      require_valid_utf8(text, "doc 3");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("ab\x80"), "doc 3: invalid UTF-8 at byte 2");
  EXPECT_EQ(error("\xC0\xAF"), "doc 3: invalid UTF-8 at byte 0");
  EXPECT_EQ(error("x\xED\xA0\x80"), "doc 3: invalid UTF-8 at byte 1");
  EXPECT_EQ(error("ok \xE2\x82"), "doc 3: invalid UTF-8 at byte 3");
  EXPECT_EQ(error("é\xC3\x28"), "doc 3: invalid UTF-8 at byte 2");
}

}  // namespace
}  // namespace lmk
