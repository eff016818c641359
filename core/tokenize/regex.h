#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lmk {

// A compiled Oniguruma regular expression -- the engine Hugging Face tokenizers uses, so
// patterns from tokenizer.json (\p{L}, lookahead, (?i:...)) behave identically.
class Regex {
 public:
  // Compiles pattern; throws InputError naming `where` when it does not compile.
  Regex(std::string_view pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Returns the byte ranges of all non-overlapping matches in text, left to right
  // (empty matches right after a previous match are skipped, as the onig crate does).
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lmk
