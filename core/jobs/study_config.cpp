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
#include "core/util/device_name.h"
#include "core/util/error.h"
#include "core/util/paper_defaults.h"
#include "core/util/settings.h"
#include "core/util/toml_config.h"

namespace lmk {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kProfiles = {"micro", "quick", "full"};
const std::vector<std::string> kSynthetic = {"passkey",           "needle", "needle-multivalue",
                                             "needle-multiquery", "cwe",    "fwe"};
const std::vector<std::string> kBenchmarks = [] {
  std::vector<std::string> all = {"passages", "documents", "code"};
  all.insert(all.end(), kSynthetic.begin(), kSynthetic.end());
  return all;
}();
const std::vector<std::string> kBuiltinSources = {"manpages", "python-docs", "kernel-docs"};

// "a, b, c": the names a message lists.
std::string listed(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : ", ") + name;
  return text;
}

// An input of your own that this machine lacks: noted in `missing` (a dry run plans without
// it, once per path), else an InputError naming the key.
void missing_input(MissingInputs* missing, const std::string& where, const std::string& path,
                   const std::string& why) {
  if (missing == nullptr) throw input_error(where, "'" + path + "' " + why);
  for (const MissingInput& known : *missing)
    if (known.path == path) return;
  missing->push_back({where, path});
}

void check_name(const std::string& name, const std::string& where) {
  if (name.empty() || name.find_first_of("/ \t") != std::string::npos)
    throw input_error(where, "must be a non-empty name without / or spaces");
}

void check_preset(const std::string& preset, const std::string& where) {
  if (preset != "tiny" && preset != "small" && preset != "base")
    throw input_error(where, "must be tiny, small or base");
}

// lmk model init's --architecture values.
void check_architecture(const std::string& architecture, const std::string& where) {
  for (const char* known : {"modernbert", "bert", "gte", "qwen3", "llama"})
    if (architecture == known) return;
  throw input_error(
      where, "unknown architecture '" + architecture + "' (modernbert, bert, gte, qwen3, llama)");
}

bool is_decoder(const std::string& architecture) {
  return architecture == "qwen3" || architecture == "llama";
}

// cpu, cuda or cuda:N as the model commands read it (whether the machine that runs the steps
// has it is checked there).
void check_device(const std::string& device, const std::string& where) {
  if (!read_device_name(device)) throw input_error(where, bad_device_message(device));
}

void check_benchmark(const std::string& benchmark, const std::string& where) {
  if (benchmark == "corpus")
    throw input_error(where,
                      "'corpus' is now 'documents' (windows of each length from every source)");
  if (std::find(kBenchmarks.begin(), kBenchmarks.end(), benchmark) == kBenchmarks.end())
    throw input_error(where, "unknown benchmark '" + benchmark + "' (" + listed(kBenchmarks) + ")");
}

void check_select(const std::string& select, const std::string& where) {
  if (select != "none" && select != "dev") throw input_error(where, "must be \"dev\" or \"none\"");
}

