// Study configs (core/jobs/study.h): reading a study TOML with its profile and sweep cells into
// checked StudyConfigs, and the names the config knows.
#include <algorithm>
#include <filesystem>
#include <set>

#include "core/data/html_text.h"
#include "core/jobs/slurm.h"
#include "core/jobs/study.h"
#include "core/pool/pooling_kind.h"
#include "core/tokenize/landmark.h"
#include "core/util/error.h"
#include "core/util/toml_config.h"

namespace lmk {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kProfiles = {"micro", "quick", "full"};
const std::vector<std::string> kBenchmarks = {"passages", "documents", "code", "passkey",
                                              "needle"};
const std::vector<std::string> kBuiltinSources = {"manpages", "python-docs", "kernel-docs"};
// Step and run names the sources' share: a folder may not be named like a task.
const std::vector<std::string> kReservedSources = {"code", "passkey", "needle"};

// [study] corpus: built-in source names ("builtin": the man pages, as before sources had names)
// and folders of .txt files, each a named source.
std::vector<StudySource> read_sources(const TomlConfig& toml) {
  std::vector<std::string> entries = {"manpages"};
  toml.text_or_texts("study", "corpus", entries);
  std::vector<StudySource> sources;
  std::set<std::string> names;
  for (const std::string& entry : entries) {
    StudySource source;
    if (entry == "builtin" || std::find(kBuiltinSources.begin(), kBuiltinSources.end(), entry) !=
                                  kBuiltinSources.end()) {
      source.builtin = entry == "builtin" ? "manpages" : entry;
      source.name = source.builtin;
      if (source.builtin != "manpages") {
        try {
          require_installed(html_docs_source(source.builtin));
        } catch (const InputError& e) {
          throw input_error(toml.where("study", "corpus"), e.what());
        }
      }
    } else {
      std::error_code ec;
      source.folder = fs::absolute(toml.resolve(entry)).lexically_normal().string();
      if (!fs::is_directory(source.folder, ec))
        throw input_error(toml.where("study", "corpus"),
                          "'" + source.folder +
                              "' is not a folder (or a built-in source: manpages, python-docs, "
                              "kernel-docs)");
      source.name = fs::path(source.folder).filename().string();
      if (std::find(kReservedSources.begin(), kReservedSources.end(), source.name) !=
          kReservedSources.end())
        throw input_error(toml.where("study", "corpus"),
                          "a source folder cannot be named '" + source.name +
                              "' (the name of a task): rename the folder");
    }
    if (!names.insert(source.name).second)
      throw input_error(toml.where("study", "corpus"),
                        "two sources are named '" + source.name + "'");
    sources.push_back(std::move(source));
  }
  return sources;
}
// "lmk:variable:32,64" -> pooling lmk, landmarks variable:32,64, label lmk-var.
StudyVariant parse_variant(const std::string& text, const std::string& where) {
  StudyVariant v;
  const size_t colon = text.find(':');
  v.pooling = text.substr(0, colon);
  try {
    parse_pooling(v.pooling);
  } catch (const InputError&) {
    throw input_error(where, "unknown pooling '" + v.pooling + "' in '" + text + "'");
  }
  v.label = v.pooling;
  if (colon != std::string::npos) {
    v.train_landmarks = text.substr(colon + 1);
    const LandmarkSpec spec = LandmarkSpec::parse(v.train_landmarks, where);
    (void)spec;
    const std::string mode = v.train_landmarks.substr(0, v.train_landmarks.find(':'));
    const std::string values = v.train_landmarks.find(':') == std::string::npos
                                   ? ""
                                   : v.train_landmarks.substr(v.train_landmarks.find(':') + 1);
    v.label += "-" + (mode == "fixed" ? values : mode == "variable" ? std::string("var") : mode);
  }
  return v;
}

StudyConfig read_cell(const TomlConfig& toml, const std::string& path, const std::string& profile,
                      const std::string& db_override, const std::string& dir_override) {
  std::error_code ec;
  StudyConfig c;
  c.path = fs::absolute(path).lexically_normal().string();
  c.profile = profile;
  toml.text("study", "name", c.name);
  if (c.name.empty() || c.name.find_first_of("/ \t") != std::string::npos)
    throw input_error(toml.where("study", "name"), "must be a non-empty name without / or spaces");
  toml.text("study", "dir", c.dir);
  if (!dir_override.empty()) c.dir = fs::absolute(dir_override).string();
  c.dir = c.dir.empty() ? (fs::path(c.path).parent_path().parent_path() / "build" / "studies" /
                           (c.name + "-" + profile))
                              .string()
                        : toml.resolve(c.dir);
  c.dir = fs::absolute(c.dir).lexically_normal().string();
  toml.text("study", "db", c.db);
  if (!db_override.empty()) c.db = db_override;
  c.db = c.db.empty() ? (fs::path(c.dir) / "results.db").string()
                      : (db_override.empty() ? toml.resolve(c.db) : c.db);
  c.db = fs::absolute(c.db).lexically_normal().string();
  c.sources = read_sources(toml);
  toml.integer("study", "corpus_limit", c.corpus_limit, 0);
  toml.integer("study", "seed", c.seed, 0);
  toml.integer("tokenizer", "vocab_size", c.vocab_size, 100);
  toml.text("model", "preset", c.preset);
  if (c.preset != "tiny" && c.preset != "small" && c.preset != "base")
    throw input_error(toml.where("model", "preset"), "must be tiny, small or base");
  toml.integer("model", "hidden_size", c.hidden_size, 1);
  toml.integer("model", "layers", c.layers, 1);
  toml.integer("model", "heads", c.heads, 1);
  toml.integer("model", "intermediate_size", c.intermediate_size, 1);
  toml.integer("model", "local_window", c.local_window, 0);
  toml.number("model", "rope_theta", c.rope_theta, 1, 1e12);
  toml.boolean("model", "rope", c.rope);
  toml.text("model", "init", c.init);
  if (!c.init.empty()) {
    c.init = fs::absolute(toml.resolve(c.init)).lexically_normal().string();
    if (!fs::is_regular_file(fs::path(c.init) / "config.json", ec))
      throw input_error(toml.where("model", "init"),
                        "'" + c.init + "' is not a model folder (no config.json)");
  }

  toml.integer("pretrain", "max_length", c.pretrain_length, 16);
  toml.integer("pretrain", "batch_size", c.pretrain_batch, 1);
  toml.integer("pretrain", "steps", c.pretrain_steps, 0);
  toml.integer("pretrain", "epochs", c.pretrain_epochs, 1);
  toml.number("pretrain", "learning_rate", c.pretrain_lr, 1e-12, 10);

  std::vector<std::string> poolings = {"cls", "mean", "lmk:fixed:32", "lmk:variable:32,64,128,256"};
  toml.texts("finetune", "poolings", poolings);
  std::set<std::string> labels;
  for (const std::string& p : poolings) {
    c.variants.push_back(parse_variant(p, toml.where("finetune", "poolings")));
    if (!labels.insert(c.variants.back().label).second)
      throw input_error(toml.where("finetune", "poolings"),
                        "two entries share the label '" + c.variants.back().label + "'");
  }
  toml.integer("finetune", "query_max_length", c.query_length, 8);
  toml.integer("finetune", "passage_max_length", c.passage_length, 0);
  if (c.passage_length == 0) c.passage_length = c.pretrain_length;
  if (!c.init.empty() && c.passage_length == 0)
    throw input_error(toml.where("finetune", "passage_max_length"),
                      "must be set when [model] init starts from a model folder");
  toml.integer("finetune", "batch_size", c.finetune_batch, 2);
  toml.integer("finetune", "negatives", c.negatives, 0);
  toml.integer("finetune", "steps", c.finetune_steps, 0);
  toml.integer("finetune", "epochs", c.finetune_epochs, 1);
  toml.integer("finetune", "examples_per_document", c.examples_per_document, 1);
  toml.integer("finetune", "synthetic_pairs", c.synthetic_pairs, 0);
  toml.number("finetune", "learning_rate", c.finetune_lr, 1e-12, 10);
  toml.number("finetune", "temperature", c.temperature, 1e-4, 100);

  toml.texts("eval", "benchmarks", c.benchmarks);
  for (const std::string& b : c.benchmarks) {
    if (b == "corpus")
      throw input_error(toml.where("eval", "benchmarks"),
                        "'corpus' is now 'documents' (windows of each length from every source)");
    if (std::find(kBenchmarks.begin(), kBenchmarks.end(), b) == kBenchmarks.end())
      throw input_error(toml.where("eval", "benchmarks"),
                        "unknown benchmark '" + b +
                            "' (passages, documents, code, passkey, needle)");
  }
  auto sorted_lengths = [](std::vector<int64_t>& lengths) {
    std::sort(lengths.begin(), lengths.end());
    lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  };
  c.lengths = {c.passage_length, 4 * c.passage_length, 16 * c.passage_length};
  toml.integers("eval", "lengths", c.lengths, 16);
  sorted_lengths(c.lengths);
  c.needle_lengths = c.lengths;
  toml.integers("eval", "needle_lengths", c.needle_lengths, 16);
  sorted_lengths(c.needle_lengths);
  toml.numbers("eval", "depths", c.depths, 0, 1);
  toml.integer("eval", "queries_per_document", c.queries_per_document, 1);
  toml.integer("eval", "windows", c.windows, 0);
  toml.integer("eval", "windows_per_document", c.windows_per_document, 1);
  toml.integer("eval", "granularity", c.granularity, 1);
  toml.integer("eval", "queries", c.queries, 1);
  toml.integer("eval", "documents", c.documents, 1);
  toml.integer("eval", "needle_keys", c.needle_keys, 1);
  toml.integer("eval", "attention_docs", c.attention_docs, 0);
  toml.text("eval", "select", c.select);
  if (c.select != "none" && c.select != "dev")
    throw input_error(toml.where("eval", "select"), "must be \"dev\" or \"none\"");
  c.granularity_label = toml.sweep_label("eval", "granularity");
  if (c.select == "dev") {
    if (c.granularity_label.empty())
      throw input_error(toml.where("eval", "select"),
                        "\"dev\" chooses among the granularities of a [sweep] over "
                        "\"eval.granularity\", and there is none");
    const bool has_dev = std::any_of(c.benchmarks.begin(), c.benchmarks.end(), [](const auto& b) {
      return b == "passages" || b == "documents" || b == "code";
    });
    if (!has_dev)
      throw input_error(toml.where("eval", "select"),
                        "\"dev\" needs a benchmark with a dev split (passages, documents, code); "
                        "passkey and needle have none");
  }
  read_slurm_options(toml, c.slurm);
  return c;
}

}  // namespace

