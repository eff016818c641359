// lmk tokenize, lmk tokenizer-train.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "app/commands.h"
#include "core/data/jsonl.h"
#include "core/tokenize/landmark.h"
#include "core/tokenize/sentencepiece_tokenizer.h"
#include "core/tokenize/tokenizer.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/json_util.h"
#include "core/util/progress.h"
#include "core/util/unicode.h"

namespace lmk::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct TokenizeArgs {
  std::string tokenizer;
  std::string landmark = "none";
  size_t max_length = 0;
  std::string format = "ids";
  std::string input = "-";
  std::string document;
  bool jsonl = false;
  std::string invalid_utf8 = "error";
  uint64_t seed = 0;
  int64_t landmark_token = -1;
  bool decoder = false;
  int threads = 1;  // 0: every core
};

// Lines tokenized together with --threads: enough to keep the threads busy, few enough that
// output follows input closely.
constexpr size_t kThreadedChunk = 2048;

// Reads the text of one input line: the line itself, or its "text" field with --jsonl.
std::string text_of_line(const std::string& line, const TokenizeArgs& args,
                         const std::string& where) {
  if (!args.jsonl) {
    if (args.invalid_utf8 == "replace") return unicode::replace_invalid_utf8(line);
    require_valid_utf8(line, where);
    return line;
  }
  const json j = json_util::parse(line, where);
  if (j.is_string()) return j.get<std::string>();
  if (j.is_object() && j.contains("text") && j["text"].is_string())
    return j["text"].get<std::string>();
  throw input_error(where, "expected a JSON string or an object with a \"text\" string");
}

void append_ids(std::string& out, const std::vector<int32_t>& ids) {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out.push_back(' ');
    out += std::to_string(ids[i]);
  }
}

// One text's line of output in `format` (ids, pieces or json), with its newline.
std::string output_line(const TokenizedText& t, const Tokenizer& tokenizer,
                        const std::string& format) {
  std::string out;
  if (format == "ids") {
    append_ids(out, t.ids);
  } else if (format == "pieces") {
    for (size_t i = 0; i < t.ids.size(); ++i)
      out += (i ? " " : "") + tokenizer.id_to_token(t.ids[i]);
  } else {
    json j;
    j["ids"] = t.ids;
    std::vector<std::string> tokens;
    for (int32_t id : t.ids)
      tokens.push_back(unicode::replace_invalid_utf8(tokenizer.id_to_token(id)));
    j["tokens"] = tokens;
    j["landmark_positions"] = t.pool_positions;
    j["token_offsets"] = t.token_offsets;
    j["granularity"] = t.granularity;
    out = j.dump();
  }
  out.push_back('\n');
  return out;
}

// --threads, 0 meaning every core.
size_t thread_count(const TokenizeArgs& args) {
  if (args.threads < 0) throw input_error("--threads", "must be >= 0 (0: every core)");
  return args.threads > 0 ? static_cast<size_t>(args.threads)
                          : std::max<size_t>(1, std::thread::hardware_concurrency());
}

LandmarkOptions landmark_options(const TokenizeArgs& args) {
  LandmarkOptions options;
  options.spec = LandmarkSpec::parse(args.landmark, "--landmark");
  options.max_length = args.max_length;
  options.seed = args.seed;
  if (args.landmark_token >= 0) options.landmark_token = static_cast<int32_t>(args.landmark_token);
  options.decoder = args.decoder;
  return options;
}

int run_tokenize(const TokenizeArgs& args) {
  if (args.format != "ids" && args.format != "pieces" && args.format != "json") {
    throw input_error("--format", "must be ids, pieces or json");
  }
  if (args.invalid_utf8 != "error" && args.invalid_utf8 != "replace") {
    throw input_error("--invalid-utf8", "must be error or replace");
  }
  const auto tokenizer = load_tokenizer(args.tokenizer);
  const LandmarkTokenizer landmarks(*tokenizer, landmark_options(args));

  const size_t threads = thread_count(args);
  auto format = [&](const TokenizedText& t) { return output_line(t, *tokenizer, args.format); };
  auto emit = [&](const TokenizedText& t) {
    const std::string out = format(t);
    std::fwrite(out.data(), 1, out.size(), stdout);
  };
  auto tokenize_text = [&](const std::string& text, uint64_t row, const std::string& where) {
    if (text.empty()) throw input_error(where, "empty text");
    try {
      return landmarks.tokenize(text, row);
    } catch (const InputError& e) {
      throw input_error(where, e.what());
    }
  };

  if (!args.document.empty()) {
    // The whole file is one text.
    std::string text = read_file(args.document);
    if (args.invalid_utf8 == "replace") text = unicode::replace_invalid_utf8(text);
    emit(tokenize_text(text, 0, args.document));
    std::fflush(stdout);
    return 0;
  }

  // One line at a time, plain or gzip, "\r\n" or "\n" (core/data/jsonl's reader).
  std::ifstream file;
  uint64_t input_size = 0;
  if (args.input != "-") {
    file = open_input(args.input);
    std::error_code ec;
    input_size = fs::file_size(args.input, ec);
  }
  LineReader lines(NamedInput{args.input == "-" ? std::cin : file,
                              args.input == "-" ? std::string("stdin") : args.input});
  std::optional<Progress> progress;
  if (input_size > 0) progress.emplace("lmk tokenize", input_size, "B");
  std::string line;
  uint64_t row = 0, bytes_read = 0;
  // Gzip input: the bar counts text against the compressed size, so it stops at the end.
  auto count_line = [&] {
    bytes_read = std::min<uint64_t>(input_size, bytes_read + line.size() + 1);
    if (progress && row % 256 == 0) progress->update(bytes_read);
    ++row;
  };
  if (threads == 1) {
    while (lines.next(line)) {
      const std::string where = lines.where();
      emit(tokenize_text(text_of_line(line, args, where), row, where));
      count_line();
    }
  } else {
    // Chunks of lines, each line tokenized and formatted by one of the threads, written in
    // input order: the output is the one thread's, and so is a bad line's error (the lines
    // before it are written first).
    struct Item {
      std::string text, where, out, error;
      uint64_t row = 0;
    };
    std::vector<Item> chunk;
    bool more = true;
    while (more) {
      chunk.clear();
      while (chunk.size() < kThreadedChunk) {
        try {
          more = lines.next(line);
        } catch (const InputError& e) {  // the input itself (a broken gzip stream): after the
          chunk.push_back({"", "", "", e.what(), row});  // lines read so far
          break;
        }
        if (!more) break;
        Item item;
        item.where = lines.where();
        item.row = row;
        try {
          item.text = text_of_line(line, args, item.where);
        } catch (const InputError& e) {
          item.error = e.what();
        }
        chunk.push_back(std::move(item));
        count_line();
      }
      std::vector<std::thread> workers;
      for (size_t t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
          for (size_t i = t; i < chunk.size(); i += threads) {
            Item& item = chunk[i];
            if (!item.error.empty()) continue;
            try {
              item.out = format(tokenize_text(item.text, item.row, item.where));
            } catch (const std::exception& e) {
              item.error = e.what();
            }
          }
        });
      }
      for (std::thread& worker : workers) worker.join();
      for (const Item& item : chunk) {
        if (!item.error.empty()) {
          std::fflush(stdout);
          throw InputError(item.error);
        }
        std::fwrite(item.out.data(), 1, item.out.size(), stdout);
      }
    }
  }
  if (progress) progress->update(bytes_read);
  std::fflush(stdout);
  return 0;
}

