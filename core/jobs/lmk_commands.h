#pragma once

// The lmk commands a study runs, typed: each request holds the options of one command (app/'s
// data_commands.cpp, tokenize_commands.cpp, model_commands.cpp, train_commands.cpp,
// eval_commands.cpp parse them) and to_argv() writes them as lmk's arguments. This file is the
// one place in core that spells lmk's flags; study_cli_test checks every flag a plan writes
// against the options lmk itself declares (LMK_LIST_OPTIONS=1), so a renamed option fails there.
//
// An optional option is written only when set (an empty text, a 0 count, an empty list), and
// every option in the order written below: a study step's key is a hash of its arguments, and
// finished steps of existing study folders are found by key (tests/core/jobs/study_keys_test).

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/train/training_config.h"

namespace lmk {

// lmk data manpages | docs --source NAME: a built-in corpus rendered as .txt files.
struct RenderCorpusRequest {
  std::string source;  // "manpages", "python-docs", "kernel-docs"
  std::string out;
  int64_t limit = 0;  // pages (0: all)
  std::vector<std::string> to_argv() const;
};

// lmk tokenizer-train: a SentencePiece unigram tokenizer on text folders.
struct TokenizerTrainRequest {
  std::vector<std::string> inputs;
  int64_t vocab_size = 8000;
  std::string out;  // the .model file
  std::vector<std::string> to_argv() const;
};

// lmk data corpus: passages (and windows of fixed token lengths) with queries, per split.
struct CorpusDataRequest {
  std::string source, out, name, splits = "dev,test";
  int64_t seed = 42, queries_per_document = 10;
  bool stratified = true;
  // The windows (documents): written with lengths only.
  std::vector<int64_t> lengths;
  std::string tokenizer;
  int64_t windows_per_document = 4, max_windows = 60;
  std::vector<std::string> to_argv() const;
};

// lmk data pairs: FlagEmbedding training pairs from .txt files.
struct PairsRequest {
  std::string source, out;
  int64_t seed = 42, negatives = 1, examples_per_document = 8;
  std::vector<std::string> to_argv() const;
};

// lmk data stats: a folder's token-length histogram, stored under `name`.
struct StatsRequest {
  std::string folder, tokenizer, db, name;
  std::vector<std::string> to_argv() const;
};

// lmk data code: the code retrieval dataset.
struct CodeDataRequest {
  std::string out, splits = "dev,test";
  int64_t seed = 42;
  std::vector<std::string> to_argv() const;
};

// lmk data passkey | needle | cwe | fwe: generated documents over lengths (and depths), as an
// evaluation dataset (out) or as training pairs (pairs_out, with negatives).
struct SyntheticDataRequest {
  std::string task;  // the command: passkey, needle, cwe, fwe
  std::string tokenizer, out, pairs_out;
  std::vector<int64_t> lengths;
  int64_t queries = 0, documents = 0;
  int64_t negatives = 0;  // pairs: hard negatives per query
  int64_t seed = 42;
  std::vector<double> depths;
  std::string haystack;  // needle: the natural text the facts are hidden in
  int64_t keys = 0, values = 0, queries_per_document = 0;
  std::string name;  // the dataset's name in the store, where it is not the command's
  std::vector<std::string> to_argv() const;
};

// lmk model init: a randomly initialized model folder.
struct ModelInitRequest {
  std::string preset = "small", tokenizer, out, pooling = "cls";
  int64_t seed = 42;
  std::string architecture;  // "" : ModernBERT (lmk's default)
  // 0 (local_window: -1, rope_theta: 0): the preset's
  int64_t hidden_size = 0, layers = 0, heads = 0, intermediate_size = 0, local_window = -1;
  double rope_theta = 0;
  bool no_rope = false;
  int64_t kv_heads = 0;
  bool bidirectional = false;
  std::vector<std::string> to_argv() const;
};

// lmk train --config FILE --auto-resume: contrastive fine-tuning by a config file.
struct FinetuneRequest {
  ContrastiveConfig config;
  std::vector<std::string> keys;  // the config's keys written to the file, in order
  std::string config_file;
  std::vector<std::string> to_argv() const;
  std::string config_toml() const;  // the file's content
};

// lmk pretrain --config FILE --auto-resume.
struct PretrainRequest {
  PretrainConfig config;
  std::vector<std::string> keys;
  std::string config_file;
  std::vector<std::string> to_argv() const;
  std::string config_toml() const;
};

// lmk eval: retrieval metrics of a model folder on a dataset, recorded in a store.
struct EvalRequest {
  std::string model, dataset, pooling, db, experiment, run_name;
  int64_t attention_docs = 0, query_max_length = 0;
  int64_t granularity = 0;  // 0: not written (the folder's)
  int64_t max_length = 0;   // 0: not written (whole documents)
  std::string split;        // "": dataset.json's
  std::string device = "cpu";
  std::vector<std::string> to_argv() const;
};

using LmkCommand = std::variant<RenderCorpusRequest, TokenizerTrainRequest, CorpusDataRequest,
                                PairsRequest, StatsRequest, CodeDataRequest, SyntheticDataRequest,
                                ModelInitRequest, FinetuneRequest, PretrainRequest, EvalRequest>;

// The command's arguments for lmk.
std::vector<std::string> lmk_argv(const LmkCommand& command);
// The files it reads that a study writes first (path, content): a training command's config.
std::vector<std::pair<std::string, std::string>> lmk_command_files(const LmkCommand& command);

}  // namespace lmk
