#include "core/tokenize/hf_components.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/util/error.h"
#include "core/util/json_util.h"
#include "core/util/unicode.h"

namespace lmk::hf {

using nlohmann::json;
namespace ju = json_util;

// ---------------------------------------------------------------------------------------------
// Patterns and splitting

Pattern Pattern::literal(std::string text) {
  Pattern p;
  p.literal_ = std::move(text);
  return p;
}

Pattern Pattern::regex(std::string_view pattern, const std::string& where) {
  Pattern p;
  p.regex_ = std::make_shared<const Regex>(pattern, where);
  return p;
}

Pattern Pattern::characters(std::function<bool(char32_t)> predicate) {
  Pattern p;
  p.predicate_ = std::move(predicate);
  return p;
}

Pattern Pattern::from_json(const json& j, const std::string& where) {
  if (j.is_object() && j.contains("String"))
    return literal(ju::get<std::string>(j, "String", where));
  if (j.is_object() && j.contains("Regex")) {
    return regex(ju::get<std::string>(j, "Regex", where), ju::member_path(where, "Regex"));
  }
  throw input_error(where, "expected {\"String\": ...} or {\"Regex\": ...}");
}

std::vector<std::pair<size_t, size_t>> Pattern::find_all(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> matches;
  if (regex_) return regex_->find_all(text);
  if (predicate_) {
    size_t pos = 0;
    while (pos < text.size()) {
      const size_t begin = pos;
      if (predicate_(unicode::next_code_point(text, pos))) matches.emplace_back(begin, pos);
    }
    return matches;
  }
  if (literal_.empty()) return matches;
  for (size_t at = text.find(literal_); at != std::string_view::npos;
       at = text.find(literal_, at + literal_.size())) {
    matches.emplace_back(at, at + literal_.size());
  }
  return matches;
}

void split_normalized(const NormalizedString& s, const Pattern& pattern, SplitBehavior behavior,
                      bool invert, std::vector<NormalizedString>& out) {
  // (begin, end, is_match) covering the whole text, as Hugging Face's find_matches.
  struct Range {
    size_t begin, end;
    bool is_match;
  };
  std::vector<Range> ranges;
  size_t previous = 0;
  for (const auto& [begin, end] : pattern.find_all(s.text)) {
    if (previous != begin) ranges.push_back({previous, begin, false});
    ranges.push_back({begin, end, true});
    previous = end;
  }
  if (previous != s.text.size() || ranges.empty())
    ranges.push_back({previous, s.text.size(), false});
  if (invert) {
    for (auto& r : ranges) r.is_match = !r.is_match;
  }

  // (begin, end, remove)
  std::vector<Range> pieces;
  bool previous_match = false;
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const auto& r : ranges) pieces.push_back({r.begin, r.end, false});
      break;
    case SplitBehavior::Removed:
      pieces = ranges;
      break;
    case SplitBehavior::Contiguous:
      for (const auto& r : ranges) {
        if (r.is_match == previous_match && !pieces.empty()) {
          pieces.back().end = r.end;
        } else {
          pieces.push_back({r.begin, r.end, false});
        }
        previous_match = r.is_match;
      }
      break;
    case SplitBehavior::MergedWithPrevious:
      for (const auto& r : ranges) {
        if (r.is_match && !previous_match && !pieces.empty()) {
          pieces.back().end = r.end;
        } else {
          pieces.push_back({r.begin, r.end, false});
        }
        previous_match = r.is_match;
      }
      break;
    case SplitBehavior::MergedWithNext:
      for (auto it = ranges.rbegin(); it != ranges.rend(); ++it) {
        if (it->is_match && !previous_match && !pieces.empty()) {
          pieces.back().begin = it->begin;
        } else {
          pieces.push_back({it->begin, it->end, false});
        }
        previous_match = it->is_match;
      }
      std::reverse(pieces.begin(), pieces.end());
      break;
  }
  for (const auto& p : pieces) {
    if (!p.is_match && p.end > p.begin) out.push_back(s.slice(p.begin, p.end));
  }
}

