#include "core/tokenize/landmark.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include <set>

#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::TempDir;

constexpr int32_t kCls = 2;
constexpr int32_t kSep = 3;

class LandmarkTest : public ::testing::Test {
 protected:
  LandmarkTest() : tokenizer_(testing::load_json_tokenizer(dir_, testing::word_level_json())) {}

  LandmarkTokenizer make(const std::string& spec, size_t max_length = 0, uint64_t seed = 0) {
    LandmarkOptions options;
    options.spec = LandmarkSpec::parse(spec);
    options.max_length = max_length;
    options.seed = seed;
    return LandmarkTokenizer(*tokenizer_, options);
  }

  TempDir dir_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

// Checks the invariants every chunked arrangement must satisfy and returns the chunk sizes.
std::vector<size_t> check_chunked(const TokenizedText& t, const Encoding& content,
                                  int32_t landmark) {
  EXPECT_EQ(t.ids.size(), t.token_offsets.size());
  EXPECT_EQ(t.ids.size(), t.spans.size());
  EXPECT_EQ(t.ids.front(), kCls);
  std::vector<int32_t> kept;
  std::vector<size_t> chunks;
  size_t current = 0;
  std::set<int32_t> pools(t.pool_positions.begin(), t.pool_positions.end());
  for (size_t p = 0; p < t.ids.size(); ++p) {
    if (t.token_offsets[p] >= 0) {
      EXPECT_EQ(t.ids[p], content.ids[static_cast<size_t>(t.token_offsets[p])]) << "position " << p;
      EXPECT_EQ(t.token_offsets[p], static_cast<int32_t>(kept.size())) << "content order at " << p;
      kept.push_back(t.ids[p]);
      ++current;
      EXPECT_FALSE(pools.count(static_cast<int32_t>(p)));
    } else if (p > 0) {
      EXPECT_EQ(t.ids[p], landmark) << "inserted token at " << p;
      EXPECT_TRUE(pools.count(static_cast<int32_t>(p))) << "landmark at " << p << " not pooled";
      chunks.push_back(current);
      current = 0;
    }
  }
  // Removing the inserted tokens gives back the content (a prefix of it when truncated).
  EXPECT_TRUE(std::equal(kept.begin(), kept.end(), content.ids.begin()));
  return chunks;
}

TEST_F(LandmarkTest, FixedChunksHoldAtMostGTokensAndCountIsCeilNOverG) {
  for (int n : {1, 2, 5, 31, 32, 33, 64, 65, 100, 257}) {
    for (int g : {1, 2, 3, 7, 32, 64}) {
      const auto lmk = make("fixed:" + std::to_string(g));
      const std::string text = testing::words_text(n);
      const Encoding content = tokenizer_->encode(text);
      ASSERT_EQ(content.ids.size(), static_cast<size_t>(n));
      const TokenizedText t = lmk.tokenize(text);
      SCOPED_TRACE("n=" + std::to_string(n) + " g=" + std::to_string(g));
      const auto chunks = check_chunked(t, content, kSep);
      EXPECT_EQ(t.pool_positions.size(), static_cast<size_t>((n + g - 1) / g));
      EXPECT_EQ(t.ids.size(), static_cast<size_t>(1 + n + (n + g - 1) / g));
      EXPECT_EQ(t.ids.back(), kSep) << "the last chunk is closed by a landmark too";
      for (size_t c = 0; c < chunks.size(); ++c) {
        EXPECT_LE(chunks[c], static_cast<size_t>(g));
        if (c + 1 < chunks.size()) EXPECT_EQ(chunks[c], static_cast<size_t>(g));
        EXPECT_GT(chunks[c], 0u);
      }
      EXPECT_EQ(t.granularity, g);
    }
  }
}

TEST_F(LandmarkTest, ExactLayoutForSmallInput) {
  const TokenizedText t = make("fixed:2").tokenize("w0 w1 w2 w3 w4");
  EXPECT_EQ(t.ids, (std::vector<int32_t>{kCls, 5, 6, kSep, 7, 8, kSep, 9, kSep}));
  EXPECT_EQ(t.pool_positions, (std::vector<int32_t>{3, 6, 8}));
  EXPECT_EQ(t.token_offsets, (std::vector<int32_t>{-1, 0, 1, -1, 2, 3, -1, 4, -1}));
  // Spans point into the text: "w2" is bytes 6..8.
  EXPECT_EQ(t.spans[4].begin, 6u);
  EXPECT_EQ(t.spans[4].end, 8u);
}

TEST_F(LandmarkTest, VariableDrawsPerRowReproduciblyFromTheSet) {
  const auto a = make("variable:32,64,128,256", 0, 7);
  const auto b = make("variable:32,64,128,256", 0, 7);
  const auto c = make("variable:32,64,128,256", 0, 8);
  std::set<int> seen;
  int differs_with_seed = 0;
  for (uint64_t row = 0; row < 200; ++row) {
    const int g = a.granularity_for_row(row);
    EXPECT_TRUE(g == 32 || g == 64 || g == 128 || g == 256);
    EXPECT_EQ(g, b.granularity_for_row(row)) << "same seed, same row, same g";
    differs_with_seed += g != c.granularity_for_row(row);
    seen.insert(g);
  }
  EXPECT_EQ(seen.size(), 4u) << "rows get different granularities";
  EXPECT_GT(differs_with_seed, 50) << "the seed changes the draw";
  // The drawn g is the one used.
  const std::string text = testing::words_text(300);
  for (uint64_t row = 0; row < 20; ++row) {
    const TokenizedText t = a.tokenize(text, row);
    const int g = a.granularity_for_row(row);
    EXPECT_EQ(t.granularity, g);
    EXPECT_EQ(t.pool_positions.size(), static_cast<size_t>((300 + g - 1) / g));
  }
}

TEST_F(LandmarkTest, TruncatesAfterInsertion) {
  // [CLS] c0..c3 L c4..c7 L ... cut to 10 positions: one landmark survives at 5.
  const TokenizedText t = make("fixed:4", 10).tokenize(testing::words_text(20));
  ASSERT_EQ(t.ids.size(), 10u);
  EXPECT_EQ(t.pool_positions, (std::vector<int32_t>{5}));
  EXPECT_EQ(t.ids[5], kSep);
  check_chunked(t, tokenizer_->encode(testing::words_text(20)), kSep);
}

TEST_F(LandmarkTest, LastPositionBecomesLandmarkWhenNoneSurvives) {
  const TokenizedText t = make("fixed:8", 4).tokenize(testing::words_text(20));
  EXPECT_EQ(t.ids, (std::vector<int32_t>{kCls, 5, 6, kSep}));
  EXPECT_EQ(t.pool_positions, (std::vector<int32_t>{3}));
  EXPECT_EQ(t.token_offsets.back(), -1);
}

TEST_F(LandmarkTest, SentenceModePutsALandmarkAfterEachSentence) {
  // Three sentences; the unknown words are [UNK] (1) but each is one token.
  const std::string text = "Alpha beta gamma. Delta epsilon! Zeta eta theta iota?";
  const TokenizedText t = make("sentence:64").tokenize(text);
  EXPECT_EQ(t.ids, (std::vector<int32_t>{kCls, 1, 1, 1, kSep, 1, 1, kSep, 1, 1, 1, 1, kSep}));
  EXPECT_EQ(t.pool_positions, (std::vector<int32_t>{4, 7, 12}));
}

TEST_F(LandmarkTest, SentenceModeChunksOverlongSentencesByG) {
  const std::string text = testing::words_text(10) + ". W short sentence here.";
  const TokenizedText t = make("sentence:4").tokenize(text);
  const auto chunks = check_chunked(t, tokenizer_->encode(text), kSep);
  // 10 words + "W"... : the first sentence (10 tokens) splits 4 + 4 + 2, the second has 4 tokens.
  EXPECT_EQ(chunks, (std::vector<size_t>{4, 4, 2, 4}));
}

TEST_F(LandmarkTest, TextWithoutPunctuationFallsBackToFixedChunks) {
  const TokenizedText t = make("sentence:16").tokenize(testing::words_text(100));
  const auto chunks = check_chunked(t, tokenizer_->encode(testing::words_text(100)), kSep);
  EXPECT_EQ(chunks.size(), 7u);  // ceil(100 / 16)
}

TEST_F(LandmarkTest, MultiClsOpensEveryChunkWithCls) {
  const TokenizedText t = make("multicls:3").tokenize("w0 w1 w2 w3 w4");
  EXPECT_EQ(t.ids, (std::vector<int32_t>{kCls, 5, 6, 7, kCls, 8, 9, kSep}));
  EXPECT_EQ(t.pool_positions, (std::vector<int32_t>{0, 4}));
}

TEST_F(LandmarkTest, NoneIsTheTokenizersTemplateAndKeepsSepWhenTruncating) {
  const TokenizedText t = make("none").tokenize("w0 w1 w2");
  EXPECT_EQ(t.ids, (std::vector<int32_t>{kCls, 5, 6, 7, kSep}));
  EXPECT_EQ(t.token_offsets, (std::vector<int32_t>{-1, 0, 1, 2, -1}));
  EXPECT_TRUE(t.pool_positions.empty());
  const TokenizedText cut = make("none", 4).tokenize("w0 w1 w2 w3 w4");
  EXPECT_EQ(cut.ids, (std::vector<int32_t>{kCls, 5, 6, kSep}));
  EXPECT_EQ(cut.token_offsets, (std::vector<int32_t>{-1, 0, 1, -1}));
}

TEST_F(LandmarkTest, TextWithoutTokensGetsOneEmptyChunk) {
  // Whitespace only: no content tokens at all.
  for (const char* mode : {"fixed:4", "variable:2,3", "sentence:8"}) {
    const TokenizedText t = make(mode).tokenize("   ");
    EXPECT_EQ(t.ids, (std::vector<int32_t>{kCls, kSep})) << mode;
    EXPECT_EQ(t.pool_positions, (std::vector<int32_t>{1})) << mode;
  }
  EXPECT_EQ(make("multicls:4").tokenize("   ").ids, (std::vector<int32_t>{kCls, kSep}));
  EXPECT_EQ(make("multicls:4").tokenize("   ").pool_positions, (std::vector<int32_t>{0}));
  EXPECT_EQ(make("none").tokenize("   ").ids, (std::vector<int32_t>{kCls, kSep}));
}

TEST_F(LandmarkTest, ExplicitLandmarkTokenIsUsed) {
  LandmarkOptions options;
  options.spec = LandmarkSpec::parse("fixed:2");
  options.landmark_token = 4;
  const LandmarkTokenizer lmk(*tokenizer_, options);
  const TokenizedText t = lmk.tokenize("w0 w1 w2");
  EXPECT_EQ(t.ids, (std::vector<int32_t>{kCls, 5, 6, 4, 7, 4}));
  options.landmark_token = 100000;
  EXPECT_THROW(LandmarkTokenizer(*tokenizer_, options), InputError);
}

TEST(LandmarkSpecTest, ParsesEveryModeAndRoundTrips) {
  for (const char* s :
       {"none", "fixed:32", "variable:32,64,128,256", "sentence:64", "multicls:16"}) {
    EXPECT_EQ(LandmarkSpec::parse(s).to_string(), s);
  }
  EXPECT_EQ(LandmarkSpec::parse("variable").granularities, (std::vector<int>{32, 64, 128, 256}));
  const LandmarkSettings defaults;
  EXPECT_EQ(defaults.train.to_string(), "variable:32,64,128,256");
  EXPECT_EQ(defaults.eval.to_string(), "fixed:32");
}

// A layout of one granularity is what parse gives of its text.
TEST(LandmarkSpecTest, OfOneGranularityIsWhatItsTextParsesTo) {
  for (const int g : {1, 16, 32, 4096}) {
    const LandmarkSpec fixed = LandmarkSpec::of(LandmarkMode::Fixed, g);
    const LandmarkSpec parsed = LandmarkSpec::parse("fixed:" + std::to_string(g));
    EXPECT_EQ(fixed.mode, parsed.mode);
    EXPECT_EQ(fixed.granularities, parsed.granularities);
    EXPECT_EQ(LandmarkSpec::of(LandmarkMode::MultiCls, g).to_string(),
              "multicls:" + std::to_string(g));
  }
  EXPECT_THROW(LandmarkSpec::of(LandmarkMode::Fixed, 0), std::invalid_argument);
  EXPECT_THROW(LandmarkSpec::of(LandmarkMode::Variable, 32), std::invalid_argument);
}

TEST(LandmarkSpecTest, RejectsBadSpecsWithAClearMessage) {
  for (const char* s : {"fixed:0", "fixed:-4", "fixed", "fixed:abc", "variable:32,,64",
                        "variable:32,0", "chunks:32", "", "none:3", "sentence:0"}) {
    try {
      LandmarkSpec::parse(s);
      ADD_FAILURE() << "accepted '" << s << "'";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("landmarks: ", 0), 0u) << e.what();
    }
  }
}

