#pragma once

#include <memory>
#include <string>

#include "core/tokenize/tokenizer.h"

namespace lmk {

// Loads a Hugging Face tokenizer.json (normalizer, pre-tokenizer, model, added tokens,
// post-processor, decoder). A tokenizer_config.json, when given, names the special tokens by
// role ("cls_token", "sep_token", ...).
std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path,
                                             const std::string& tokenizer_config_path = "");

}  // namespace lmk