static SplitBehavior parse_behavior(const json& j, const std::string& where) {
  const auto name = ju::get<std::string>(j, "behavior", where);
  if (name == "Removed") return SplitBehavior::Removed;
  if (name == "Isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous") return SplitBehavior::Contiguous;
  throw input_error(ju::member_path(where, "behavior"), "unknown split behavior '" + name + "'");
}

// Hugging Face's BERT components classify characters with Unicode 8.0 tables (the
// unicode_categories crate): characters assigned later are neither punctuation, control nor
// marks there. These predicates reproduce that.
static bool is_bert_punctuation(char32_t cp) {
  if (cp < 0x80) {
    return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
           (cp >= 123 && cp <= 126);
  }
  return unicode::is_punctuation(cp) && unicode::assigned_in_unicode_8(cp);
}

// General category Cc Cf Cs Co as of Unicode 8.0 (unassigned characters are not control).
static bool is_bert_control(char32_t cp) {
  return unicode::is_other(cp) && unicode::assigned_in_unicode_8(cp);
}

// General category Mn as of Unicode 8.0.
static bool is_bert_nonspacing_mark(char32_t cp) {
  return unicode::is_nonspacing_mark(cp) && unicode::assigned_in_unicode_8(cp);
}

// ---------------------------------------------------------------------------------------------
// Normalizers

