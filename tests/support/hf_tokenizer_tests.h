#pragma once

// What the tokenizer.json pipeline's unit tests share (tests/core/tokenize/hf_*_test.cpp): a
// tokenizer.json built from its parts, and the tokens a tokenizer gives a text.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/tokenize/tokenizer.h"

namespace lmk::testing {

using nlohmann::json;

inline json tokenizer_json(json model, json normalizer = nullptr, json pre_tokenizer = nullptr,
                           json post_processor = nullptr, json decoder = nullptr,
                           json added = json::array()) {
  return {{"version", "1.0"},
          {"added_tokens", added},
          {"normalizer", normalizer},
          {"pre_tokenizer", pre_tokenizer},
          {"post_processor", post_processor},
          {"decoder", decoder},
          {"model", model}};
}

inline std::vector<std::string> tokens_of(const Tokenizer& t, const std::string& text) {
  std::vector<std::string> out;
  for (int32_t id : t.encode(text).ids) out.push_back(t.id_to_token(id));
  return out;
}

using Strings = std::vector<std::string>;

}  // namespace lmk::testing
