#include "core/tokenize/hf_tokenizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "core/tokenize/hf_components.h"
#include "core/tokenize/hf_decoders.h"
#include "core/tokenize/hf_models.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/json_util.h"
#include "core/util/unicode.h"

namespace lmk {

using nlohmann::json;
namespace ju = json_util;

namespace {

json read_json_file(const std::string& path) {
  return ju::parse(read_file(path), path);
}

// ---------------------------------------------------------------------------------------------
// Added tokens: matched in the raw text (normalized: false) or in the normalized text
// (normalized: true) before pre-tokenization, leftmost-longest, with lstrip / rstrip /
// single_word as Hugging Face's AddedVocabulary.

struct AddedToken {
  int32_t id;
  std::string content;  // what is matched (normalized content for normalized tokens)
  bool single_word, lstrip, rstrip, normalized, special;
};

class AddedTokenMatcher {
 public:
  void add(const AddedToken* token) {
    if (token->content.empty()) return;
    int node = 0;
    for (unsigned char c : token->content) {
      auto& children = nodes_[static_cast<size_t>(node)].children;
      auto it =
          std::lower_bound(children.begin(), children.end(), c,
                           [](const auto& child, unsigned char key) { return child.first < key; });
      if (it == children.end() || it->first != c) {
        const int next = static_cast<int>(nodes_.size());
        it = children.insert(it, {c, next});
        nodes_.push_back({});
        node = next;
      } else {
        node = it->second;
      }
    }
    nodes_[static_cast<size_t>(node)].token = token;
    first_bytes_[static_cast<unsigned char>(token->content[0])] = true;
  }

  bool empty() const { return nodes_.size() == 1; }

  struct Match {
    size_t begin, end;
    const AddedToken* token;
  };

  // Finds the matches in text with their lstrip / rstrip extensions applied.
  std::vector<Match> find_all(std::string_view text) const {
    std::vector<Match> matches;
    size_t previous_end = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      if (!first_bytes_[static_cast<unsigned char>(text[pos])]) {
        ++pos;
        continue;
      }
      const AddedToken* best = nullptr;
      size_t best_end = 0;
      int node = 0;
      for (size_t i = pos; i < text.size(); ++i) {
        const auto& children = nodes_[static_cast<size_t>(node)].children;
        const auto c = static_cast<unsigned char>(text[i]);
        auto it = std::lower_bound(
            children.begin(), children.end(), c,
            [](const auto& child, unsigned char key) { return child.first < key; });
        if (it == children.end() || it->first != c) break;
        node = it->second;
        if (nodes_[static_cast<size_t>(node)].token) {
          best = nodes_[static_cast<size_t>(node)].token;
          best_end = i + 1;
        }
      }
      if (!best) {
        ++pos;
        continue;
      }
      size_t begin = pos, end = best_end;
      pos = best_end;
      if (best->single_word &&
          !(is_word_boundary_before(text, begin) && is_word_boundary_after(text, end))) {
        continue;
      }
      if (best->lstrip) begin = unicode::skip_whitespace_backward(text, begin, previous_end);
      if (best->rstrip) pos = end = unicode::skip_whitespace_forward(text, end, text.size());
      matches.push_back({begin, end, best});
      previous_end = end;
    }
    return matches;
  }

 private:
  static bool is_word_char(char32_t cp) { return unicode::is_alphanumeric(cp) || cp == '_'; }
  static bool is_word_boundary_before(std::string_view text, size_t at) {
    if (at == 0) return true;
    size_t start = unicode::previous_code_point_start(text, at);
    return !is_word_char(unicode::next_code_point(text, start));
  }
  static bool is_word_boundary_after(std::string_view text, size_t at) {
    if (at >= text.size()) return true;
    return !is_word_char(unicode::next_code_point(text, at));
  }