namespace {

// Applies a Unicode normal form. The text is normalized in segments that start at ASCII
// characters: an ASCII character never combines with what precedes it, so the segments
// normalize exactly as the whole string does, and each output character can be placed on a
// source character of its segment.
void normalize_unicode(NormalizedString& s, unicode::NormalForm form) {
  if (std::all_of(s.text.begin(), s.text.end(), [](char c) { return (c & 0x80) == 0; })) return;
  NormalizedString out;
  out.original_begin = s.original_begin;
  out.original_end = s.original_end;
  size_t pos = 0;
  std::vector<uint32_t> source_origins;
  while (pos < s.text.size()) {
    const size_t begin = pos;
    source_origins.clear();
    source_origins.push_back(s.origin[pos]);
    pos += unicode::sequence_length(static_cast<unsigned char>(s.text[pos]));
    while (pos < s.text.size() && (s.text[pos] & 0x80)) {
      source_origins.push_back(s.origin[pos]);
      pos += unicode::sequence_length(static_cast<unsigned char>(s.text[pos]));
    }
    if (pos - begin == 1) {
      out.text.push_back(s.text[begin]);
      out.origin.push_back(s.origin[begin]);
      continue;
    }
    const std::string normalized =
        unicode::normalize(std::string_view(s.text).substr(begin, pos - begin), form);
    size_t k = 0, char_index = 0;
    while (k < normalized.size()) {
      const size_t length = unicode::sequence_length(static_cast<unsigned char>(normalized[k]));
      const uint32_t origin = source_origins[std::min(char_index, source_origins.size() - 1)];
      out.text.append(normalized, k, length);
      out.origin.insert(out.origin.end(), length, origin);
      k += length;
      ++char_index;
    }
  }
  s = std::move(out);
}

// Replaces every match of pattern by content.
void replace_matches(NormalizedString& s, const Pattern& pattern, const std::string& content) {
  const auto matches = pattern.find_all(s.text);
  if (matches.empty()) return;
  NormalizedString out;
  out.original_begin = s.original_begin;
  out.original_end = s.original_end;
  size_t previous = 0;
  for (const auto& [begin, end] : matches) {
    out.text.append(s.text, previous, begin - previous);
    out.origin.insert(out.origin.end(), s.origin.begin() + previous, s.origin.begin() + begin);
    out.text += content;
    out.origin.insert(out.origin.end(), content.size(),
                      begin < s.origin.size() ? s.origin[begin] : s.original_end);
    previous = end;
  }
  out.text.append(s.text, previous, std::string::npos);
  out.origin.insert(out.origin.end(), s.origin.begin() + previous, s.origin.end());
  s = std::move(out);
}

bool is_chinese_char(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

class BertNormalizer : public Normalizer {
 public:
  BertNormalizer(bool clean_text, bool handle_chinese_chars, bool strip_accents, bool lowercase)
      : clean_text_(clean_text),
        handle_chinese_chars_(handle_chinese_chars),
        strip_accents_(strip_accents),
        lowercase_(lowercase) {}

  void normalize(NormalizedString& s) const override {
    if (clean_text_) {
      transform_chars(s, [](char32_t cp, std::string& out) {
        if (cp == 0 || cp == 0xFFFD) return;
        const bool control_exempt = cp == '\t' || cp == '\n' || cp == '\r';
        if (!control_exempt && is_bert_control(cp)) return;
        if (control_exempt || unicode::is_whitespace(cp)) {
          out.push_back(' ');
        } else {
          unicode::append_utf8(out, cp);
        }
      });
    }
    if (handle_chinese_chars_) {
      transform_chars(s, [](char32_t cp, std::string& out) {
        if (is_chinese_char(cp)) {
          out.push_back(' ');
          unicode::append_utf8(out, cp);
          out.push_back(' ');
        } else {
          unicode::append_utf8(out, cp);
        }
      });
    }
    if (strip_accents_) {
      normalize_unicode(s, unicode::NormalForm::NFD);
      transform_chars(s, [](char32_t cp, std::string& out) {
        if (!is_bert_nonspacing_mark(cp)) unicode::append_utf8(out, cp);
      });
    }
    if (lowercase_)
      transform_chars(s, [](char32_t cp, std::string& out) { unicode::append_lowercase(out, cp); });
  }

 private:
  bool clean_text_, handle_chinese_chars_, strip_accents_, lowercase_;
};

class LowercaseNormalizer : public Normalizer {
 public:
  void normalize(NormalizedString& s) const override {
    transform_chars(s, [](char32_t cp, std::string& out) { unicode::append_lowercase(out, cp); });
  }
};

class StripAccentsNormalizer : public Normalizer {
 public:
  void normalize(NormalizedString& s) const override {
    transform_chars(s, [](char32_t cp, std::string& out) {
      if (!unicode::is_mark(cp)) unicode::append_utf8(out, cp);
    });
  }
};

class UnicodeNormalizer : public Normalizer {
 public:
  explicit UnicodeNormalizer(unicode::NormalForm form) : form_(form) {}
  void normalize(NormalizedString& s) const override { normalize_unicode(s, form_); }

 private:
  unicode::NormalForm form_;
};

class StripNormalizer : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void normalize(NormalizedString& s) const override {
    size_t begin = 0, end = s.text.size();
    if (left_) begin = unicode::skip_whitespace_forward(s.text, 0, end);
    if (right_) end = unicode::skip_whitespace_backward(s.text, end, begin);
    if (begin != 0 || end != s.text.size()) {
      NormalizedString stripped = s.slice(begin, end);
      stripped.original_begin = s.original_begin;
      stripped.original_end = s.original_end;
      s = std::move(stripped);
    }
  }

 private:
  bool left_, right_;
};

class ReplaceNormalizer : public Normalizer {
 public:
  ReplaceNormalizer(Pattern pattern, std::string content)
      : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void normalize(NormalizedString& s) const override { replace_matches(s, pattern_, content_); }

 private:
  Pattern pattern_;
  std::string content_;
};

class PrependNormalizer : public Normalizer {
 public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(NormalizedString& s) const override {
    if (!s.empty()) s.prepend(prefix_);
  }

