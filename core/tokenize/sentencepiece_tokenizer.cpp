#include "core/tokenize/sentencepiece_tokenizer.h"

#ifndef _GNU_SOURCE
#define _GNU_SOURCE  // dlmopen
#endif
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "core/tokenize/sentencepiece_shim.h"
#include "core/util/error.h"

#ifndef LMK_SENTENCEPIECE_MODULE
#define LMK_SENTENCEPIECE_MODULE ""
#endif

namespace lmk {

namespace fs = std::filesystem;

namespace {

// The functions of liblmk_sentencepiece.so (see sentencepiece_shim.h).
struct SentencePieceModule {
  decltype(&lmk_sp_load) load;
  decltype(&lmk_sp_free) free;
  decltype(&lmk_sp_encode) encode;
  decltype(&lmk_sp_decode) decode;
  decltype(&lmk_sp_piece_size) piece_size;
  decltype(&lmk_sp_id_to_piece) id_to_piece;
  decltype(&lmk_sp_piece_to_id) piece_to_id;
  decltype(&lmk_sp_special_id) special_id;
  decltype(&lmk_sp_is_special) is_special;
  decltype(&lmk_sp_train) train;
};

// Candidate paths: $LMK_SENTENCEPIECE_MODULE, beside the executable, ../lib from it, the build
// tree.
std::vector<std::string> module_candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("LMK_SENTENCEPIECE_MODULE")) paths.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    paths.push_back((exe.parent_path() / "liblmk_sentencepiece.so").string());
    paths.push_back((exe.parent_path().parent_path() / "lib" / "liblmk_sentencepiece.so").string());
  }
  if (*LMK_SENTENCEPIECE_MODULE) paths.emplace_back(LMK_SENTENCEPIECE_MODULE);
  return paths;
}

const SentencePieceModule& module() {
  static std::once_flag once;
  static SentencePieceModule m;
  static std::string error;
  std::call_once(once, [] {
    void* handle = nullptr;
    for (const auto& path : module_candidates()) {
      if (!fs::exists(path)) continue;
      handle = dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) break;
      error += std::string(" ") + dlerror();
    }
    if (!handle) {
      error = "cannot load liblmk_sentencepiece.so (set LMK_SENTENCEPIECE_MODULE)" + error;
      return;
    }
    auto sym = [&](const char* name) {
      void* f = dlsym(handle, name);
      if (!f) error = std::string("liblmk_sentencepiece.so lacks ") + name;
      return f;
    };
    m.load = reinterpret_cast<decltype(m.load)>(sym("lmk_sp_load"));
    m.free = reinterpret_cast<decltype(m.free)>(sym("lmk_sp_free"));
    m.encode = reinterpret_cast<decltype(m.encode)>(sym("lmk_sp_encode"));
    m.decode = reinterpret_cast<decltype(m.decode)>(sym("lmk_sp_decode"));
    m.piece_size = reinterpret_cast<decltype(m.piece_size)>(sym("lmk_sp_piece_size"));
    m.id_to_piece = reinterpret_cast<decltype(m.id_to_piece)>(sym("lmk_sp_id_to_piece"));
    m.piece_to_id = reinterpret_cast<decltype(m.piece_to_id)>(sym("lmk_sp_piece_to_id"));
    m.special_id = reinterpret_cast<decltype(m.special_id)>(sym("lmk_sp_special_id"));
    m.is_special = reinterpret_cast<decltype(m.is_special)>(sym("lmk_sp_is_special"));
    m.train = reinterpret_cast<decltype(m.train)>(sym("lmk_sp_train"));
  });
  if (!error.empty()) throw std::runtime_error(error);
  return m;
}

void append_to_string(void* context, const char* data, size_t size) {
  static_cast<std::string*>(context)->append(data, size);
}

class SentencePieceTokenizer : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::string& path) : m_(module()) {
    if (!fs::is_regular_file(path)) throw input_error(path, "no such file");
    std::string error;
    model_ = m_.load(path.c_str(), append_to_string, &error);
    if (!model_) throw input_error(path, "not a valid sentencepiece model: " + error);
    auto role = [](int32_t id) { return id >= 0 ? std::optional<int32_t>(id) : std::nullopt; };
    special_.bos = role(m_.special_id(model_, 0));
    special_.eos = role(m_.special_id(model_, 1));
    special_.unk = role(m_.special_id(model_, 3));
    special_.pad = token_to_id("[PAD]") ? token_to_id("[PAD]") : role(m_.special_id(model_, 2));
    special_.mask = token_to_id("[MASK]");
    special_.cls = token_to_id("[CLS]") ? token_to_id("[CLS]") : special_.bos;
    special_.sep = token_to_id("[SEP]") ? token_to_id("[SEP]") : special_.eos;
    // sentencepiece has no post-processor: models here read [CLS] text [SEP].
    if (special_.cls) template_.prefix = {*special_.cls};
    if (special_.sep) template_.suffix = {*special_.sep};
  }
  ~SentencePieceTokenizer() override { m_.free(model_); }

  Encoding encode(std::string_view text) const override {
    require_valid_utf8(text, "text");
    Encoding encoding;
    std::string error;
    struct Context {
      Encoding* encoding;
      std::string* error;
    } context{&encoding, &error};
    const int rc = m_.encode(
        model_, text.data(), text.size(),
        [](void* c, int32_t id, uint32_t begin, uint32_t end) {
          auto* e = static_cast<Context*>(c)->encoding;
          e->ids.push_back(id);
          e->spans.push_back({begin, end});
        },
        [](void* c, const char* data, size_t size) {
          static_cast<Context*>(c)->error->append(data, size);
        },
        &context);
    if (rc != 0) throw InputError("sentencepiece: " + error);
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
    m_.decode(model_, kept.data(), kept.size(), append_to_string, &text);
    return text;
  }

  std::string id_to_token(int32_t id) const override {
    if (id < 0 || static_cast<size_t>(id) >= vocab_size()) return {};
    std::string piece;
    m_.id_to_piece(model_, id, append_to_string, &piece);
    return piece;
  }

  std::optional<int32_t> token_to_id(std::string_view token) const override {
    const int32_t id = m_.piece_to_id(model_, token.data(), token.size());
    return id >= 0 ? std::optional<int32_t>(id) : std::nullopt;
  }

  size_t vocab_size() const override { return static_cast<size_t>(m_.piece_size(model_)); }

  bool is_special(int32_t id) const override { return m_.is_special(model_, id) != 0; }

 private:
  const SentencePieceModule& m_;
  void* model_ = nullptr;
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
    if (f.find_first_of(", ") != std::string::npos)
      throw input_error(f, "file names with commas or spaces are not supported");
    inputs += (inputs.empty() ? "" : ",") + f;
  }
  std::string prefix = options.output_model;
  if (prefix.size() > 6 && prefix.compare(prefix.size() - 6, 6, ".model") == 0)
    prefix.resize(prefix.size() - 6);
  if (prefix.find(' ') != std::string::npos)
    throw input_error("--out", "paths with spaces are not supported");
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
  std::string error;
  if (module().train(args.c_str(), append_to_string, &error) != 0)
    throw InputError("tokenizer-train: " + error);
}

}  // namespace lmk
