#pragma once

// The tokenization models of a Hugging Face tokenizer.json: BPE (byte-level and
// SentencePiece-style with byte fallback), WordPiece and WordLevel.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lmk::hf {

// One token of a pre-tokenized piece: its id and byte range within the piece.
struct ModelToken {
  int32_t id;
  uint32_t begin, end;
};

class Model {
 public:
  virtual ~Model() = default;
  // Appends the tokens of one pre-tokenized piece to out.
  virtual void tokenize(std::string_view piece, std::vector<ModelToken>& out) const = 0;
  // Id of a vocabulary entry.
  virtual std::optional<int32_t> token_to_id(std::string_view token) const = 0;
  // Vocabulary entry of an id (empty when the id is not in the vocabulary).
  virtual std::string id_to_token(int32_t id) const = 0;
  // One past the largest id.
  virtual size_t vocab_size() const = 0;
};

// Builds the model from tokenizer.json's "model" object.
std::unique_ptr<Model> make_model(const nlohmann::json& j, const std::string& where);

}  // namespace lmk::hf