  struct Node {
    std::vector<std::pair<unsigned char, int>> children;
    const AddedToken* token = nullptr;
  };
  std::vector<Node> nodes_{Node{}};
  bool first_bytes_[256] = {};
};

// ---------------------------------------------------------------------------------------------
// Post-processing: what add_special_tokens puts around one sequence.

struct TemplatePiece {
  bool is_sequence;
  std::vector<int32_t> ids;  // the special token's ids
};

void parse_post_processor(const json& j, const std::string& where,
                          std::vector<TemplatePiece>& out) {
  if (j.is_null()) return;
  const auto type = ju::get<std::string>(j, "type", where);
  auto special_pair = [&](const char* key) {
    const json& pair = ju::required(j, key, where);
    if (!pair.is_array() || pair.size() != 2) {
      throw input_error(ju::member_path(where, key), "expected [\"token\", id]");
    }
    return ju::convert<int32_t>(pair[1], ju::member_path(where, key) + "[1]");
  };
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    std::vector<TemplatePiece> wrapped{{false, {special_pair("cls")}}};
    wrapped.insert(wrapped.end(), out.begin(), out.end());
    if (out.empty()) wrapped.push_back({true, {}});
    wrapped.push_back({false, {special_pair("sep")}});
    out = std::move(wrapped);
    return;
  }
  if (type == "ByteLevel") return;
  if (type == "TemplateProcessing") {
    const json& specials = ju::optional<json>(j, "special_tokens", where, json::object());
    std::vector<TemplatePiece> pieces;
    ju::for_each_element(j, "single", where, [&](const json& item, const std::string& at) {
      if (item.is_object() && item.contains("Sequence")) {
        pieces.push_back({true, {}});
      } else if (item.is_object() && item.contains("SpecialToken")) {
        const auto name = ju::get<std::string>(item["SpecialToken"], "id", at + ".SpecialToken");
        if (!specials.contains(name)) {
          throw input_error(at, "special token '" + name + "' is not in special_tokens");
        }
        const std::string spec_at = ju::member_path(where, "special_tokens." + name);
        TemplatePiece piece{false, {}};
        ju::for_each_element(specials[name], "ids", spec_at,
                             [&](const json& id, const std::string& path) {
                               piece.ids.push_back(ju::convert<int32_t>(id, path));
                             });
        pieces.push_back(std::move(piece));
      } else {
        throw input_error(at, "expected {\"Sequence\": ...} or {\"SpecialToken\": ...}");
      }
    });
    // Applied after what came before in a Sequence: the sequence placeholder stands for it.
    if (!out.empty()) {
      std::vector<TemplatePiece> combined;
      for (auto& p : pieces) {
        if (p.is_sequence)
          combined.insert(combined.end(), out.begin(), out.end());
        else
          combined.push_back(p);
      }
      pieces = std::move(combined);
    }
    out = std::move(pieces);
    return;
  }
  if (type == "Sequence") {
    ju::for_each_element(j, "processors", where, [&](const json& element, const std::string& path) {
      parse_post_processor(element, path, out);
    });
    return;
  }
  throw input_error(ju::member_path(where, "type"),
                    "unsupported post-processor type '" + type + "'");
}

// ---------------------------------------------------------------------------------------------

class HfTokenizer : public Tokenizer {
 public:
  HfTokenizer(const json& j, const std::string& path, const json& config) {
    if (!j.is_object()) throw input_error(path, "expected a JSON object");
    model_ = hf::make_model(ju::required(j, "model", path), path + ": model");
    normalizer_ = hf::make_normalizer(ju::optional<json>(j, "normalizer", path, nullptr),
                                      path + ": normalizer");
    pre_tokenizer_ = hf::make_pre_tokenizer(ju::optional<json>(j, "pre_tokenizer", path, nullptr),
                                            path + ": pre_tokenizer");
    split_template(ju::optional<json>(j, "post_processor", path, nullptr),
                   path + ": post_processor");
    decoder_ =
        hf::make_decoder(ju::optional<json>(j, "decoder", path, nullptr), path + ": decoder");
    load_added_tokens(ju::optional<json>(j, "added_tokens", path, json::array()),
                      path + ": added_tokens");
    resolve_special_tokens(config);
  }

