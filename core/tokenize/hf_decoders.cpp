// The decoders of a Hugging Face tokenizer.json (core/tokenize/hf_decoders.h).
#include <nlohmann/json.hpp>

#include <map>
#include <string_view>

#include "core/tokenize/hf_components.h"
#include "core/tokenize/hf_decoders.h"
#include "core/util/error.h"
#include "core/util/json_util.h"
#include "core/util/unicode.h"

namespace lmk::hf {

using nlohmann::json;
namespace ju = json_util;

namespace {

// The value of one hexadecimal digit, -1 for any other character.
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  if (from.empty()) return s;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

class ByteLevelDecoder : public Decoder {
 public:
  ByteLevelDecoder() {
    const auto& alphabet = hf::byte_level_alphabet();
    for (int b = 0; b < 256; ++b) {
      size_t pos = 0;
      reverse_[unicode::next_code_point(alphabet[static_cast<size_t>(b)], pos)] =
          static_cast<char>(b);
    }
  }
  void decode(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const auto& token : tokens) {
      size_t pos = 0;
      while (pos < token.size()) {
        const size_t begin = pos;
        auto it = reverse_.find(unicode::next_code_point(token, pos));
        if (it != reverse_.end())
          bytes.push_back(it->second);
        else
          bytes.append(token, begin, pos - begin);
      }
    }
    tokens.assign(1, unicode::replace_invalid_utf8(bytes));
  }

 private:
  std::map<char32_t, char> reverse_;
};

class WordPieceDecoder : public Decoder {
 public:
  WordPieceDecoder(std::string prefix, bool cleanup)
      : prefix_(std::move(prefix)), cleanup_(cleanup) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      auto& t = tokens[i];
      if (i != 0) {
        if (t.compare(0, prefix_.size(), prefix_) == 0)
          t.erase(0, prefix_.size());
        else
          t.insert(0, " ");
      }
      if (cleanup_) {
        static const std::pair<const char*, const char*> kRules[] = {
            {" .", "."},   {" ?", "?"},     {" !", "!"},    {" ,", ","},
            {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},  {" do not", " don't"},
            {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
        for (const auto& [from, to] : kRules) t = replace_all(t, from, to);
      }
    }
  }

 private:
  std::string prefix_;
  bool cleanup_;
};

class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool strip_first)
      : replacement_(std::move(replacement)), strip_first_(strip_first) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      tokens[i] = replace_all(tokens[i], replacement_, " ");
      if (i == 0 && strip_first_ && !tokens[i].empty() && tokens[i][0] == ' ')
        tokens[i].erase(0, 1);
    }
  }

 private:
  std::string replacement_;
  bool strip_first_;
};

class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(hf::Pattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) {
      std::string out;
      size_t previous = 0;
      for (const auto& [b, e] : pattern_.find_all(t)) {
        out.append(t, previous, b - previous);
        out += content_;
        previous = e;
      }
      out.append(t, previous, std::string::npos);
      t = std::move(out);
    }
  }

 private:
  hf::Pattern pattern_;
  std::string content_;
};

class ByteFallbackDecoder : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    size_t pending_count = 0;
    auto flush = [&] {
      if (pending_count == 0) return;
      if (unicode::find_invalid_utf8(pending) == std::string_view::npos) {
        out.push_back(pending);
      } else {
        for (size_t i = 0; i < pending_count; ++i) out.push_back("\xEF\xBF\xBD");
      }
      pending.clear();
      pending_count = 0;
    };
    for (const auto& t : tokens) {
      // <0xHH> with exactly two hex digits (tokenizers' u8::from_str_radix); anything else,
      // <0x4G> or <0x-1>, is an ordinary token.
      const bool framed = t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>';
      const int high = framed ? hex_digit(t[3]) : -1, low = framed ? hex_digit(t[4]) : -1;
      if (high >= 0 && low >= 0) {
        pending.push_back(static_cast<char>(high * 16 + low));
        ++pending_count;
      } else {
        flush();
        out.push_back(t);
      }
    }
    flush();
    tokens = std::move(out);
  }
};

class FuseDecoder : public Decoder {
 public:
  void decode(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    tokens.assign(1, all);
  }
};

class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) {
      for (size_t i = 0;
           i < start_ && !content_.empty() && t.compare(0, content_.size(), content_) == 0; ++i) {
        t.erase(0, content_.size());
      }
      for (size_t i = 0; i < stop_ && !content_.empty() && t.size() >= content_.size() &&
                         t.compare(t.size() - content_.size(), content_.size(), content_) == 0;
           ++i) {
        t.erase(t.size() - content_.size());
      }
    }
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

class BpeDecoder : public Decoder {
 public:
  explicit BpeDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i)
      tokens[i] = replace_all(tokens[i], suffix_, i + 1 == tokens.size() ? "" : " ");
  }

 private:
  std::string suffix_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps)
      : steps_(std::move(steps)) {}
  void decode(std::vector<std::string>& tokens) const override {
    for (const auto& s : steps_) s->decode(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const json& j, const std::string& where) {
  if (j.is_null()) return nullptr;
  const auto type = ju::get<std::string>(j, "type", where);
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "WordPiece") {
    return std::make_unique<WordPieceDecoder>(ju::optional<std::string>(j, "prefix", where, "##"),
                                              ju::optional<bool>(j, "cleanup", where, true));
  }
  if (type == "Metaspace") {
    const auto scheme = ju::optional<std::string>(
        j, "prepend_scheme", where,
        ju::optional<bool>(j, "add_prefix_space", where, true) ? "always" : "never");
    return std::make_unique<MetaspaceDecoder>(
        ju::optional<std::string>(j, "replacement", where, "\xE2\x96\x81"), scheme != "never");
  }
  if (type == "Replace") {
    return std::make_unique<ReplaceDecoder>(
        hf::Pattern::from_json(ju::required(j, "pattern", where),
                               ju::member_path(where, "pattern")),
        ju::get<std::string>(j, "content", where));
  }
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip") {
    return std::make_unique<StripDecoder>(ju::optional<std::string>(j, "content", where, " "),
                                          ju::optional<size_t>(j, "start", where, 0),
                                          ju::optional<size_t>(j, "stop", where, 0));
  }
  if (type == "BPEDecoder")
    return std::make_unique<BpeDecoder>(ju::optional<std::string>(j, "suffix", where, "</w>"));
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Decoder>> steps;
    ju::for_each_element(j, "decoders", where, [&](const json& element, const std::string& path) {
      if (auto step = make_decoder(element, path)) steps.push_back(std::move(step));
    });
    return std::make_unique<SequenceDecoder>(std::move(steps));
  }
  throw input_error(ju::member_path(where, "type"), "unsupported decoder type '" + type + "'");
}

}  // namespace lmk::hf
