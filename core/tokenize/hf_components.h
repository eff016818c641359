#pragma once

// The normalizers and pre-tokenizers of a Hugging Face tokenizer.json, each built from its
// JSON object. Every one reproduces the behaviour of the `tokenizers` library exactly;
// the parity test (tests/parity) checks that over real text.

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/tokenize/normalized_string.h"
#include "core/tokenize/regex.h"

namespace lmk::hf {

// What a Split / Replace pattern matches: a literal string, a regex, or single characters.
class Pattern {
 public:
  static Pattern literal(std::string text);
  static Pattern regex(std::string_view pattern, const std::string& where);
  static Pattern characters(std::function<bool(char32_t)> predicate);
  // Parses {"String": "..."} or {"Regex": "..."}.
  static Pattern from_json(const nlohmann::json& j, const std::string& where);

  // Byte ranges of the matches in text, left to right, non-overlapping.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  std::string literal_;
  std::shared_ptr<const Regex> regex_;
  std::function<bool(char32_t)> predicate_;
};

enum class SplitBehavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

// Splits s at the matches of pattern as Hugging Face's NormalizedString::split does;
// empty pieces are dropped.
void split_normalized(const NormalizedString& s, const Pattern& pattern, SplitBehavior behavior,
                      bool invert, std::vector<NormalizedString>& out);

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  // Normalizes s in place.
  virtual void normalize(NormalizedString& s) const = 0;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  // Splits every piece into smaller pieces (and may rewrite them, e.g. ByteLevel).
  virtual void pre_tokenize(std::vector<NormalizedString>& pieces) const = 0;
};

// Builds a normalizer from tokenizer.json's "normalizer" (null gives nullptr).
std::unique_ptr<Normalizer> make_normalizer(const nlohmann::json& j, const std::string& where);
// Builds a pre-tokenizer from tokenizer.json's "pre_tokenizer" (null gives nullptr).
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const nlohmann::json& j, const std::string& where);

// GPT-2's byte -> printable character table (bytes_to_unicode), as UTF-8 strings.
const std::vector<std::string>& byte_level_alphabet();

}  // namespace lmk::hf