  Encoding encode(std::string_view text) const override {
    require_valid_utf8(text, "text");
    Encoding encoding;
    size_t previous = 0;
    auto encode_segment = [&](size_t begin, size_t end) {
      if (end <= begin) return;
      NormalizedString segment = NormalizedString::from_original(text.substr(begin, end - begin),
                                                                 static_cast<uint32_t>(begin));
      if (normalizer_) normalizer_->normalize(segment);
      encode_normalized(std::move(segment), encoding);
    };
    for (const auto& match : raw_matcher_.find_all(text)) {
      encode_segment(previous, match.begin);
      encoding.ids.push_back(match.token->id);
      encoding.spans.push_back(
          {static_cast<uint32_t>(match.begin), static_cast<uint32_t>(match.end)});
      previous = match.end;
    }
    encode_segment(previous, text.size());
    return encoding;
  }

  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const override {
    std::vector<std::string> tokens;
    for (int32_t id : ids) {
      if (skip_special_tokens && is_special(id)) continue;
      std::string token = id_to_token(id);
      if (!token.empty()) tokens.push_back(std::move(token));
    }
    if (decoder_) decoder_->decode(tokens);
    std::string text;
    for (const auto& t : tokens) text += t;
    return text;
  }

  std::string id_to_token(int32_t id) const override {
    auto it = added_by_id_.find(id);
    if (it != added_by_id_.end()) return it->second->content;
    return model_->id_to_token(id);
  }

  std::optional<int32_t> token_to_id(std::string_view token) const override {
    for (const auto& t : added_) {
      if (t.content == token) return t.id;
    }
    return model_->token_to_id(token);
  }

  size_t vocab_size() const override {
    size_t size = model_->vocab_size();
    for (const auto& t : added_) size = std::max(size, static_cast<size_t>(t.id) + 1);
    return size;
  }

  bool is_special(int32_t id) const override {
    auto it = added_by_id_.find(id);
    return it != added_by_id_.end() && it->second->special;
  }

 private:
  // Splits a normalized segment on normalized added tokens, pre-tokenizes and tokenizes.
  void encode_normalized(NormalizedString segment, Encoding& encoding) const {
    std::vector<NormalizedString> pieces;
    size_t previous = 0;
    const auto matches = normalized_matcher_.empty() ? std::vector<AddedTokenMatcher::Match>{}
                                                     : normalized_matcher_.find_all(segment.text);
    if (matches.empty()) {
      pieces.push_back(std::move(segment));
      tokenize_pieces(pieces, encoding);
      return;
    }
    for (const auto& match : matches) {
      if (match.begin > previous) {
        pieces.assign(1, segment.slice(previous, match.begin));
        tokenize_pieces(pieces, encoding);
      }
      const auto [begin, end] = segment.original_span(match.begin, match.end);
      encoding.ids.push_back(match.token->id);
      encoding.spans.push_back({begin, end});
      previous = match.end;
    }
    if (previous < segment.text.size()) {
      pieces.assign(1, segment.slice(previous, segment.text.size()));
      tokenize_pieces(pieces, encoding);
    }
  }

  void tokenize_pieces(std::vector<NormalizedString>& pieces, Encoding& encoding) const {
    if (pieces.size() == 1 && pieces[0].empty()) return;
    if (pre_tokenizer_) pre_tokenizer_->pre_tokenize(pieces);
    std::vector<hf::ModelToken> tokens;
    for (const auto& piece : pieces) {
      if (piece.empty()) continue;
      tokens.clear();
      model_->tokenize(piece.text, tokens);
      for (const auto& t : tokens) {
        const auto [begin, end] = piece.original_span(t.begin, t.end);
        encoding.ids.push_back(t.id);
        encoding.spans.push_back({begin, end});
      }
    }
  }

  // Reduces the post-processor to the ids it puts before and after one sequence.
  void split_template(const json& post_processor, const std::string& where) {
    std::vector<TemplatePiece> pieces;
    parse_post_processor(post_processor, where, pieces);
    bool seen_sequence = false;
    for (const auto& piece : pieces) {
      if (piece.is_sequence) {
        if (seen_sequence) throw input_error(where, "the single-sequence template holds $A twice");
        seen_sequence = true;
      } else {
        auto& side = seen_sequence ? template_.suffix : template_.prefix;
        side.insert(side.end(), piece.ids.begin(), piece.ids.end());
      }
    }
    if (!pieces.empty() && !seen_sequence)
      throw input_error(where, "the single-sequence template has no $A");
  }

