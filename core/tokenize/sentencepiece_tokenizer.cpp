#include "core/tokenize/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <filesystem>
#include <thread>
#include <unordered_map>

#include "core/util/error.h"

namespace lmk {

namespace {

class SentencePieceTokenizer : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::string& path) {
    if (!std::filesystem::is_regular_file(path)) throw input_error(path, "no such file");
    const auto status = processor_.Load(path);
    if (!status.ok()) throw input_error(path, "not a valid sentencepiece model: " + status.ToString());
    auto id_of = [&](const char* piece) -> std::optional<int32_t> {
      const int id = processor_.PieceToId(piece);
      if (id == processor_.unk_id() && std::string(piece) != processor_.IdToPiece(id)) return std::nullopt;
      return id;
    };
    auto role = [](int id) -> std::optional<int32_t> { return id >= 0 ? std::optional<int32_t>(id) : std::nullopt; };
    special_.bos = role(processor_.bos_id());
    special_.eos = role(processor_.eos_id());
    special_.pad = id_of("[PAD]") ? id_of("[PAD]") : role(processor_.pad_id());
    special_.unk = role(processor_.unk_id());
    special_.mask = id_of("[MASK]");
    special_.cls = id_of("[CLS]") ? id_of("[CLS]") : special_.bos;
    special_.sep = id_of("[SEP]") ? id_of("[SEP]") : special_.eos;
  }

  Encoding encode(std::string_view text) const override {
    require_valid_utf8(text, "text");
    sentencepiece::ImmutableSentencePieceText spt;
    const auto status = processor_.Encode(absl::string_view(text.data(), text.size()), spt.mutable_proto());
    if (!status.ok()) throw InputError("sentencepiece: " + status.ToString());
    Encoding encoding;
    for (const auto& piece : spt.pieces()) {
      encoding.ids.push_back(static_cast<int32_t>(piece.id()));
      encoding.spans.push_back({piece.begin(), piece.end()});
    }
    return encoding;
  }

  Encoding add_special_tokens(Encoding content) const override {
    Encoding out;
    const uint32_t first = content.spans.empty() ? 0 : content.spans.front().begin;
    const uint32_t last = content.spans.empty() ? 0 : content.spans.back().end;
    if (special_.cls) {
      out.ids.push_back(*special_.cls);
      out.spans.push_back({first, first});
    }
    out.ids.insert(out.ids.end(), content.ids.begin(), content.ids.end());
    out.spans.insert(out.spans.end(), content.spans.begin(), content.spans.end());
    if (special_.sep) {
      out.ids.push_back(*special_.sep);
      out.spans.push_back({last, last});
    }
    return out;
  }

  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const override {
    std::vector<int> kept;
    for (int32_t id : ids) {
      if (id < 0 || static_cast<size_t>(id) >= vocab_size()) continue;
      if (skip_special_tokens && is_special(id)) continue;
      kept.push_back(id);
    }
    std::string text;
    processor_.Decode(kept, &text).IgnoreError();
    return text;
  }

  std::string id_to_token(int32_t id) const override {
    if (id < 0 || static_cast<size_t>(id) >= vocab_size()) return {};
    return processor_.IdToPiece(id);
  }

  std::optional<int32_t> token_to_id(std::string_view token) const override {
    const std::string piece(token);
    const int id = processor_.PieceToId(piece);
    if (id == processor_.unk_id() && processor_.IdToPiece(id) != piece) return std::nullopt;
    return id;
  }

  size_t vocab_size() const override { return static_cast<size_t>(processor_.GetPieceSize()); }

  bool is_special(int32_t id) const override {
    return processor_.IsControl(id) || processor_.IsUnknown(id);
  }

 private:
  sentencepiece::SentencePieceProcessor processor_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_sentencepiece_tokenizer(const std::string& path) {
  return std::make_unique<SentencePieceTokenizer>(path);
}

void train_sentencepiece(const SentencePieceTrainOptions& options) {
  if (options.inputs.empty()) throw InputError("tokenizer-train: no input text files");
  if (options.vocab_size < 16) throw input_error("--vocab-size", "must be at least 16");
  if (options.model_type != "unigram" && options.model_type != "bpe") {
    throw input_error("--model-type", "must be unigram or bpe, got '" + options.model_type + "'");
  }
  std::string inputs;
  for (const auto& f : options.inputs) {
    if (f.find(',') != std::string::npos) throw input_error(f, "file names with commas are not supported");
    inputs += (inputs.empty() ? "" : ",") + f;
  }
  std::string prefix = options.output_model;
  if (prefix.size() > 6 && prefix.compare(prefix.size() - 6, 6, ".model") == 0) prefix.resize(prefix.size() - 6);
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::unordered_map<std::string, std::string> args = {
      {"input", inputs},
      {"model_prefix", prefix},
      {"vocab_size", std::to_string(options.vocab_size)},
      {"model_type", options.model_type},
      {"character_coverage", std::to_string(options.character_coverage)},
      {"input_sentence_size", std::to_string(options.max_sentences)},
      {"shuffle_input_sentence", "true"},
      {"num_threads", std::to_string(threads)},
      {"byte_fallback", "true"},
      {"pad_id", "0"},
      {"unk_id", "1"},
      {"bos_id", "-1"},
      {"eos_id", "-1"},
      {"control_symbols", "[CLS],[SEP],[MASK]"},
      {"max_sentence_length", "16384"},
      {"hard_vocab_limit", "false"},
      {"minloglevel", "1"},
  };
  const auto status = sentencepiece::SentencePieceTrainer::Train(args);
  if (!status.ok()) throw InputError("tokenizer-train: " + status.ToString());
}

}  // namespace lmk