// A decoder's word-level tokenizer: "w0".. are ids 5..; 3 is its EOS; 2 opens every input
// through the template when `opening` names it (Llama's "<s> $A"), else the tokenizer adds
// nothing (Qwen's) and has no [CLS] / BOS at all.
std::unique_ptr<Tokenizer> decoder_tokenizer(const TempDir& dir, const std::string& opening,
                                             const std::string& eos) {
  nlohmann::json j = testing::word_level_json(20);
  nlohmann::json& vocab = j["model"]["vocab"];
  vocab.erase("[CLS]");
  vocab.erase("[SEP]");
  vocab[opening.empty() ? "<|im_start|>" : opening] = 2;
  vocab[eos] = 3;
  j["added_tokens"][2]["content"] = opening.empty() ? "<|im_start|>" : opening;
  j["added_tokens"][3]["content"] = eos;
  j["post_processor"] = nullptr;
  if (!opening.empty()) {
    j["post_processor"] = nlohmann::json::parse(R"({"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "OPEN", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}}], "pair": [],
      "special_tokens": {"OPEN": {"id": "OPEN", "ids": [2], "tokens": ["OPEN"]}}})");
    j["post_processor"]["single"][0]["SpecialToken"]["id"] = opening;
    j["post_processor"]["special_tokens"] = {
        {opening, {{"id", opening}, {"ids", {2}}, {"tokens", {opening}}}}};
  }
  return testing::load_json_tokenizer(dir, j, eos.size() > 4 ? "qwen.json" : "llama.json");
}