// [study] corpus: built-in source names ("builtin": the man pages, as before sources had names)
// and folders of .txt files, each a named source.
std::vector<StudySource> read_sources(const TomlConfig& toml, MissingInputs* missing) {
  std::vector<std::string> entries = {"manpages"};
  toml.text_or_texts("study", "corpus", entries, /*empty_ok=*/true);
  std::vector<StudySource> sources;
  std::set<std::string> names;
  for (const std::string& entry : entries) {
    StudySource source;
    if (entry == "builtin" ||
        std::find(kBuiltinSources.begin(), kBuiltinSources.end(), entry) != kBuiltinSources.end()) {
      source.builtin = entry == "builtin" ? "manpages" : entry;
      source.name = source.builtin;
      if (source.builtin != "manpages") {
        try {
          require_installed(html_docs_source(source.builtin, toml.where("study", "corpus")));
        } catch (const InputError& e) {
          throw input_error(toml.where("study", "corpus"), e.what());
        }
      }
    } else {
      std::error_code ec;
      source.folder = fs::absolute(toml.resolve(entry)).lexically_normal().string();
      if (!fs::is_directory(source.folder, ec))
        missing_input(missing, toml.where("study", "corpus"), source.folder,
                      "is not a folder (or a built-in source: manpages, python-docs, "
                      "kernel-docs)");
      source.name = fs::path(source.folder).filename().string();
      // Step and run names the sources' share: a folder may not be named like a task.
      if (source.name == "code" ||
          std::find(kSynthetic.begin(), kSynthetic.end(), source.name) != kSynthetic.end())
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
  parse_pooling(v.pooling, where);
  v.label = v.pooling;
  if (colon != std::string::npos) {
    v.train_landmarks = text.substr(colon + 1);
    const LandmarkSpec spec = LandmarkSpec::parse(v.train_landmarks, where);
    const bool given = v.train_landmarks.find(':') != std::string::npos;  // "variable" names none
    if (given && !spec.granularities.empty()) v.first_granularity = spec.granularities.front();
    const std::string mode = spec.to_string().substr(0, spec.to_string().find(':'));
    v.label += "-" + (spec.mode == LandmarkMode::Fixed      ? std::to_string(v.first_granularity)
                      : spec.mode == LandmarkMode::Variable ? std::string("var")
                                                            : mode);
  }
  return v;
}

// [finetune] train and [eval] datasets (data of your own), and what a study without a corpus
// cannot do.
void check_own_data(const TomlConfig& toml, StudyConfig& c, MissingInputs* missing) {
  std::error_code ec;
  for (std::string& file : c.train_files) {
    file = fs::absolute(file).lexically_normal().string();
    if (!fs::is_regular_file(file, ec))
      missing_input(missing, toml.where("finetune", "train"), file, "is not a training file");
  }
  if (c.stream && c.train_files.empty())
    throw input_error(toml.where("finetune", "stream"),
                      "streams the files of [finetune] train, and there are none");
  // The names of the built-in tasks' runs, which a dataset's name may not take.
  auto benchmark = [&](const std::string& b) {
    return std::find(c.benchmarks.begin(), c.benchmarks.end(), b) != c.benchmarks.end();
  };
  std::set<std::string> names;
  if (benchmark("code")) names.insert("code");
  for (const std::string& task : kSynthetic)
    if (benchmark(task)) names.insert(task);
  for (const StudySource& source : c.sources)
    for (const char* kind : {"passages", "documents"})
      if (benchmark(kind)) names.insert(source.name + "-" + kind);
  for (std::string& folder : c.datasets) {
    folder = fs::absolute(folder).lexically_normal().string();
    if (!fs::is_directory(folder, ec))
      missing_input(missing, toml.where("eval", "datasets"), folder,
                    "is not a folder (a BEIR folder, or a folder of them)");
    const std::string name = fs::path(folder).filename().string();
    if (!names.insert(name).second)
      throw input_error(toml.where("eval", "datasets"),
                        "two evaluations would be named '" + name + "': rename the folder");
  }
  if (c.dataset_max_lengths.size() != 1 && c.dataset_max_lengths.size() != c.datasets.size())
    throw input_error(toml.where("eval", "max_lengths"),
                      "holds one length for all datasets or one per dataset (" +
                          std::to_string(c.datasets.size()) + "), not " +
                          std::to_string(c.dataset_max_lengths.size()));
  if (c.sources.empty()) {
    auto needs = [&](const char* section, const char* key, const std::string& what) {
      throw input_error(toml.where(section, key),
                        what + " needs a corpus, and [study] corpus is empty");
    };
    if (c.init.empty()) needs("model", "init", "a model trained here (no [model] init)");
    if (c.train_files.empty()) needs("finetune", "train", "fine-tuning on pairs from the sources");
    if (c.synthetic_pairs > 0) needs("finetune", "synthetic_pairs", "the needle pairs' haystack");
    // The needles' haystack is the first source's text.
    for (const char* b :
         {"passages", "documents", "needle", "needle-multivalue", "needle-multiquery"})
      if (benchmark(b)) needs("eval", "benchmarks", std::string("the ") + b + " benchmark");
  }
  if (c.benchmarks.empty() && c.datasets.empty())
    throw input_error(toml.where("eval", "benchmarks"),
                      "nothing to evaluate: no benchmark and no [eval] datasets");
}

StudyConfig read_cell(const TomlConfig& toml, const std::string& path, const std::string& profile,
                      const std::string& db_override, const std::string& dir_override,
                      MissingInputs* missing) {
  std::error_code ec;
  StudyConfig c;
  c.path = fs::absolute(path).lexically_normal().string();
  c.profile = profile;
  // The keys read one by one (study_settings); the others below.
  read_settings(toml, study_settings(), c);
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
  c.sources = read_sources(toml, missing);
  toml.text("model", "init", c.init);
  if (!c.init.empty()) {
    c.init = fs::absolute(toml.resolve(c.init)).lexically_normal().string();
    if (!fs::is_regular_file(fs::path(c.init) / "config.json", ec))
      missing_input(missing, toml.where("model", "init"), c.init,
                    "is not a model folder (no config.json)");
  }

  // A decoder's keys.
  if (c.kv_heads > 0 && !is_decoder(c.architecture))
    throw input_error(toml.where("model", "kv_heads"),
                      "key / value heads are a decoder's (architecture qwen3 or llama), not " +
                          c.architecture + "'s");
  if (c.bidirectional && !is_decoder(c.architecture))
    throw input_error(toml.where("model", "bidirectional"),
                      "makes a decoder (architecture qwen3 or llama) bidirectional; " +
                          c.architecture + " is bidirectional already");
  if (c.local_window >= 0 && is_decoder(c.architecture))
    throw input_error(toml.where("model", "local_window"),
                      "a decoder's layers all attend globally (a local window is ModernBERT's)");

  std::vector<std::string> poolings = {"cls", "mean", "lmk:" + paper::eval_landmarks_text(),
                                       "lmk:" + paper::train_landmarks_text()};
  toml.texts("finetune", "poolings", poolings);
  std::set<std::string> labels;
  for (const std::string& p : poolings) {
    c.variants.push_back(parse_variant(p, toml.where("finetune", "poolings")));
    if (!labels.insert(c.variants.back().label).second)
      throw input_error(toml.where("finetune", "poolings"),
                        "two entries share the label '" + c.variants.back().label + "'");
  }
  if (c.passage_length == 0) c.passage_length = c.pretrain_length;
  if (!c.init.empty() && c.passage_length == 0)
    throw input_error(toml.where("finetune", "passage_max_length"),
                      "must be set when [model] init starts from a model folder");

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
                        "passkey and needle have none, nor have the other generated tasks (" +
                            listed(kSynthetic) + ")");
  }
  check_own_data(toml, c, missing);
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

const std::vector<std::string>& synthetic_benchmarks() {
  return kSynthetic;
}

const SettingsTable<StudyConfig>& study_settings() {
  using S = Setting<StudyConfig>;
  using C = StudyConfig;
  static const SettingsTable<StudyConfig> table = {
      S("study", "name", &C::name).checked(check_name).form("Name"),
      S("study", "corpus")
          .form("Corpus",
                "manpages, python-docs, kernel-docs, or folders of .txt files "
                "(default: manpages)"),
      S("study", "corpus_limit", &C::corpus_limit)
          .at_least(0)
          .form("Pages per built-in source", "0: all"),
      S("study", "seed", &C::seed).at_least(0).form("Seed"),
      S("study", "device", &C::device)
          .checked(check_device)
          .form("Device", "cpu, cuda or cuda:N: where training and evaluation run"),
      S("study", "dir")
          .form("Study folder", "../build/studies/NAME-PROFILE from the config's folder"),
      S("study", "db").form("Results store", "STUDY FOLDER/results.db"),
      S("tokenizer", "vocab_size", &C::vocab_size).at_least(100).form("Vocabulary size"),
      S("model", "preset", &C::preset).checked(check_preset).form("Preset"),
      S("model", "architecture", &C::architecture)
          .checked(check_architecture)
          .form("Architecture", "modernbert, bert, gte, qwen3 or llama (default modernbert)"),
      S("model", "hidden_size", &C::hidden_size).at_least(1).form("Hidden size", "the preset's"),
      S("model", "layers", &C::layers).at_least(1).form("Layers", "the preset's"),
      S("model", "heads", &C::heads).at_least(1).form("Attention heads", "the preset's"),
      S("model", "kv_heads", &C::kv_heads)
          .at_least(0)
          .form("Key/value heads", "decoders: as many as the heads"),
      S("model", "intermediate_size", &C::intermediate_size)
          .at_least(1)
          .form("MLP size", "the preset's"),
      S("model", "local_window", &C::local_window)
          .at_least(0)
          .form("Local attention window", "the preset's"),
      S("model", "rope_theta", &C::rope_theta)
          .range(1, 1e12)
          .form("RoPE θ", "the preset's (160000)"),
      S("model", "rope", &C::rope),
      S("model", "bidirectional", &C::bidirectional),
      S("model", "init"),
      S("pretrain", "max_length", &C::pretrain_length)
          .at_least(16)
          .form("Training length (tokens)"),
      S("pretrain", "batch_size", &C::pretrain_batch).at_least(1).form("Batch size"),
      S("pretrain", "learning_rate", &C::pretrain_lr).range(1e-12, 10).form("Learning rate"),
      S("pretrain", "steps", &C::pretrain_steps).at_least(0).form("Steps", "0: by epochs"),
      S("pretrain", "epochs", &C::pretrain_epochs).at_least(1).form("Epochs"),
      S("finetune", "poolings").form("Poolings"),
      S("finetune", "query_max_length", &C::query_length).at_least(8).form("Query length"),
      S("finetune", "passage_max_length", &C::passage_length)
          .at_least(0)
          .form("Passage length", "the training length"),
      S("finetune", "batch_size", &C::finetune_batch).at_least(2).form("Batch size"),
      S("finetune", "negatives", &C::negatives).at_least(0).form("Hard negatives"),
      S("finetune", "learning_rate", &C::finetune_lr).range(1e-12, 10).form("Learning rate"),
      S("finetune", "temperature", &C::temperature).range(1e-4, 100).form("Temperature"),
      S("finetune", "steps", &C::finetune_steps).at_least(0).form("Steps", "0: by epochs"),
      S("finetune", "epochs", &C::finetune_epochs).at_least(1).form("Epochs"),
      S("finetune", "examples_per_document", &C::examples_per_document)
          .at_least(1)
          .form("Pairs per document"),
      S("finetune", "synthetic_pairs", &C::synthetic_pairs).at_least(0),
      S("finetune", "train", &C::train_files).one_text_or_many().path(),
      S("finetune", "stream", &C::stream),
      S("finetune", "warmup_ratio", &C::warmup_ratio).range(0, 1),
      S("finetune", "recompute_layers", &C::recompute_layers),
      S("finetune", "lora_rank", &C::lora_rank).at_least(0),
      S("finetune", "lora_alpha", &C::lora_alpha).range(1e-6, 1e6),
      S("finetune", "lora_dropout", &C::lora_dropout).range(0, 0.99),
      S("finetune", "lora_target_modules", &C::lora_targets).one_text_or_many(),
      S("eval", "benchmarks", &C::benchmarks)
          .may_be_empty()
          .checked(check_benchmark)
          .form("Benchmarks"),
      S("eval", "lengths").form("Document lengths", "1×, 4×, 16× the fine-tuning length"),
      S("eval", "queries_per_document", &C::queries_per_document)
          .at_least(1)
          .form("Queries per window"),
      S("eval", "windows", &C::windows).at_least(0).form("Windows per split and length"),
      S("eval", "windows_per_document", &C::windows_per_document).at_least(1),
      S("eval", "needle_lengths").form("Passkey / needle lengths", "the document lengths"),
      S("eval", "depths", &C::depths).range(0, 1),
      S("eval", "granularity", &C::granularity).at_least(1).form("Granularity g"),
      S("eval", "queries", &C::queries).at_least(1).form("Passkey / needle queries"),
      S("eval", "documents", &C::documents).at_least(1).form("Passkey / needle documents"),
      S("eval", "needle_keys", &C::needle_keys).at_least(1),
      S("eval", "needle_values", &C::needle_values).range(1, 8),
      S("eval", "needle_queries", &C::needle_queries).range(1, 1000),
      S("eval", "attention_docs", &C::attention_docs).at_least(0).form("Attention profile docs"),
      S("eval", "select", &C::select).checked(check_select),
      S("eval", "datasets", &C::datasets).one_text_or_many().may_be_empty().path(),
      S("eval", "max_lengths", &C::dataset_max_lengths).at_least(0),
  };
  return table;
}

const std::map<std::string, std::vector<std::string>>& study_config_keys() {
  static const std::map<std::string, std::vector<std::string>> keys = [] {
    std::map<std::string, std::vector<std::string>> known;
    add_setting_keys(known, study_settings());
    known["slurm"] = slurm_option_keys();
    return known;
  }();
  return keys;
}

std::vector<StudyConfig> read_study_grid(const std::string& path, const std::string& profile,
                                         const std::string& db_override,
                                         const std::string& dir_override, MissingInputs* missing) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw input_error(path, "no such study config");
  TomlConfig toml(path, study_config_keys(), kProfiles, /*sweep=*/true);
  toml.use_profile(profile);
  std::vector<StudyConfig> cells;
  for (size_t i = 0; i < toml.cell_count(); ++i) {
    toml.use_cell(i);
    StudyConfig c = read_cell(toml, path, profile, db_override, dir_override, missing);
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

std::string missing_inputs_line(const MissingInputs& missing) {
  std::string list;
  for (const MissingInput& input : missing) {
    // The key without the config's path, which `where` starts with.
    const size_t key = input.where.rfind(": ");
    list += (list.empty() ? "" : "; ") +
            (key == std::string::npos ? input.where : input.where.substr(key + 2)) + " '" +
            input.path + "'";
  }
  const bool one = missing.size() == 1;
  return std::to_string(missing.size()) + (one ? " input" : " inputs") + " you supply " +
         (one ? "is" : "are") + " not on this machine (planned as named; the steps that read " +
         (one ? "it need it" : "them need them") + " where they run): " + list;
}

}  // namespace lmk
