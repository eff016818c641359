#pragma once

// The decoders of a Hugging Face tokenizer.json (its "decoder" object): token strings -> text,
// as the `tokenizers` library joins them.

#include <nlohmann/json_fwd.hpp>

#include <memory>
#include <string>
#include <vector>

namespace lmk::hf {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode(std::vector<std::string>& tokens) const = 0;
};

// Builds the decoder from tokenizer.json's "decoder" (null gives nullptr).
std::unique_ptr<Decoder> make_decoder(const nlohmann::json& j, const std::string& where);

}  // namespace lmk::hf