LandmarkTokenizer decoder_layout(const Tokenizer& tokenizer, const std::string& spec,
                                 size_t max_length = 0, bool decoder = true) {
  LandmarkOptions options;
  options.spec = LandmarkSpec::parse(spec);
  options.max_length = max_length;
  options.decoder = decoder;
  return LandmarkTokenizer(tokenizer, options);
}

using Ids = std::vector<int32_t>;
using Positions = std::vector<int32_t>;

// Qwen's layout: nothing opens the input; the plain layout ends with EOS (what `last` pools);
// EOS follows every chunk of g (Algorithm 1 with the decoder's landmark); cut inputs keep a
// landmark at their last position, however short. MultiCLS and an encoder's layout need a
// [CLS] this tokenizer does not have.
TEST(DecoderLayoutTest, NothingOpensAQwenInputAndEosEndsEveryChunk) {
  TempDir dir;
  const auto tokenizer = decoder_tokenizer(dir, "", "<|endoftext|>");
  const std::string text = "w0 w1 w2";  // ids 5 6 7
  const TokenizedText plain = decoder_layout(*tokenizer, "none").tokenize(text);
  EXPECT_EQ(plain.ids, (Ids{5, 6, 7, 3}));
  EXPECT_EQ(plain.token_offsets, (Positions{0, 1, 2, -1}));
  EXPECT_EQ(plain.spans.back().begin, 8u);  // the EOS sits at the text's end
  EXPECT_EQ(decoder_layout(*tokenizer, "none", 3).tokenize(text).ids, (Ids{5, 6, 3}));
  const TokenizedText chunks = decoder_layout(*tokenizer, "fixed:2").tokenize(text);
  EXPECT_EQ(chunks.ids, (Ids{5, 6, 3, 7, 3}));
  EXPECT_EQ(chunks.pool_positions, (Positions{2, 4}));
  EXPECT_EQ(decoder_layout(*tokenizer, "fixed:2", 3).tokenize(text).pool_positions, (Positions{2}));
  const TokenizedText cut = decoder_layout(*tokenizer, "fixed:2", 2).tokenize(text);
  EXPECT_EQ(cut.ids, (Ids{5, 3}));
  EXPECT_EQ(cut.pool_positions, (Positions{1}));
  const TokenizedText one = decoder_layout(*tokenizer, "fixed:2", 1).tokenize(text);
  EXPECT_EQ(one.ids, (Ids{3}));
  EXPECT_EQ(one.pool_positions, (Positions{0}));
  EXPECT_EQ(decoder_layout(*tokenizer, "fixed:2").tokenize("").ids, (Ids{3}));
  EXPECT_THROW(decoder_layout(*tokenizer, "multicls:2"), InputError);
  EXPECT_THROW(decoder_layout(*tokenizer, "fixed:2", 0, /*decoder=*/false), InputError);
}

