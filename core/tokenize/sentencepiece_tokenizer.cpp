#include "core/tokenize/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "core/util/error.h"

namespace lmk {

namespace fs = std::filesystem;

namespace {

// libsentencepiece (Debian's) embeds and exports its own protobuf. Debian's LibTorch 1.13 loaded
// the system's libprotobuf beside it, and the two interposed each other: sentencepiece lived in
// a module of its own in a separate link-map namespace (dlmopen) until 2026-12. The PyPI wheel's
// LibTorch links its protobuf statically and exports none of it (34 symbols of ONNX message
// types only), so sentencepiece is linked as any library; tested in the model commands, which
// load both (SentencePieceTest, the CLI tests).
class SentencePieceTokenizer : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::string& path) {
    if (!fs::is_regular_file(path)) throw input_error(path, "no such file");
    const auto status = processor_.Load(path);
    if (!status.ok())
      throw input_error(path, "not a valid sentencepiece model: " + status.ToString());
    auto role = [](int32_t id) { return id >= 0 ? std::optional<int32_t>(id) : std::nullopt; };
    special_.bos = role(processor_.bos_id());
    special_.eos = role(processor_.eos_id());
    special_.unk = role(processor_.unk_id());
    special_.pad = token_to_id("[PAD]") ? token_to_id("[PAD]") : role(processor_.pad_id());
    special_.mask = token_to_id("[MASK]");
    special_.cls = token_to_id("[CLS]") ? token_to_id("[CLS]") : special_.bos;
    special_.sep = token_to_id("[SEP]") ? token_to_id("[SEP]") : special_.eos;
    // sentencepiece has no post-processor: models here read [CLS] text [SEP].
    if (special_.cls) template_.prefix = {*special_.cls};
    if (special_.sep) template_.suffix = {*special_.sep};
  }

  Encoding encode(std::string_view text) const override {
    require_valid_utf8(text, "text");
    sentencepiece::ImmutableSentencePieceText pieces;
    const auto status =
        processor_.Encode(absl::string_view(text.data(), text.size()), pieces.mutable_proto());
    if (!status.ok()) throw InputError("sentencepiece: " + status.ToString());
    Encoding encoding;
    for (const auto& piece : pieces.pieces()) {
      encoding.ids.push_back(static_cast<int32_t>(piece.id()));
      encoding.spans.push_back({piece.begin(), piece.end()});
    }
    return encoding;
  }

  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const override {
    std::vector<int32_t> kept;
    for (int32_t id : ids) {
      if (id < 0 || static_cast<size_t>(id) >= vocab_size()) continue;
      if (skip_special_tokens && is_special(id)) continue;
      kept.push_back(id);
    }
    std::string text;
    const auto status = processor_.Decode(std::vector<int>(kept.begin(), kept.end()), &text);
    (void)status;  // ids are in range: sentencepiece decodes every one
    return text;
  }

  std::string id_to_token(int32_t id) const override {
    if (id < 0 || static_cast<size_t>(id) >= vocab_size()) return {};
    return processor_.IdToPiece(id);
  }

  std::optional<int32_t> token_to_id(std::string_view token) const override {
    const std::string name(token);
    const int id = processor_.PieceToId(name);
    return processor_.IdToPiece(id) == name ? std::optional<int32_t>(id) : std::nullopt;
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
  if (options.vocab_size < 16) throw FieldError("vocab_size", "must be at least 16");
  if (options.model_type != "unigram" && options.model_type != "bpe") {
    throw FieldError("model_type", "must be unigram or bpe, got '" + options.model_type + "'");
  }
  std::string inputs;
  for (const auto& f : options.inputs) {
    if (f.find_first_of(", ") != std::string::npos)
      throw input_error(f, "file names with commas or spaces are not supported");
    inputs += (inputs.empty() ? "" : ",") + f;
  }
  std::string prefix = options.output_model;
  if (prefix.size() > 6 && prefix.compare(prefix.size() - 6, 6, ".model") == 0)
    prefix.resize(prefix.size() - 6);
  if (prefix.find(' ') != std::string::npos)
    throw FieldError("output_model", "paths with spaces are not supported");
  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::string args =
      "--input=" + inputs + " --model_prefix=" + prefix +
      " --vocab_size=" + std::to_string(options.vocab_size) +
      " --model_type=" + options.model_type +
      " --character_coverage=" + std::to_string(options.character_coverage) +
      " --input_sentence_size=" + std::to_string(options.max_sentences) +
      " --shuffle_input_sentence=true --num_threads=" + std::to_string(threads) +
      " --byte_fallback=true --pad_id=0 --unk_id=1 --bos_id=-1 --eos_id=-1"
      " --control_symbols=[CLS],[SEP],[MASK] --max_sentence_length=16384 --hard_vocab_limit=false"
      " --minloglevel=0";  // sentencepiece's own log lines are the training progress
  const auto status = sentencepiece::SentencePieceTrainer::Train(absl::string_view(args));
  if (!status.ok()) throw InputError("tokenizer-train: " + status.ToString());
}

}  // namespace lmk