  void load_added_tokens(const json& list, const std::string& where) {
    if (!list.is_array()) throw input_error(where, "expected an array");
    added_.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = where + "[" + std::to_string(i) + "]";
      const json& t = list[i];
      AddedToken token{ju::get<int32_t>(t, "id", at),
                       ju::get<std::string>(t, "content", at),
                       ju::optional<bool>(t, "single_word", at, false),
                       ju::optional<bool>(t, "lstrip", at, false),
                       ju::optional<bool>(t, "rstrip", at, false),
                       ju::optional<bool>(t, "normalized", at, true),
                       ju::optional<bool>(t, "special", at, false)};
      if (token.id < 0 || token.id >= (1 << 24))
        throw input_error(at + ".id", "id outside [0, 16777215]");
      if (token.content.empty()) throw input_error(at + ".content", "empty token");
      require_valid_utf8(token.content, at + ".content");
      added_.push_back(std::move(token));
    }
    for (auto& t : added_) {
      added_by_id_[t.id] = &t;
      if (t.normalized && normalizer_) {
        // Normalized tokens are matched against normalized text, so match their normalized form.
        NormalizedString content = NormalizedString::from_original(t.content, 0);
        normalizer_->normalize(content);
        normalized_contents_.push_back(std::make_unique<AddedToken>(t));
        normalized_contents_.back()->content = content.text;
        normalized_matcher_.add(normalized_contents_.back().get());
      } else if (t.normalized) {
        normalized_matcher_.add(&t);
      } else {
        raw_matcher_.add(&t);
      }
    }
  }

  void resolve_special_tokens(const json& config) {
    // A tokenizer_config.json names the roles; otherwise well-known names and the
    // post-processor's template decide.
    auto from_config = [&](const char* key) -> std::optional<int32_t> {
      if (!config.is_object() || !config.contains(key)) return std::nullopt;
      const json& v = config[key];
      std::string name;
      if (v.is_string())
        name = v.get<std::string>();
      else if (v.is_object() && v.contains("content") && v["content"].is_string())
        name = v["content"].get<std::string>();
      if (name.empty()) return std::nullopt;
      return token_to_id(name);
    };
    auto first_known = [&](std::initializer_list<const char*> names) -> std::optional<int32_t> {
      for (const char* n : names) {
        if (auto id = token_to_id(n)) return id;
      }
      return std::nullopt;
    };
    auto pick = [&](const char* key, std::initializer_list<const char*> names) {
      auto id = from_config(key);
      return id ? id : first_known(names);
    };
    special_.bos = pick("bos_token", {"<s>", "<bos>", "<|begin_of_text|>", "<|startoftext|>"});
    special_.eos = pick("eos_token", {"</s>", "<eos>", "<|end_of_text|>", "<|endoftext|>"});
    special_.pad = pick("pad_token", {"[PAD]", "<pad>", "<|pad|>"});
    special_.unk = pick("unk_token", {"[UNK]", "<unk>"});
    special_.mask = pick("mask_token", {"[MASK]", "<mask>"});
    special_.cls = pick("cls_token", {"[CLS]", "<cls>"});
    special_.sep = pick("sep_token", {"[SEP]", "<sep>"});
    // The template's token before / after the sequence plays CLS / SEP when not named.
    if (!special_.cls && template_.prefix.size() == 1) special_.cls = template_.prefix[0];
    if (!special_.sep && template_.suffix.size() == 1) special_.sep = template_.suffix[0];
    if (!special_.cls) special_.cls = special_.bos;
  }

  std::unique_ptr<hf::Model> model_;
  std::unique_ptr<hf::Normalizer> normalizer_;
  std::unique_ptr<hf::PreTokenizer> pre_tokenizer_;
  std::unique_ptr<hf::Decoder> decoder_;
  std::vector<AddedToken> added_;
  std::vector<std::unique_ptr<AddedToken>> normalized_contents_;
  std::map<int32_t, const AddedToken*> added_by_id_;
  AddedTokenMatcher raw_matcher_, normalized_matcher_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path,
                                             const std::string& tokenizer_config_path) {
  const json j = read_json_file(path);
  const json config =
      tokenizer_config_path.empty() ? json() : read_json_file(tokenizer_config_path);
  return std::make_unique<HfTokenizer>(j, path, config);
}

std::unique_ptr<Tokenizer> parse_hf_tokenizer(std::string_view json_text, const std::string& name) {
  return std::make_unique<HfTokenizer>(ju::parse(json_text, name), name, json());
}

}  // namespace lmk