 private:
  std::string prefix_;
};

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> steps)
      : steps_(std::move(steps)) {}
  void normalize(NormalizedString& s) const override {
    for (const auto& step : steps_) step->normalize(s);
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const json& j, const std::string& where) {
  if (j.is_null()) return nullptr;
  const auto type = ju::get<std::string>(j, "type", where);
  if (type == "BertNormalizer") {
    const bool lowercase = ju::optional<bool>(j, "lowercase", where, true);
    return std::make_unique<BertNormalizer>(
        ju::optional<bool>(j, "clean_text", where, true),
        ju::optional<bool>(j, "handle_chinese_chars", where, true),
        ju::optional<bool>(j, "strip_accents", where, lowercase), lowercase);
  }
  if (type == "Lowercase") return std::make_unique<LowercaseNormalizer>();
  if (type == "StripAccents") return std::make_unique<StripAccentsNormalizer>();
  if (type == "NFC") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::NFC);
  if (type == "NFD") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::NFD);
  if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::NFKC);
  if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(unicode::NormalForm::NFKD);
  if (type == "Strip") {
    return std::make_unique<StripNormalizer>(ju::optional<bool>(j, "strip_left", where, true),
                                             ju::optional<bool>(j, "strip_right", where, true));
  }
  if (type == "Replace") {
    return std::make_unique<ReplaceNormalizer>(
        Pattern::from_json(ju::required(j, "pattern", where), ju::member_path(where, "pattern")),
        ju::get<std::string>(j, "content", where));
  }
  if (type == "Prepend")
    return std::make_unique<PrependNormalizer>(ju::get<std::string>(j, "prepend", where));
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> steps;
    ju::for_each_element(j, "normalizers", where,
                         [&](const json& element, const std::string& path) {
                           if (auto step = make_normalizer(element, path))
                             steps.push_back(std::move(step));
                         });
    return std::make_unique<SequenceNormalizer>(std::move(steps));
  }
  throw input_error(ju::member_path(where, "type"), "unsupported normalizer type '" + type + "'");
}

// ---------------------------------------------------------------------------------------------
// Pre-tokenizers

const std::vector<std::string>& byte_level_alphabet() {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable =
          (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t cp =
          printable ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + extra++);
      unicode::append_utf8(t[b], cp);
    }
    return t;
  }();
  return table;
}

namespace {

const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Runs split_normalized over every piece.
void split_all(std::vector<NormalizedString>& pieces, const Pattern& pattern,
               SplitBehavior behavior, bool invert) {
  std::vector<NormalizedString> out;
  out.reserve(pieces.size() * 4);
  for (const auto& piece : pieces) split_normalized(piece, pattern, behavior, invert, out);
  pieces = std::move(out);
}

class ByteLevelPreTokenizer : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space),
        regex_(use_regex ? std::optional<Pattern>(Pattern::regex(kGpt2Pattern, "ByteLevel"))
                         : std::nullopt) {}

  void pre_tokenize(std::vector<NormalizedString>& pieces) const override {
    if (add_prefix_space_) {
      for (auto& piece : pieces) {
        if (piece.text.empty() || piece.text[0] != ' ') piece.prepend(" ");
      }
    }
    if (regex_) split_all(pieces, *regex_, SplitBehavior::Isolated, false);
    const auto& alphabet = byte_level_alphabet();
    for (auto& piece : pieces) {
      NormalizedString mapped;
      mapped.original_begin = piece.original_begin;
      mapped.original_end = piece.original_end;
      mapped.text.reserve(piece.text.size() * 2);
      mapped.origin.reserve(piece.text.size() * 2);
      for (size_t i = 0; i < piece.text.size(); ++i) {
        const std::string& symbol = alphabet[static_cast<unsigned char>(piece.text[i])];
        mapped.text += symbol;
        mapped.origin.insert(mapped.origin.end(), symbol.size(), piece.origin[i]);
      }
      piece = std::move(mapped);
    }
  }

 private:
  bool add_prefix_space_;
  std::optional<Pattern> regex_;
};

class SplitPreTokenizer : public PreTokenizer {
 public:
  SplitPreTokenizer(Pattern pattern, SplitBehavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(std::vector<NormalizedString>& pieces) const override {
    split_all(pieces, pattern_, behavior_, invert_);
  }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

class BertPreTokenizer : public PreTokenizer {
 public:
  void pre_tokenize(std::vector<NormalizedString>& pieces) const override {
    split_all(pieces, whitespace_, SplitBehavior::Removed, false);
    split_all(pieces, punctuation_, SplitBehavior::Isolated, false);
  }

 private:
  Pattern whitespace_ = Pattern::characters(unicode::is_whitespace);
  Pattern punctuation_ = Pattern::characters(is_bert_punctuation);
};

enum class PrependScheme { Always, First, Never };

class MetaspacePreTokenizer : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)),
        scheme_(scheme),
        split_(split),
        space_(Pattern::literal(" ")),
        replacement_pattern_(Pattern::literal(replacement_)) {}

  void pre_tokenize(std::vector<NormalizedString>& pieces) const override {
    for (auto& piece : pieces) {
      replace_matches(piece, space_, replacement_);
      const bool starts_with_replacement =
          piece.text.compare(0, replacement_.size(), replacement_) == 0;
      if (!starts_with_replacement &&
          (scheme_ == PrependScheme::Always ||
           (scheme_ == PrependScheme::First && piece.original_begin == 0))) {
        piece.prepend(replacement_);
      }
    }
    if (split_) split_all(pieces, replacement_pattern_, SplitBehavior::MergedWithNext, false);
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
  Pattern space_;
  Pattern replacement_pattern_;
};