const std::vector<std::string>& study_profiles() {
  return kProfiles;
}

const std::vector<std::string>& study_benchmarks() {
  return kBenchmarks;
}

const std::map<std::string, std::vector<std::string>>& study_config_keys() {
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"study", {"name", "dir", "db", "corpus", "corpus_limit", "seed"}},
      {"tokenizer", {"vocab_size"}},
      {"model",
       {"preset", "hidden_size", "layers", "heads", "intermediate_size", "local_window",
        "rope_theta", "rope", "init"}},
      {"pretrain", {"max_length", "batch_size", "steps", "epochs", "learning_rate"}},
      {"finetune",
       {"poolings", "query_max_length", "passage_max_length", "batch_size", "negatives", "steps",
        "epochs", "examples_per_document", "synthetic_pairs", "learning_rate", "temperature"}},
      {"eval",
       {"benchmarks", "lengths", "queries_per_document", "windows", "windows_per_document",
        "needle_lengths", "depths", "queries", "documents", "needle_keys", "granularity",
        "attention_docs", "select"}},
      {"slurm", slurm_option_keys()}};
  return keys;
}

std::vector<StudyConfig> read_study_grid(const std::string& path, const std::string& profile,
                                         const std::string& db_override,
                                         const std::string& dir_override) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw input_error(path, "no such study config");
  TomlConfig toml(path, study_config_keys(), kProfiles, /*sweep=*/true);
  toml.use_profile(profile);
  std::vector<StudyConfig> cells;
  for (size_t i = 0; i < toml.cell_count(); ++i) {
    toml.use_cell(i);
    StudyConfig c = read_cell(toml, path, profile, db_override, dir_override);
    c.cell = toml.cell_values(i);
    c.cell_name = toml.cell_name(i);
    if (!cells.empty()) {
      SlurmJobSpec probe;
      probe.command = {"lmk"};
      if (slurm_script(c.slurm, probe) != slurm_script(cells.front().slurm, probe))
        throw input_error(path + ": sweep", "the [slurm] options cannot differ between cells");
      for (const char* key : {"name", "dir", "db"}) {
        const std::string& a = std::string(key) == "name"  ? c.name
                               : std::string(key) == "dir" ? c.dir
                                                           : c.db;
        const std::string& b = std::string(key) == "name"  ? cells.front().name
                               : std::string(key) == "dir" ? cells.front().dir
                                                           : cells.front().db;
        if (a != b)
          throw input_error(toml.where("study", key),
                            "cannot differ between sweep cells (one study, one folder, one store)");
      }
    }
    cells.push_back(std::move(c));
  }
  return cells;
}

StudyConfig read_study_config(const std::string& path, const std::string& profile,
                              const std::string& db_override, const std::string& dir_override) {
  return read_study_grid(path, profile, db_override, dir_override).front();
}

}  // namespace lmk
