#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/tokenize/tokenizer.h"

namespace lmk {

// Loads a Hugging Face tokenizer.json (normalizer, pre-tokenizer, model, added tokens,
// post-processor, decoder). A tokenizer_config.json, when given, names the special tokens by
// role ("cls_token", "sep_token", ...).
std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path,
                                             const std::string& tokenizer_config_path = "");

// Parses tokenizer.json text; `name` stands for the file in error messages.
std::unique_ptr<Tokenizer> parse_hf_tokenizer(std::string_view json_text, const std::string& name);

}  // namespace lmk