// Expands files and folders (recursively) into the regular files they hold, sorted.
std::vector<std::string> collect_text_files(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const auto& input : inputs) {
    std::error_code ec;
    if (fs::is_directory(input, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::recursive_directory_iterator(input)) {
        if (entry.is_regular_file()) found.push_back(entry.path().string());
      }
      std::sort(found.begin(), found.end());
      if (found.empty()) throw input_error(input, "folder holds no files");
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(input, ec)) {
      files.push_back(input);
    } else {
      throw input_error(input, "no such file or folder");
    }
  }
  return files;
}

}  // namespace

Runner add_tokenize_command(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  auto* cmd = app.add_subcommand(
      "tokenize", "Tokenize texts (one per line) into model inputs with landmark tokens");
  cmd->add_option("--tokenizer", args->tokenizer,
                  "tokenizer.json, sentencepiece .model, or a model folder")
      ->required();
  cmd->add_option("--landmark", args->landmark,
                  "none | fixed:G | variable:G1,G2,.. | sentence[:G] | multicls[:G]")
      ->capture_default_str();
  cmd->add_option("--max-length", args->max_length,
                  "truncate model inputs to N tokens (0: no limit)")
      ->check(whole(0));
  cmd->add_option("--format", args->format, "ids | pieces | json")->capture_default_str();
  cmd->add_option("--input", args->input,
                  "input file, plain or gzip (default: stdin), one text per line");
  cmd->add_option("--document", args->document,
                  "tokenize this whole file as one text (instead of --input)")
      ->excludes("--input");
  cmd->add_flag("--jsonl", args->jsonl,
                "input lines are JSON: a string or an object with a \"text\" field");
  cmd->add_option("--invalid-utf8", args->invalid_utf8,
                  "error: reject lines with invalid UTF-8; replace: decode them with U+FFFD as a "
                  "UTF-8 decoder does")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "seed of the per-text granularity draw (variable)")
      ->check(seed_range());
  cmd->add_option("--landmark-token", args->landmark_token,
                  "id of the landmark token (default: [SEP], else EOS; with --decoder EOS, else "
                  "[SEP])")
      ->check(whole(0, 16777215));
  cmd->add_flag("--decoder", args->decoder,
                "a decoder's layout, as lmk encode gives a Llama / Qwen3 model: the template's "
                "own opening (no [CLS] required), EOS landmarks, EOS closing the plain layout");
  cmd->add_option("--threads", args->threads,
                  "tokenize lines on N threads (0: every core); the output is the same")
      ->capture_default_str()
      ->check(whole(0, 4096));
  return [args] { return run_tokenize(*args); };
}

Runner add_tokenizer_train_command(CLI::App& app) {
  auto options = std::make_shared<SentencePieceTrainOptions>();
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("tokenizer-train",
                                 "Train a sentencepiece tokenizer on text files or folders");
  cmd->add_option("--input", *inputs, "text file or folder (repeatable)")->required();
  cmd->add_option("--vocab-size", options->vocab_size, "vocabulary size")
      ->required()
      ->check(whole(1, 16777216));
  cmd->add_option("--out", options->output_model, "FILE.model to write")->required();
  cmd->add_option("--model-type", options->model_type, "unigram | bpe")->capture_default_str();
  cmd->add_option("--max-sentences", options->max_sentences,
                  "input lines sampled for training (0: all)")
      ->capture_default_str()
      ->check(whole(0));
  return [options, inputs] {
    options->inputs = collect_text_files(*inputs);
    const fs::path out(options->output_model);
    if (out.has_parent_path()) fs::create_directories(out.parent_path());
    std::cerr << "lmk: training a " << options->model_type << " tokenizer (" << options->vocab_size
              << " pieces) on " << options->inputs.size() << " file(s)\n";
    train_sentencepiece(*options);
    std::cerr << "lmk: wrote " << options->output_model << "\n";
    return 0;
  };
}

}  // namespace lmk::cli