// Llama's layout: the template's <s> opens every input; EOS (not a [SEP], which it lacks) is
// the landmark and closes the plain layout; --landmark-token still chooses another.
TEST(DecoderLayoutTest, TheTemplatesBosOpensALlamaInput) {
  TempDir dir;
  const auto tokenizer = decoder_tokenizer(dir, "<s>", "</s>");
  const std::string text = "w0 w1 w2";
  EXPECT_EQ(decoder_layout(*tokenizer, "none").tokenize(text).ids, (Ids{2, 5, 6, 7, 3}));
  const TokenizedText chunks = decoder_layout(*tokenizer, "fixed:2").tokenize(text);
  EXPECT_EQ(chunks.ids, (Ids{2, 5, 6, 3, 7, 3}));
  EXPECT_EQ(chunks.pool_positions, (Positions{3, 5}));
  EXPECT_EQ(decoder_layout(*tokenizer, "fixed:2", 2).tokenize(text).ids, (Ids{2, 3}));
  LandmarkOptions options;
  options.spec = LandmarkSpec::parse("fixed:2");
  options.decoder = true;
  options.landmark_token = 4;
  EXPECT_EQ(LandmarkTokenizer(*tokenizer, options).tokenize(text).ids, (Ids{2, 5, 6, 4, 7, 4}));
}

// A decoder read with a BERT-style tokenizer ([CLS] $A [SEP], no EOS) gets the encoder's
// layout exactly: the template's [CLS] opens, its [SEP] already ends the plain layout and is
// the landmark (what the decoders' parity checks with the encoders' tokenizer rely on).
TEST_F(LandmarkTest, ADecoderWithABertTokenizerGetsTheEncodersLayout) {
  for (const std::string spec : {"none", "fixed:3", "variable:2,5", "sentence:4"}) {
    for (const size_t max_length : {0, 6}) {
      LandmarkOptions options;
      options.spec = LandmarkSpec::parse(spec);
      options.max_length = max_length;
      const TokenizedText encoder =
          LandmarkTokenizer(*tokenizer_, options).tokenize("w1 w2 w3. w4 w5 w6 w7", 3);
      options.decoder = true;
      const TokenizedText decoder =
          LandmarkTokenizer(*tokenizer_, options).tokenize("w1 w2 w3. w4 w5 w6 w7", 3);
      EXPECT_EQ(decoder.ids, encoder.ids) << spec << " " << max_length;
      EXPECT_EQ(decoder.pool_positions, encoder.pool_positions) << spec << " " << max_length;
    }
  }
}

}  // namespace
}  // namespace lmk
