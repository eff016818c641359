#pragma once

// A study: the paper's question ("does LMK beat CLS on documents longer than the training
// length?") as one plan of steps — built-in corpus, tokenizer, datasets, MLM pretraining at a
// short length, contrastive fine-tuning of every pooling from the same start, evaluation of
// each on the short in-domain set and on long-document tasks at lengths up to 16x the
// training length — run as `lmk` child processes, each step's completion recorded under the
// study folder so that a re-run reuses what is done. Everything measured lands in the
// results store; study_table() reads it back as pooling x benchmark x length.
//
// Config (TOML, experiments/pooling-vs-length.toml): [study] [tokenizer] [model] [pretrain]
// [finetune] [eval], and [profile.micro|quick|full.SECTION] tables overriding any key.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace lmk {

class ResultsStore;

// One fine-tuned variant: a pooling and its training-time landmark layout.
struct StudyVariant {
  std::string label;            // "cls", "mean", "lmk-32", "lmk-var" (table rows, run names)
  std::string pooling;          // lmk train's pooling
  std::string train_landmarks;  // LandmarkSpec text ("fixed:32", "variable:32,64"), or ""
};

struct StudyConfig {
  std::string path, profile = "full";
  // [study]
  std::string name = "study", dir, db;
  std::string corpus = "builtin";  // "builtin" (man pages) or a folder of .txt files
  int64_t corpus_limit = 0;        // builtin: this many pages (0: all)
  int64_t seed = 42;
  // [tokenizer]
  int64_t vocab_size = 8000;
  // [model]
  std::string preset = "small";
  int64_t hidden_size = 0, layers = 0, heads = 0, intermediate_size = 0, local_window = -1;
  double rope_theta = 0;
  // [pretrain]
  int64_t pretrain_length = 256, pretrain_batch = 16, pretrain_steps = 0, pretrain_epochs = 1;
  double pretrain_lr = 1e-3;
  // [finetune]
  std::vector<StudyVariant> variants;
  int64_t query_length = 64, passage_length = 0;  // 0: the pretraining length
  int64_t finetune_batch = 16, negatives = 1, finetune_steps = 0, finetune_epochs = 1;
  int64_t examples_per_document = 8;
  double finetune_lr = 1e-4, temperature = 0.05;
  // [eval]
  std::vector<std::string> benchmarks = {"passages", "corpus", "passkey", "needle"};
  std::vector<int64_t> lengths;  // default: 1x, 4x and 16x the training length
  int64_t granularity = 32;      // landmark granularity at evaluation
  int64_t queries = 50, documents = 50, attention_docs = 2;
};

// Reads a study config with the profile's overrides; errors name file and key (exit 2).
// dir_override / db_override replace [study] dir / db. Relative paths in the file resolve
// against the config's folder; the default dir is ../build/studies/NAME-PROFILE from there
// (build/studies/... of the checkout for experiments/*.toml), the default db DIR/results.db.
StudyConfig read_study_config(const std::string& path, const std::string& profile,
                              const std::string& db_override = "",
                              const std::string& dir_override = "");

struct StudyStep {
  std::string id;                 // "pretrain", "finetune/lmk-var", "eval/cls/passkey", ...
  std::vector<std::string> args;  // lmk's arguments
  std::vector<std::pair<std::string, std::string>> files;  // (path, content) written first
  std::vector<std::string> outputs;  // must exist afterwards; removed before a re-run
  std::string store_run;             // a run of this name the step leaves in the store
  std::vector<std::string> deps;     // ids of steps whose results it reads
  std::string store_histogram = "";  // a length histogram of this name it leaves in the store
  std::string key = "";              // hash of all of the above and the deps' keys (plan_study)
};

struct StudyPlan {
  StudyConfig config;
  std::string experiment;  // experiment name in the store: NAME-PROFILE
  std::vector<StudyStep> steps;
};

StudyPlan plan_study(const StudyConfig& config);

// Whether the step's recorded completion matches its key (it is then reused).
bool step_done(const StudyPlan& plan, const StudyStep& step);

// Receives the study's lines: transient ones (the running step's latest log line, every
// interval_s) may be overwritten by the next line on a terminal.
using StudyReport = std::function<void(const std::string& line, bool transient)>;

// Runs the steps not done yet, in order, as `lmk_binary ARGS` child processes with output to
// DIR/logs/ID.log; progress lines go to `report`. A failing step stops the study with an
// error naming it and the end of its log.
struct StudyRunSummary {
  size_t ran = 0, reused = 0;
  double seconds = 0;
};
StudyRunSummary run_study(const StudyPlan& plan, const std::string& lmk_binary,
                          const StudyReport& report, double interval_s = 30);

// The comparison table (pooling x benchmark @ length, main score of each) from the store.
std::string study_table(const StudyPlan& plan, const ResultsStore& store);

}  // namespace lmk
