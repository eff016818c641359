#pragma once

// A study: the paper's question ("does LMK beat CLS on documents longer than the training
// length?") as one plan of steps — corpora rendered from the documentation Debian ships (man
// pages, the Python and Linux kernel documentation) or folders of text, a tokenizer, datasets
// (passages, windows of fixed token lengths, code retrieval, passkey / needle over lengths and
// depths), MLM pretraining (at a long length: the encoder learns long context), contrastive
// fine-tuning of every pooling from the same start (at a short length), evaluation of each —
// run as `lmk` child processes, each step's completion recorded under the study folder so that
// a re-run reuses what is done. `[model] architecture` makes a BERT, GTE or Qwen3 / Llama
// decoder (causal, pretrained on next tokens, or bidirectional, on masked ones) instead of
// ModernBERT; `[model] init` starts fine-tuning from an
// existing model folder instead (no tokenizer, init or pretraining steps); `[finetune] train`
// and `[eval] datasets` take training and evaluation data of your own (then a study needs no
// corpus). Everything measured lands in the results store; study_table() reads it back as
// pooling x task @ length tables.
//
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/jobs/lmk_commands.h"
#include "core/jobs/slurm.h"
#include "core/util/paper_defaults.h"
#include "core/util/settings.h"

namespace lmk {

class ResultsStore;

// One fine-tuned variant: a pooling and its training-time landmark layout.
struct StudyVariant {
  std::string label;            // "cls", "mean", "lmk-32", "lmk-var" (table rows, run names)
  std::string pooling;          // lmk train's pooling
  std::string train_landmarks;  // LandmarkSpec text ("fixed:32", "variable:32,64"), or ""
  // The granularity the fine-tuned model encodes with by default: the first of those
  // train_landmarks names, 0 where it names none ("variable": the study's [eval] granularity).
  int first_granularity = 0;
};

// One corpus of a study: a built-in source rendered by a step, or a folder of .txt files.
struct StudySource {
  std::string name;     // "manpages", "python-docs", "kernel-docs", or the folder's name
  std::string builtin;  // the built-in source ("" for a folder)
  std::string folder;   // the folder ("" for a built-in source: its step's output)
};

// The profile read when none is named: a config's own values ([SECTION] tables) with its
// [profile.full.*] overrides, if any; the other profiles override what they list.
inline constexpr const char* kDefaultStudyProfile = "full";

struct StudyConfig {
  std::string path, profile = kDefaultStudyProfile;
  // The sweep cell: its (label, value) pairs and name ("granularity=16,seed=1"); empty
  // without a sweep.
  std::vector<std::pair<std::string, std::string>> cell;
  std::string cell_name;
  // [study]
  std::string name = "study", dir, db;
  std::vector<StudySource> sources;  // [study] corpus: built-in names and folders
  int64_t corpus_limit = 0;          // pages of each built-in source (0: all)
  int64_t seed = 42;
  // Where pretraining, fine-tuning and evaluation run: cpu, cuda or cuda:N (checked where the
  // steps run; under srun plain cuda is each task's LOCAL_RANK GPU).
  std::string device = "cpu";
  // [tokenizer]
  int64_t vocab_size = 8000;
  // [model]
  std::string preset = "small";
  // modernbert, bert, gte, qwen3 or llama (lmk model init --architecture); lmk pretrain trains
  // a causal decoder on next tokens, a bidirectional one on masked tokens.
  std::string architecture = "modernbert";
  int64_t hidden_size = 0, layers = 0, heads = 0, intermediate_size = 0, local_window = -1;
  int64_t kv_heads = 0;  // decoders: key / value heads (0: as many as heads)
  double rope_theta = 0;
  bool rope = true;            // false: the RoPE ablation (rotation frequencies zeroed)
  bool bidirectional = false;  // decoders: bidirectional attention (LLM2Vec's conversion)
  std::string init;  // a model folder to fine-tune from: no tokenizer, init or pretraining
  // [pretrain]
  int64_t pretrain_length = 256, pretrain_batch = 16, pretrain_steps = 0, pretrain_epochs = 1;
  double pretrain_lr = 1e-3;
  // [finetune]
  std::vector<StudyVariant> variants;
  int64_t query_length = 64, passage_length = 0;  // 0: the pretraining length
  int64_t finetune_batch = 16, negatives = 1, finetune_steps = 0, finetune_epochs = 1;
  int64_t examples_per_document = 8;
  // In-domain synthetic fine-tuning data: this many passkey and as many needle pairs at the
  // fine-tuning length (another seed than the evaluation's), added to the corpus pairs; 0: none.
  int64_t synthetic_pairs = 0;
  double finetune_lr = 1e-4, temperature = 0.05;
  // Training files of your own (lmk train's JSONL, e.g. MS MARCO with teacher scores) instead
  // of pairs from the sources; `stream`: read them in order, one global batch at a time.
  std::vector<std::string> train_files;
  bool stream = false;
  double warmup_ratio = 0;        // lmk train's [train] warmup_ratio
  bool recompute_layers = false;  // lmk train's [train] recompute_layers (long passages)
  // lmk train's [lora] (LoRA adapters instead of every weight; rank 0: none), e.g. on a decoder
  // folder of your own ([model] init).
  int64_t lora_rank = 0;
  double lora_alpha = 16, lora_dropout = 0;
  std::vector<std::string> lora_targets = {"all-linear"};
  // [eval]
  // passages, documents, code and the synthetic_benchmarks().
  std::vector<std::string> benchmarks = {"passages", "documents", "passkey", "needle"};
  // documents: windows of these lengths (default: 1x, 4x and 16x the fine-tuning length);
  // queries_per_document per window (and per document for passages), at most `windows` windows
  // per split and length, windows_per_document from one document.
  std::vector<int64_t> lengths;
  int64_t queries_per_document = 10, windows = 60, windows_per_document = 4;
  // passkey / needle: lengths (default: `lengths`) x depths, `queries` and `documents` per
  // length; the needle's facts per document.
  std::vector<int64_t> needle_lengths;
  std::vector<double> depths = {0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1};
  int64_t queries = 55, documents = 55, needle_keys = 1;
  // needle-multivalue: the asked fact's values (RULER: 4); needle-multiquery: queries per
  // document, each asking for another of its keys (RULER: 4).
  int64_t needle_values = 4, needle_queries = 4;
  int64_t granularity = paper::kGranularity;  // landmark granularity at evaluation
  int64_t attention_docs = 2;
  // "dev": the [sweep] over eval.granularity is chosen per pooling and task on the dev split,
  // and reported on test (the oracle best on test shown apart, labelled); "none".
  std::string select = "none";
  // Evaluation datasets of your own (BEIR folders, or folders of per-length BEIR folders, e.g.
  // MLDR-en, LongEmbed's tasks), each named by its folder and read on its default split,
  // documents cut at max_lengths tokens (one per dataset, or one for all; 0: whole).
  std::vector<std::string> datasets;
  std::vector<int64_t> dataset_max_lengths = {0};
  std::string granularity_label;  // eval.granularity's label in the sweep cells ("" unswept)
  // [slurm]: how lmk submit --executor slurm submits the steps (the same in every cell)
  SlurmOptions slurm;
};

// What a study config may hold: its profiles, its benchmarks, and the keys of each section
// ([slurm] included: slurm_option_keys()). The workbench's designer offers these.
const std::vector<std::string>& study_profiles();
const std::vector<std::string>& study_benchmarks();
// The benchmarks a study generates as length x depth tasks with its tokenizer (lmk data passkey
// | needle | cwe | fwe): passkey, needle, needle-multivalue, needle-multiquery, cwe, fwe.
const std::vector<std::string>& synthetic_benchmarks();
const std::map<std::string, std::vector<std::string>>& study_config_keys();
// Every key of a study config but [slurm]'s, in the designer's order: its member, checks, form
// label and hint (core/util/settings.h). Entries without a member (corpus, dir, db, init,
// poolings, lengths, needle_lengths) are read by read_study_grid itself.
const SettingsTable<StudyConfig>& study_settings();

// An input of your own (a model folder, a training file, a dataset or source folder) that a
// config names and this machine does not have: the key that names it, and its path.
struct MissingInput {
  std::string where, path;
};
using MissingInputs = std::vector<MissingInput>;
// One line naming them all, for a dry run ("2 inputs you supply are not here ...").
std::string missing_inputs_line(const MissingInputs& missing);

// Reads a study config with the profile's overrides; errors name file and key (exit 2).
// dir_override / db_override replace [study] dir / db. Relative paths in the file resolve
// against the config's folder; the default dir is ../build/studies/NAME-PROFILE from there
// (build/studies/... of the checkout for experiments/*.toml), the default db DIR/results.db.
// A config with a [sweep] is every cell's config, each checked in full before any is used (an
// error names the cell); all cells share name, dir and db. With `missing`, inputs of your own
// that are not on this machine are listed there instead of refused (a dry run plans them: on a
// cluster they may be where the steps run).
std::vector<StudyConfig> read_study_grid(const std::string& path, const std::string& profile,
                                         const std::string& db_override = "",
                                         const std::string& dir_override = "",
                                         MissingInputs* missing = nullptr);
// The single config of a file without a sweep (the first cell's otherwise).
StudyConfig read_study_config(const std::string& path, const std::string& profile,
                              const std::string& db_override = "",
                              const std::string& dir_override = "");

struct StudyStep {
  std::string id;                 // "pretrain", "finetune/lmk-var", "eval/cls/passkey", ...
  std::vector<std::string> args;  // lmk's arguments (lmk_argv of `command`)
  std::vector<std::pair<std::string, std::string>> files;  // (path, content) written first
                                                           // (lmk_command_files of `command`)
  std::vector<std::string> outputs;  // must exist afterwards; removed before a re-run
  std::string store_run;             // a run of this name the step leaves in the store
  std::vector<std::string> deps;     // ids of steps whose results it reads
  std::string store_histogram = "";  // a length histogram of this name it leaves in the store
  std::string key = "";              // hash of the above, the deps' keys and `inputs`' stamps
  std::string dir = "";              // DIR/ID/KEY: where it writes (its folder or files in it)
  std::string kind = "";             // "train", "pretrain", "eval" (commands that record a run
                                     // of that kind), else "step"
  std::vector<size_t> cells = {};    // indices of the sweep cells that use it
  // Files of your own the step reads ([finetune] train, [eval] datasets): their sizes and
  // modification times enter the key, so a file replaced under the same path runs it again.
  std::vector<std::string> inputs = {};
  // What the step runs, typed: the lmk command its arguments and files were written from. Its
  // paths under the step's own folder read @OUT@ and its run name @RUN@ (args and files have
  // both filled in); empty for a step made by hand.
  std::optional<LmkCommand> command = std::nullopt;
};

// A sweep cell's view of a plan: its config and the store run name of each of its steps'
// runs, by the name the step has in a study without a sweep ("finetune/cls", "cls/passages").
struct StudyCell {
  StudyConfig config;
  std::map<std::string, std::string> run_names;
};

struct StudyPlan {
  StudyConfig config;      // the first cell's (name, dir, db, profile: the same in all)
  std::string experiment;  // experiment name in the store: NAME-PROFILE
  std::vector<StudyStep> steps;
  std::vector<StudyCell> cells;
};

// The steps of every cell, identical ones (same key) once, in an order where each step comes
// after its dependencies. A step used by some cells only has their common swept values in
// front of its id and run name ("granularity=16/eval/lmk-16/passkey").
StudyPlan plan_study(const std::vector<StudyConfig>& cells);
StudyPlan plan_study(const StudyConfig& config);

// Holds DIR/study.lock (flock) while it lives: one process — lmk study, or lmk submit — runs or
// records a study folder's steps at a time (lmk jobs takes it briefly to end jobs whose queue
// died). Tries for wait_s seconds, then throws InputError naming the folder.
class StudyFolderLock {
 public:
  explicit StudyFolderLock(const std::string& dir, double wait_s = 3);
  ~StudyFolderLock();
  StudyFolderLock(const StudyFolderLock&) = delete;
  StudyFolderLock& operator=(const StudyFolderLock&) = delete;

