#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tokenize/tokenizer.h"

namespace lmk {

// How special tokens are placed in a model input (paper, Algorithm 1 and its baselines).
enum class LandmarkMode {
  None,      // the tokenizer's own template: [CLS] text [SEP] (CLS / mean / last pooling)
  Fixed,     // [CLS] chunk LMK chunk LMK ... with chunks of g content tokens
  Variable,  // as Fixed, with g drawn per text from a set
  Sentence,  // a landmark after each sentence; sentences longer than g are chunked by g
  MultiCls,  // [CLS] chunk [CLS] chunk ... [SEP]: a CLS opening every chunk
};

struct LandmarkSpec {
  LandmarkMode mode = LandmarkMode::None;
  std::vector<int> granularities;  // Fixed/MultiCls: {g}; Variable: the set; Sentence: {max g}

  // Parses none | fixed:G | variable:G1,G2,.. | variable | sentence[:G] | multicls[:G];
  // throws InputError naming `where` (the field by default; the option, file field or key it
  // came from when the caller knows it) on anything else or on g <= 0.
  static LandmarkSpec parse(std::string_view text, const std::string& where = "landmarks");
  // A layout of one granularity (Fixed or MultiCls; g > 0, the caller's check): what parse
  // gives of "fixed:G" / "multicls:G", without the detour through text.
  static LandmarkSpec of(LandmarkMode mode, int granularity);
  // The text form parse accepts.
  std::string to_string() const;
};

// The paper's best settings (core/util/paper_defaults.h): train variable {32, 64, 128, 256},
// evaluate fixed 32.
LandmarkSpec default_train_landmarks();
LandmarkSpec default_eval_landmarks();

// A study's landmark settings: one for training, one for evaluation (they differ on purpose).
struct LandmarkSettings {
  LandmarkSpec train = default_train_landmarks();
  LandmarkSpec eval = default_eval_landmarks();
};

// One model input.
struct TokenizedText {
  std::vector<int32_t> ids;
  std::vector<int32_t> pool_positions;  // landmark (or MultiCLS) positions; empty for None
  std::vector<int32_t> token_offsets;   // per position: index of its content token, -1 if inserted
  std::vector<TokenSpan> spans;         // per position: byte range in the text
  int granularity = 0;                  // g used for this text (0 for None)
};

struct LandmarkOptions {
  LandmarkSpec spec;
  size_t max_length = 0;                  // 0: no truncation
  std::optional<int32_t> landmark_token;  // default: [SEP], else EOS (a decoder: EOS, else [SEP])
  uint64_t seed = 0;                      // for Variable: g of row r depends on (seed, r) only
  // A decoder's layout (the paper's decoder variant): inputs open with the tokenizer template's
  // own prefix (Llama's BOS; nothing for Qwen), not a required [CLS]; landmarks are EOS; the
  // template's layout (None) ends with EOS, which `last` pooling reads (Qwen3-Embedding's).
  bool decoder = false;
};

// Turns texts into model inputs with landmark tokens.
class LandmarkTokenizer {
 public:
  // Resolves the special tokens; throws InputError when the tokenizer lacks one the mode needs
  // (an encoder's [CLS] / BOS to open the input; a landmark token).
  LandmarkTokenizer(const Tokenizer& tokenizer, LandmarkOptions options);

  // Tokenizes the text of row `row` (the row index seeds the Variable draw).
  TokenizedText tokenize(std::string_view text, uint64_t row = 0) const;
  // Arranges already-encoded content (Tokenizer::encode) with special tokens. `text` is
  // only read by Sentence mode.
  TokenizedText arrange(const Encoding& content, std::string_view text, uint64_t row) const;

  // The granularity drawn for row `row` (Fixed/Variable/MultiCls/Sentence).
  int granularity_for_row(uint64_t row) const;

  const LandmarkOptions& options() const { return options_; }
  int32_t landmark_token() const { return landmark_token_; }

 private:
  TokenizedText arrange_chunks(const Encoding& content, const std::vector<size_t>& chunk_ends,
                               int g) const;
  TokenizedText arrange_multicls(const Encoding& content, int g) const;
  void truncate(TokenizedText& out) const;

  const Tokenizer& tokenizer_;
  LandmarkOptions options_;
  int32_t cls_token_ = -1;  // MultiCLS's chunk opener
  std::vector<int32_t>
      opening_;  // before the first chunk: [CLS] (a decoder: the template's prefix)
  int32_t landmark_token_ = -1;
  std::optional<int32_t> eos_;        // a decoder's: closes the template's layout (None)
  std::optional<int32_t> end_token_;  // MultiCLS closes with [SEP] / EOS when there is one
};

}  // namespace lmk
