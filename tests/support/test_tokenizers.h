#pragma once

// Small tokenizers written on the fly for unit tests, so tests never depend on downloads.

#include <nlohmann/json.hpp>

#include <unistd.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/tokenize/tokenizer.h"

namespace lmk::testing {

// A fresh temporary folder removed when the object goes away.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("lmk_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  // Writes content to a file in the folder and returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    const auto file = path_ / name;
    std::ofstream(file, std::ios::binary) << content;
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

// [CLS] $A [SEP] template with [CLS] = 2, [SEP] = 3.
inline nlohmann::json bert_template() {
  return nlohmann::json::parse(R"({
    "type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
               {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "pair": [],
    "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                       "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}})");
}

inline nlohmann::json special_added_tokens() {
  nlohmann::json list = nlohmann::json::array();
  const char* names[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (int i = 0; i < 5; ++i) {
    list.push_back({{"id", i},
                    {"content", names[i]},
                    {"single_word", false},
                    {"lstrip", false},
                    {"rstrip", false},
                    {"normalized", false},
                    {"special", true}});
  }
  return list;
}

// A whitespace-split word-level tokenizer: "w0".."w{n-1}" are ids 5.., anything else [UNK]=1.
inline nlohmann::json word_level_json(int words = 1000) {
  nlohmann::json vocab = {{"[PAD]", 0}, {"[UNK]", 1}, {"[CLS]", 2}, {"[SEP]", 3}, {"[MASK]", 4}};
  for (int i = 0; i < words; ++i) vocab["w" + std::to_string(i)] = 5 + i;
  return {{"version", "1.0"},
          {"added_tokens", special_added_tokens()},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "WhitespaceSplit"}}},
          {"post_processor", bert_template()},
          {"decoder", nullptr},
          {"model", {{"type", "WordLevel"}, {"vocab", vocab}, {"unk_token", "[UNK]"}}}};
}

// Writes j as a tokenizer.json in dir and loads it.
inline std::unique_ptr<Tokenizer> load_json_tokenizer(const TempDir& dir, const nlohmann::json& j,
                                                      const std::string& name = "tokenizer.json") {
  return load_tokenizer(dir.write(name, j.dump()));
}

// "w0 w1 ... w{n-1}".
inline std::string words_text(int n, int offset = 0) {
  std::string text;
  for (int i = 0; i < n; ++i) text += (i ? " w" : "w") + std::to_string(offset + i);
  return text;
}

}  // namespace lmk::testing