class SequencePreTokenizer : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps)
      : steps_(std::move(steps)) {}
  void pre_tokenize(std::vector<NormalizedString>& pieces) const override {
    for (const auto& step : steps_) step->pre_tokenize(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

PrependScheme parse_prepend_scheme(const json& j, const std::string& where) {
  if (j.contains("prepend_scheme") && !j["prepend_scheme"].is_null()) {
    const auto name = ju::get<std::string>(j, "prepend_scheme", where);
    if (name == "always") return PrependScheme::Always;
    if (name == "first") return PrependScheme::First;
    if (name == "never") return PrependScheme::Never;
    throw input_error(ju::member_path(where, "prepend_scheme"), "unknown value '" + name + "'");
  }
  return ju::optional<bool>(j, "add_prefix_space", where, true) ? PrependScheme::Always
                                                                : PrependScheme::Never;
}

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const json& j, const std::string& where) {
  if (j.is_null()) return nullptr;
  const auto type = ju::get<std::string>(j, "type", where);
  if (type == "ByteLevel") {
    return std::make_unique<ByteLevelPreTokenizer>(
        ju::optional<bool>(j, "add_prefix_space", where, true),
        ju::optional<bool>(j, "use_regex", where, true));
  }
  if (type == "Split") {
    return std::make_unique<SplitPreTokenizer>(
        Pattern::from_json(ju::required(j, "pattern", where), ju::member_path(where, "pattern")),
        parse_behavior(j, where), ju::optional<bool>(j, "invert", where, false));
  }
  if (type == "BertPreTokenizer") return std::make_unique<BertPreTokenizer>();
  if (type == "Whitespace") {
    return std::make_unique<SplitPreTokenizer>(Pattern::regex(R"(\w+|[^\w\s]+)", where),
                                               SplitBehavior::Removed, true);
  }
  if (type == "WhitespaceSplit") {
    return std::make_unique<SplitPreTokenizer>(Pattern::characters(unicode::is_whitespace),
                                               SplitBehavior::Removed, false);
  }
  if (type == "Punctuation") {
    const auto behavior =
        j.contains("behavior") ? parse_behavior(j, where) : SplitBehavior::Isolated;
    return std::make_unique<SplitPreTokenizer>(Pattern::characters(is_bert_punctuation), behavior,
                                               false);
  }
  if (type == "Digits") {
    const bool individual = ju::optional<bool>(j, "individual_digits", where, false);
    return std::make_unique<SplitPreTokenizer>(
        Pattern::characters(unicode::is_numeric),
        individual ? SplitBehavior::Isolated : SplitBehavior::Contiguous, false);
  }
  if (type == "CharDelimiterSplit") {
    const auto delimiter = ju::get<std::string>(j, "delimiter", where);
    return std::make_unique<SplitPreTokenizer>(Pattern::literal(delimiter), SplitBehavior::Removed,
                                               false);
  }
  if (type == "Metaspace") {
    return std::make_unique<MetaspacePreTokenizer>(
        ju::optional<std::string>(j, "replacement", where, "\xE2\x96\x81"),
        parse_prepend_scheme(j, where), ju::optional<bool>(j, "split", where, true));
  }
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    ju::for_each_element(j, "pretokenizers", where,
                         [&](const json& element, const std::string& path) {
                           if (auto step = make_pre_tokenizer(element, path))
                             steps.push_back(std::move(step));
                         });
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
  }
  throw input_error(ju::member_path(where, "type"),
                    "unsupported pre-tokenizer type '" + type + "'");
}

}  // namespace lmk::hf
