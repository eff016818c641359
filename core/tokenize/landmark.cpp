#include "core/tokenize/landmark.h"

#include <stdexcept>

#include <algorithm>
#include <charconv>

#include "core/tokenize/sentence_splitter.h"
#include "core/util/error.h"
#include "core/util/paper_defaults.h"
#include "core/util/random.h"

namespace lmk {

namespace {

int parse_granularity(std::string_view text, const std::string& where) {
  int g = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), g);
  if (ec != std::errc() || end != text.data() + text.size()) {
    throw input_error(where, "granularity '" + std::string(text) + "' is not an integer");
  }
  if (g <= 0) throw input_error(where, "granularity must be > 0, got " + std::string(text));
  return g;
}

std::vector<int> parse_granularity_list(std::string_view text, const std::string& where) {
  std::vector<int> list;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const auto item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    list.push_back(parse_granularity(item, where));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return list;
}

}  // namespace

LandmarkSpec LandmarkSpec::parse(std::string_view text, const std::string& where) {
  LandmarkSpec spec;
  const size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const std::string_view arg =
      colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  const bool has_arg = colon != std::string_view::npos;
  if (name == "none" && !has_arg) {
    spec.mode = LandmarkMode::None;
  } else if (name == "fixed") {
    if (!has_arg) throw input_error(where, "fixed needs a granularity, e.g. fixed:32");
    spec.mode = LandmarkMode::Fixed;
    spec.granularities = {parse_granularity(arg, where)};
  } else if (name == "variable") {
    spec.mode = LandmarkMode::Variable;
    spec.granularities = has_arg ? parse_granularity_list(arg, where)
                                 : std::vector<int>(paper::kTrainGranularities.begin(),
                                                    paper::kTrainGranularities.end());
  } else if (name == "sentence") {
    spec.mode = LandmarkMode::Sentence;
    spec.granularities = {has_arg ? parse_granularity(arg, where) : paper::kSentenceGranularity};
  } else if (name == "multicls") {
    spec.mode = LandmarkMode::MultiCls;
    spec.granularities = {has_arg ? parse_granularity(arg, where) : paper::kGranularity};
  } else {
    throw input_error(where,
                      "unknown landmark mode '" + std::string(text) +
                          "' (none | fixed:G | variable:G1,G2,.. | sentence[:G] | multicls[:G])");
  }
  return spec;
}

LandmarkSpec LandmarkSpec::of(LandmarkMode mode, int granularity) {
  if ((mode != LandmarkMode::Fixed && mode != LandmarkMode::MultiCls) || granularity <= 0)
    throw std::invalid_argument("LandmarkSpec::of: a fixed or multicls layout with g > 0");
  LandmarkSpec spec;
  spec.mode = mode;
  spec.granularities = {granularity};
  return spec;
}

std::string LandmarkSpec::to_string() const {
  auto list = [&] {
    std::string s;
    for (size_t i = 0; i < granularities.size(); ++i)
      s += (i ? "," : "") + std::to_string(granularities[i]);
    return s;
  };
  switch (mode) {
    case LandmarkMode::None:
      return "none";
    case LandmarkMode::Fixed:
      return "fixed:" + list();
    case LandmarkMode::Variable:
      return "variable:" + list();
    case LandmarkMode::Sentence:
      return "sentence:" + list();
    case LandmarkMode::MultiCls:
      return "multicls:" + list();
  }
  return "none";
}

LandmarkSpec default_train_landmarks() {
  return LandmarkSpec::parse(paper::train_landmarks_text(), "paper::train_landmarks_text");
}
LandmarkSpec default_eval_landmarks() {
  return LandmarkSpec::parse(paper::eval_landmarks_text(), "paper::eval_landmarks_text");
}

