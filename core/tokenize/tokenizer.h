#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lmk {

// Byte range of a token in the text it came from; inserted tokens have begin == end.
struct TokenSpan {
  uint32_t begin = 0;
  uint32_t end = 0;
};

// Token ids with, for each, where in the input text it came from.
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<TokenSpan> spans;
};

// What the tokenizer's post-processor puts before and after one sequence.
struct SequenceTemplate {
  std::vector<int32_t> prefix;  // e.g. [CLS], <bos>
  std::vector<int32_t> suffix;  // e.g. [SEP]
};

// Ids of the special tokens that landmark tokenization and the models need.
struct SpecialTokens {
  std::optional<int32_t> cls, sep, bos, eos, pad, unk, mask;
};

// A tokenizer: Hugging Face tokenizer.json (WordPiece, BPE) or sentencepiece. Thread-safe for
// concurrent encode/decode calls.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Encodes valid UTF-8 text into content tokens, without special tokens (Hugging Face's
  // encode(text, add_special_tokens=False)); throws InputError on invalid UTF-8.
  virtual Encoding encode(std::string_view text) const = 0;
  // Wraps one sequence's content tokens as the tokenizer's post-processor does ([CLS] ... [SEP],
  // <bos> ...): encode followed by this gives Hugging Face's encode(text).
  Encoding add_special_tokens(const Encoding& content) const;
  // Turns ids back into text.
  virtual std::string decode(const std::vector<int32_t>& ids,
                             bool skip_special_tokens = true) const = 0;
  // The vocabulary entry of id ("" when unknown).
  virtual std::string id_to_token(int32_t id) const = 0;
  // The id of a vocabulary entry or added token.
  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  // One past the largest id.
  virtual size_t vocab_size() const = 0;
  // Whether id is a special (control) token.
  virtual bool is_special(int32_t id) const = 0;

  // The special tokens this tokenizer has.
  const SpecialTokens& special_tokens() const { return special_; }
  // The ids add_special_tokens puts around a sequence.
  const SequenceTemplate& sequence_template() const { return template_; }

 protected:
  SpecialTokens special_;
  SequenceTemplate template_;
};

// Loads a Hugging Face tokenizer.json, a sentencepiece .model, or a model folder holding either
// (a tokenizer_config.json beside it names the special tokens). Throws InputError naming the
// file and field on anything missing or malformed.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path);

// Puts `prefix` ids before and `suffix` ids after the content; the inserted tokens get empty
// spans at the content's first / last byte. What post-processors do for one sequence.
Encoding wrap_encoding(const Encoding& content, const std::vector<int32_t>& prefix,
                       const std::vector<int32_t>& suffix);

// Throws InputError naming `where` and the byte offset when text is not valid UTF-8.
void require_valid_utf8(std::string_view text, const std::string& where);

}  // namespace lmk
