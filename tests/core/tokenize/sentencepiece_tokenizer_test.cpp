#include "core/tokenize/sentencepiece_tokenizer.h"

#include <gtest/gtest.h>

#include <random>

#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::TempDir;

// A few thousand varied English-like lines for a small tokenizer.
std::string training_text() {
  const char* words[] = {"landmark",  "pooling",   "token",     "sentence",    "document",
                         "retrieval", "embedding", "attention", "position",    "the",
                         "a",         "of",        "long",      "short",       "model",
                         "train",     "evaluate",  "chunk",     "granularity", "encoder",
                         "query",     "passage",   "über",      "naïve"};
  std::mt19937 rng(1);
  std::string text;
  for (int line = 0; line < 3000; ++line) {
    const int n = 5 + static_cast<int>(rng() % 15);
    for (int i = 0; i < n; ++i)
      text += std::string(i ? " " : "") + words[rng() % (sizeof words / sizeof *words)];
    text += ".\n";
  }
  return text;
}

TEST(SentencePieceTest, TrainsLoadsEncodesAndDecodes) {
  TempDir dir;
  SentencePieceTrainOptions options;
  options.inputs = {dir.write("corpus.txt", training_text())};
  options.output_model = (dir.path() / "tok.model").string();
  options.vocab_size = 400;  // byte fallback alone takes 256 pieces
  options.threads = 1;
  for (const char* type : {"unigram", "bpe"}) {
    options.model_type = type;
    train_sentencepiece(options);
    const auto t = load_tokenizer(options.output_model);
    SCOPED_TRACE(type);
    // The encoder layout: <pad>=0 <unk>=1 [CLS]=2 [SEP]=3 [MASK]=4.
    EXPECT_EQ(t->special_tokens().pad, 0);
    EXPECT_EQ(t->special_tokens().unk, 1);
    EXPECT_EQ(t->special_tokens().cls, 2);
    EXPECT_EQ(t->special_tokens().sep, 3);
    EXPECT_EQ(t->special_tokens().mask, 4);
    EXPECT_TRUE(t->is_special(2));
    EXPECT_FALSE(t->is_special(10));
    const std::string text = "the landmark pooling of a long document — 漢字";
    const Encoding e = t->encode(text);
    ASSERT_FALSE(e.ids.empty());
    // Byte fallback: nothing is unknown, and decoding gives the text back.
    for (int32_t id : e.ids) EXPECT_NE(id, 1);
    EXPECT_EQ(t->decode(e.ids), text);
    // Spans tile the text in order.
    EXPECT_EQ(e.spans.back().end, text.size());
    for (size_t i = 1; i < e.spans.size(); ++i) EXPECT_LE(e.spans[i - 1].begin, e.spans[i].begin);
    const Encoding wrapped = t->add_special_tokens(e);
    EXPECT_EQ(wrapped.ids.front(), 2);
    EXPECT_EQ(wrapped.ids.back(), 3);
    EXPECT_EQ(wrapped.ids.size(), e.ids.size() + 2);
  }
}

TEST(SentencePieceTest, BadFilesAreInputErrors) {
  TempDir dir;
  EXPECT_THROW(load_tokenizer(dir.write("junk.model", "this is not a protobuf")), InputError);
  EXPECT_THROW(load_tokenizer((dir.path() / "missing.model").string()), InputError);
  EXPECT_THROW(load_tokenizer(dir.path().string()), InputError) << "a folder without a tokenizer";
  SentencePieceTrainOptions options;
  options.inputs = {dir.write("tiny.txt", "a\n")};
  options.output_model = (dir.path() / "x.model").string();
  options.vocab_size = 5;
  EXPECT_THROW(train_sentencepiece(options), InputError);
  options.vocab_size = 100;
  options.model_type = "wordpiece";
  EXPECT_THROW(train_sentencepiece(options), InputError);
}

}  // namespace
}  // namespace lmk