LandmarkTokenizer::LandmarkTokenizer(const Tokenizer& tokenizer, LandmarkOptions options)
    : tokenizer_(tokenizer), options_(std::move(options)) {
  const auto& special = tokenizer_.special_tokens();
  const bool decoder = options_.decoder;
  if (decoder) eos_ = special.eos ? special.eos : special.sep;
  if (options_.spec.mode != LandmarkMode::None) {
    if (options_.spec.granularities.empty()) throw FieldError("spec", "no granularity given");
    if (special.cls) cls_token_ = *special.cls;
    if (decoder) {
      opening_ = tokenizer_.sequence_template().prefix;
    } else if (special.cls) {
      opening_ = {*special.cls};
    }
    if (cls_token_ < 0 && (!decoder || options_.spec.mode == LandmarkMode::MultiCls))
      throw InputError("the tokenizer has no [CLS] / <s> / BOS token to open the input");
    end_token_ = decoder ? eos_ : special.sep ? special.sep : special.eos;
    if (options_.landmark_token) {
      if (*options_.landmark_token < 0 ||
          static_cast<size_t>(*options_.landmark_token) >= tokenizer_.vocab_size()) {
        throw FieldError("landmark_token", "id " + std::to_string(*options_.landmark_token) +
                                               " is outside the vocabulary");
      }
      landmark_token_ = *options_.landmark_token;
    } else if (end_token_) {
      landmark_token_ = *end_token_;
    } else if (options_.spec.mode != LandmarkMode::MultiCls) {
      throw InputError(
          "the tokenizer has no [SEP] or EOS token to use as landmark; pass --landmark-token ID");
    }
  }
}

int LandmarkTokenizer::granularity_for_row(uint64_t row) const {
  const auto& set = options_.spec.granularities;
  if (set.empty()) return 0;
  if (options_.spec.mode != LandmarkMode::Variable || set.size() == 1) return set.front();
  // splitmix64: the draw for row r depends on (seed, r) only.
  return set[splitmix64(options_.seed ^ splitmix64(row)) % set.size()];
}

TokenizedText LandmarkTokenizer::tokenize(std::string_view text, uint64_t row) const {
  return arrange(tokenizer_.encode(text), text, row);
}

TokenizedText LandmarkTokenizer::arrange(const Encoding& content, std::string_view text,
                                         uint64_t row) const {
  const size_t n = content.ids.size();
  const int g = granularity_for_row(row);
  switch (options_.spec.mode) {
    case LandmarkMode::None: {
      // The tokenizer's own template; truncation drops content and keeps the template's
      // tokens, as Hugging Face truncation does.
      const SequenceTemplate& tmpl = tokenizer_.sequence_template();
      // A decoder's input ends with EOS (what `last` pools) unless the template ends so.
      const bool add_eos = eos_ && (tmpl.suffix.empty() || tmpl.suffix.back() != *eos_);
      const size_t specials = tmpl.prefix.size() + tmpl.suffix.size() + (add_eos ? 1 : 0);
      size_t kept = n;
      if (options_.max_length > 0 && n + specials > options_.max_length) {
        kept = options_.max_length > specials ? options_.max_length - specials : 0;
      }
      Encoding wrapped;
      if (kept == n) {
        wrapped = tokenizer_.add_special_tokens(content);
      } else {
        Encoding truncated;
        truncated.ids.assign(content.ids.begin(), content.ids.begin() + static_cast<long>(kept));
        truncated.spans.assign(content.spans.begin(),
                               content.spans.begin() + static_cast<long>(kept));
        wrapped = tokenizer_.add_special_tokens(truncated);
      }
      if (add_eos) {
        const uint32_t at = wrapped.spans.empty() ? 0 : wrapped.spans.back().end;
        wrapped.ids.push_back(*eos_);
        wrapped.spans.push_back({at, at});
      }
      TokenizedText out;
      out.ids = std::move(wrapped.ids);
      out.spans = std::move(wrapped.spans);
      out.token_offsets.assign(out.ids.size(), -1);
      for (size_t i = 0; i < kept; ++i)
        out.token_offsets[tmpl.prefix.size() + i] = static_cast<int32_t>(i);
      if (options_.max_length > 0 && out.ids.size() > options_.max_length) {
        // Only when the template alone is longer than max_length.
        out.ids.resize(options_.max_length);
        out.spans.resize(options_.max_length);
        out.token_offsets.resize(options_.max_length);
      }
      return out;
    }
    case LandmarkMode::Fixed:
    case LandmarkMode::Variable: {
      std::vector<size_t> ends;
      for (size_t end = static_cast<size_t>(g); end < n + static_cast<size_t>(g);
           end += static_cast<size_t>(g)) {
        ends.push_back(std::min(end, n));
      }
      if (ends.empty()) ends.push_back(0);  // no content: [CLS] LMK
      return arrange_chunks(content, ends, g);
    }
    case LandmarkMode::Sentence: {
      // Each content token belongs to the sentence its first byte lies in.
      const std::vector<size_t> sentence_ends = split_sentences(text);
      std::vector<size_t> ends;
      size_t chunk_start = 0, sentence = 0;
      for (size_t i = 0; i < n; ++i) {
        while (sentence < sentence_ends.size() &&
               content.spans[i].begin >= sentence_ends[sentence]) {
          if (i > chunk_start) {
            ends.push_back(i);
            chunk_start = i;
          }
          ++sentence;
        }
        if (i + 1 - chunk_start > static_cast<size_t>(g)) {  // overlong sentence: chunk by g
          ends.push_back(i);
          chunk_start = i;
        }
      }
      if (n > chunk_start || ends.empty()) ends.push_back(n);
      return arrange_chunks(content, ends, g);
    }
    case LandmarkMode::MultiCls:
      return arrange_multicls(content, g);
  }
  return {};
}