 private:
  int fd_ = -1;
};

// The step's log file: DIR/logs/ID-KEY.log.
std::string step_log_path(const StudyPlan& plan, const StudyStep& step);
// Records the step as done (its key, in DIR/steps/KEY.done), after checking its outputs exist;
// throws InputError naming the missing output otherwise.
void mark_step_done(const StudyPlan& plan, const StudyStep& step, double seconds);
// Before a step runs: removes its outputs (all of DIR/ID/KEY when `fresh`, i.e. a dependency
// runs again, so a checkpoint there is not resumed), writes its files.
void prepare_step(const StudyStep& step, bool fresh);
// The last `count` non-empty lines of a log (progress-bar segments split at \r), indented.
std::string log_tail(const std::string& path, size_t count);

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

// The comparison table (pooling x benchmark @ length, main score of each) from the store; one
// per sweep cell, under the cell's name. Each cell is its mean ± half the width of a 95 %
// bootstrap interval over the queries; ▲ / ▼ mark a pooling significantly above / below CLS
// (a study without a cls pooling: last, the decoders' usual one) in the same column (Fisher's
// randomization test, Holm–Bonferroni over the table's comparisons), and the test and correction
// are named under the table.
std::string study_table(const StudyPlan& plan, const ResultsStore& store);

}  // namespace lmk
