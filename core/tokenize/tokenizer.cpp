#include "core/tokenize/tokenizer.h"

#include <filesystem>

#include "core/tokenize/hf_tokenizer.h"
#include "core/tokenize/sentencepiece_tokenizer.h"
#include "core/util/error.h"
#include "core/util/unicode.h"

namespace lmk {

namespace fs = std::filesystem;

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const fs::path dir(path);
    const fs::path config = dir / "tokenizer_config.json";
    const std::string config_path = fs::is_regular_file(config) ? config.string() : "";
    if (fs::is_regular_file(dir / "tokenizer.json"))
      return load_hf_tokenizer((dir / "tokenizer.json").string(), config_path);
    for (const char* name : {"tokenizer.model", "spiece.model", "sentencepiece.bpe.model"}) {
      if (fs::is_regular_file(dir / name))
        return load_sentencepiece_tokenizer((dir / name).string());
    }
    throw input_error(path, "folder holds no tokenizer.json, tokenizer.model or spiece.model");
  }
  if (!fs::exists(path, ec)) throw input_error(path, "no such file or folder");
  if (fs::path(path).extension() == ".model") return load_sentencepiece_tokenizer(path);
  const fs::path sibling_config = fs::path(path).parent_path() / "tokenizer_config.json";
  return load_hf_tokenizer(
      path, fs::path(path).filename() == "tokenizer.json" && fs::is_regular_file(sibling_config)
                ? sibling_config.string()
                : "");
}

Encoding wrap_encoding(const Encoding& content, const std::vector<int32_t>& prefix,
                       const std::vector<int32_t>& suffix) {
  Encoding out;
  const uint32_t first = content.spans.empty() ? 0 : content.spans.front().begin;
  const uint32_t last = content.spans.empty() ? 0 : content.spans.back().end;
  out.ids.reserve(prefix.size() + content.ids.size() + suffix.size());
  out.spans.reserve(out.ids.capacity());
  for (int32_t id : prefix) {
    out.ids.push_back(id);
    out.spans.push_back({first, first});
  }
  out.ids.insert(out.ids.end(), content.ids.begin(), content.ids.end());
  out.spans.insert(out.spans.end(), content.spans.begin(), content.spans.end());
  for (int32_t id : suffix) {
    out.ids.push_back(id);
    out.spans.push_back({last, last});
  }
  return out;
}

Encoding Tokenizer::add_special_tokens(const Encoding& content) const {
  return wrap_encoding(content, template_.prefix, template_.suffix);
}

void require_valid_utf8(std::string_view text, const std::string& where) {
  const size_t bad = unicode::find_invalid_utf8(text);
  if (bad != std::string_view::npos) {
    throw input_error(where, "invalid UTF-8 at byte " + std::to_string(bad));
  }
}

}  // namespace lmk