TokenizedText LandmarkTokenizer::arrange_chunks(const Encoding& content,
                                                const std::vector<size_t>& chunk_ends,
                                                int g) const {
  TokenizedText out;
  out.granularity = g;
  const size_t n = content.ids.size();
  const uint32_t first = n ? content.spans.front().begin : 0;
  out.ids.reserve(n + chunk_ends.size() + opening_.size());
  for (const int32_t token : opening_) {
    out.ids.push_back(token);
    out.spans.push_back({first, first});
    out.token_offsets.push_back(-1);
  }
  size_t begin = 0;
  for (size_t end : chunk_ends) {
    for (size_t i = begin; i < end; ++i) {
      out.ids.push_back(content.ids[i]);
      out.spans.push_back(content.spans[i]);
      out.token_offsets.push_back(static_cast<int32_t>(i));
    }
    const uint32_t at = end > 0 ? content.spans[end - 1].end : 0;
    out.pool_positions.push_back(static_cast<int32_t>(out.ids.size()));
    out.ids.push_back(landmark_token_);
    out.spans.push_back({at, at});
    out.token_offsets.push_back(-1);
    begin = end;
  }
  truncate(out);
  return out;
}

TokenizedText LandmarkTokenizer::arrange_multicls(const Encoding& content, int g) const {
  TokenizedText out;
  out.granularity = g;
  const size_t n = content.ids.size();
  for (size_t begin = 0; begin < n || begin == 0; begin += static_cast<size_t>(g)) {
    const uint32_t at = n ? content.spans[std::min(begin, n - 1)].begin : 0;
    out.pool_positions.push_back(static_cast<int32_t>(out.ids.size()));
    out.ids.push_back(cls_token_);
    out.spans.push_back({at, at});
    out.token_offsets.push_back(-1);
    for (size_t i = begin; i < std::min(n, begin + static_cast<size_t>(g)); ++i) {
      out.ids.push_back(content.ids[i]);
      out.spans.push_back(content.spans[i]);
      out.token_offsets.push_back(static_cast<int32_t>(i));
    }
    if (n == 0) break;
  }
  if (end_token_) {
    const uint32_t at = n ? content.spans.back().end : 0;
    out.ids.push_back(*end_token_);
    out.spans.push_back({at, at});
    out.token_offsets.push_back(-1);
  }
  truncate(out);
  return out;
}

void LandmarkTokenizer::truncate(TokenizedText& out) const {
  const size_t max_length = options_.max_length;
  if (max_length > 0 && out.ids.size() > max_length) {
    out.ids.resize(max_length);
    out.spans.resize(max_length);
    out.token_offsets.resize(max_length);
    while (!out.pool_positions.empty() &&
           static_cast<size_t>(out.pool_positions.back()) >= max_length) {
      out.pool_positions.pop_back();
    }
  }
  if (out.pool_positions.empty()) {
    // Algorithm 1: when no landmark survives, the last position becomes one, unless it is an
    // opening token ([CLS], a decoder's BOS), which then stands as the landmark as it is (a
    // decoder without an opening token turns even a lone first position into its landmark).
    const size_t last = out.ids.size() - 1;
    if (last >= opening_.size()) {
      out.ids[last] = landmark_token_;
      out.token_offsets[last] = -1;
      out.spans[last] = {out.spans[last].end, out.spans[last].end};
    }
    out.pool_positions.push_back(static_cast<int32_t>(last));
  }
}

}  // namespace lmk
