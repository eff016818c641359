// The decoders of tokenizer.json (core/tokenize/hf_decoders.cpp): what each type does to the
// token strings, as the `tokenizers` library's decode_chain does, and the errors that name the
// field.
#include "core/tokenize/hf_decoders.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/util/error.h"

namespace lmk {
namespace {

using nlohmann::json;
using Strings = std::vector<std::string>;

// The tokens after the decoder described by `decoder` (tokenizer.json's "decoder" object).
Strings decoded(const json& decoder, Strings tokens) {
  const auto d = hf::make_decoder(decoder, "decoder");
  d->decode(tokens);
  return tokens;
}

// The message of the InputError make_decoder throws ("" when it accepts).
std::string error_of(const json& decoder) {
  try {
    hf::make_decoder(decoder, "decoder");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// null is no decoder; an unknown or missing type is an error naming the field, also inside a
// Sequence.
TEST(HfDecodersTest, NullIsNoDecoderAndUnknownTypesNameTheField) {
  EXPECT_EQ(hf::make_decoder(nullptr, "decoder"), nullptr);
  EXPECT_EQ(error_of({{"type", "Frobnicate"}}),
            "decoder.type: unsupported decoder type 'Frobnicate'");
  EXPECT_EQ(error_of({{"prefix", "##"}}), "decoder.type: missing");
  EXPECT_EQ(error_of({{"type", "Sequence"}, {"decoders", {{{"type", "Fuse"}}, {{"type", "X"}}}}}),
            "decoder.decoders[1].type: unsupported decoder type 'X'");
  const std::string bad_regex =
      error_of({{"type", "Replace"}, {"pattern", {{"Regex", "(unclosed"}}}, {"content", " "}});
  EXPECT_EQ(bad_regex.rfind("decoder.pattern.Regex: invalid regex /(unclosed/", 0), 0u)
      << bad_regex;
}

// ByteLevel maps each character of GPT-2's byte alphabet back to its byte (Ġ is the space,
// "Ã©" the two bytes of é), keeps characters outside the alphabet as they are, joins everything
// into one string and replaces bytes that are not UTF-8 by U+FFFD.
TEST(HfDecodersTest, ByteLevelTurnsTheAlphabetBackIntoBytes) {
  const json byte_level = {{"type", "ByteLevel"}};
  EXPECT_EQ(decoded(byte_level, {"Hello", "Ġcaf", "Ã©", "Ġ€"}), Strings{"Hello café €"});
  EXPECT_EQ(decoded(byte_level, {"a", "Ã", "b"}), Strings{"a\xEF\xBF\xBD"
                                                          "b"});
  EXPECT_EQ(decoded(byte_level, {"ĊĉĠ"}), Strings{"\n\t "});
}

// WordPiece: a token after the first loses its "##" or gets a space in front; cleanup then
// removes the space before punctuation and contractions, per token.
TEST(HfDecodersTest, WordPieceJoinsContinuationsAndCleansUp) {
  const Strings tokens = {"un", "##aff", "##able", "day", ".", "i", "do", "n't", "##x"};
  EXPECT_EQ(decoded({{"type", "WordPiece"}}, tokens),
            (Strings{"un", "aff", "able", " day", ".", " i", " do", "n't", "x"}));
  EXPECT_EQ(decoded({{"type", "WordPiece"}, {"cleanup", false}}, tokens),
            (Strings{"un", "aff", "able", " day", " .", " i", " do", " n't", "x"}));
  EXPECT_EQ(decoded({{"type", "WordPiece"}, {"prefix", "@@"}}, {"##a", "@@b", "c"}),
            (Strings{"##a", "b", " c"}))
      << "the first token is left as it is";
}

// Metaspace: ▁ (or the replacement asked for) becomes a space, and the first token loses its
// leading space unless the prepend scheme is "never" (add_prefix_space false in old files).
TEST(HfDecodersTest, MetaspaceRestoresSpacesAndStripsTheFirst) {
  const Strings tokens = {"▁Hello", "▁wor", "ld▁!"};
  EXPECT_EQ(decoded({{"type", "Metaspace"}}, tokens), (Strings{"Hello", " wor", "ld !"}));
  EXPECT_EQ(decoded({{"type", "Metaspace"}, {"prepend_scheme", "first"}}, tokens),
            (Strings{"Hello", " wor", "ld !"}));
  EXPECT_EQ(decoded({{"type", "Metaspace"}, {"prepend_scheme", "never"}}, tokens),
            (Strings{" Hello", " wor", "ld !"}));
  EXPECT_EQ(decoded({{"type", "Metaspace"}, {"add_prefix_space", false}}, tokens),
            (Strings{" Hello", " wor", "ld !"}));
  EXPECT_EQ(decoded({{"type", "Metaspace"}, {"replacement", "_"}}, {"_a_b", "_c"}),
            (Strings{"a b", " c"}));
}

// Replace: every match of a literal or a regex in each token becomes the content.
TEST(HfDecodersTest, ReplaceLiteralsAndRegexMatches) {
  EXPECT_EQ(decoded({{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
                    {"▁a▁b", "c", "▁"}),
            (Strings{" a b", "c", " "}));
  EXPECT_EQ(decoded({{"type", "Replace"}, {"pattern", {{"Regex", "[0-9]+"}}}, {"content", "#"}},
                    {"a12b3", "xyz"}),
            (Strings{"a#b#", "xyz"}));
}

// ByteFallback: runs of <0xNN> tokens become their bytes when these are UTF-8, else one U+FFFD
// per token; other tokens pass unchanged and end a run.
TEST(HfDecodersTest, ByteFallbackDecodesRunsOfByteTokens) {
  const std::string replacement = "\xEF\xBF\xBD";
  EXPECT_EQ(decoded({{"type", "ByteFallback"}}, {"<0x41>", "<0x42>", "x", "<0xE2>", "<0x82>",
                                                 "<0xAC>", "y", "<0xE2>", "<0x82>", "z", "<0x41"}),
            (Strings{"AB", "x", "€", "y", replacement, replacement, "z", "<0x41"}));
  EXPECT_EQ(decoded({{"type", "ByteFallback"}}, {"<0xE2>", "<0x82>", "<0xAC>", "<0xFF>"}),
            Strings(4, replacement))
      << "one invalid byte makes the whole run replacement characters";
}

// A token of the <0x..> shape whose two characters are not hexadecimal digits is an ordinary
// token for the `tokenizers` library (u8::from_str_radix fails), not a byte (sscanf's %2x, which
// lmk used, read "4G" as 4 and " 7" as 7).
TEST(HfDecodersTest, ByteFallbackTakesOnlyTwoHexDigitsAsAByte) {
  EXPECT_EQ(decoded({{"type", "ByteFallback"}}, {"<0x4G>", "<0x 7>", "<0x-1>"}),
            (Strings{"<0x4G>", "<0x 7>", "<0x-1>"}));
}

// Fuse joins all tokens into one; Strip removes up to `start` / `stop` copies of its content
// from each token's ends; BPEDecoder turns the end-of-word suffix into a space, except in the
// last token.
TEST(HfDecodersTest, FuseStripAndBpeSuffix) {
  EXPECT_EQ(decoded({{"type", "Fuse"}}, {"a", "b", "", "c"}), Strings{"abc"});
  EXPECT_EQ(decoded({{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}},
                    {"  a ", " b", "c"}),
            (Strings{" a ", "b", "c"}));
  EXPECT_EQ(
      decoded({{"type", "Strip"}, {"content", "x"}, {"start", 2}, {"stop", 1}}, {"xxxaxx", "ax"}),
      (Strings{"xax", "a"}));
  EXPECT_EQ(decoded({{"type", "BPEDecoder"}}, {"hel", "lo</w>", "wor", "ld</w>"}),
            (Strings{"hel", "lo ", "wor", "ld"}));
  EXPECT_EQ(decoded({{"type", "BPEDecoder"}, {"suffix", "_"}}, {"a_", "b_"}), (Strings{"a ", "b"}));
}

// Sequence runs its steps in order (Llama's decoder: Replace, ByteFallback, Fuse, Strip), null
// steps skipped.
TEST(HfDecodersTest, SequenceRunsItsStepsInOrder) {
  const json llama = {{"type", "Sequence"},
                      {"decoders",
                       {{{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
                        {{"type", "ByteFallback"}},
                        nullptr,
                        {{"type", "Fuse"}},
                        {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  EXPECT_EQ(decoded(llama, {"▁Hello", "<0x21>", "▁", "<0xE2>", "<0x82>", "<0xAC>"}),
            Strings{"Hello! €"});
}

}  // namespace
}  // namespace lmk
