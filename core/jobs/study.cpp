// Study plans (core/jobs/study.h): a study config's cells turned into `lmk` steps with
// content-addressed keys and folders, identical steps of a sweep merged. Running the steps is in
// study_run.cpp, the config reader in study_config.cpp, the tables in study_table.cpp.
#include "core/jobs/study.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "core/jobs/lmk_commands.h"
#include "core/pool/pooling_kind.h"
#include "core/tokenize/landmark.h"
#include "core/util/error.h"
#include "core/util/random.h"

namespace lmk {

namespace {

namespace fs = std::filesystem;

// FNV-1a, 64 bits, as 16 hex digits: the identity of a step's inputs.
std::string hash_text(const std::string& text) {
  std::ostringstream out;
  out << std::hex << std::setw(16) << std::setfill('0') << fnv1a64(text);
  return out.str();
}

// "path size mtime" of a file, or of every file under a folder (sorted): what tells a step
// that a file of your own changed under the same path. Reading the contents of a several-GB
// training file at every plan would cost minutes.
std::string file_stamps(const std::string& path) {
  std::error_code ec;
  std::vector<std::string> stamps;
  auto stamp = [&](const fs::path& file) {
    std::error_code size_error, time_error;
    const auto size = fs::file_size(file, size_error);
    const auto time = fs::last_write_time(file, time_error).time_since_epoch().count();
    stamps.push_back(file.string() + " " + std::to_string(size_error ? 0 : size) + " " +
                     std::to_string(time_error ? 0 : time));
  };
  if (fs::is_directory(path, ec)) {
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec)) stamp(it->path());
  } else {
    stamp(path);
  }
  std::sort(stamps.begin(), stamps.end());
  std::string text;
  for (const std::string& s : stamps) text += s + "\n";
  return text;
}

// One cell's steps, planned by stage: the corpora and the tokenizer, the datasets and training
// pairs, the start of fine-tuning (a model folder of your own, or init and pretraining), the
// fine-tunes, the evaluations. Each step is a typed lmk command (core/jobs/lmk_commands.h)
// whose arguments and files are written when it is added. Placeholders: @OUT@ is the step's
// own folder (DIR/ID/KEY, known once its key is), @RUN@ the name of the run it records (known
// once the cells are merged); neither enters the key, so a step's key is the same in every cell
// that has it.
class CellPlanner {
 public:
  CellPlanner(const StudyConfig& c, const std::string& experiment)
      : c_(c), experiment_(experiment) {}

  std::vector<StudyStep> plan() {
    plan_sources();
    plan_tokenizer();
    plan_datasets();
    plan_synthetic_pairs();
    plan_generated_tasks();
    plan_start();
    plan_finetunes();
    plan_evaluations();
    return std::move(steps_);
  }

 private:
  using Ids = std::vector<std::string>;

  const StudyConfig& c_;
  const std::string& experiment_;
  std::vector<StudyStep> steps_;
  std::map<std::string, std::string> dirs_;  // step id -> its folder
  // The sources' folders: a built-in one is rendered by a step of its own.
  std::map<std::string, std::string> folder_;  // source -> folder
  std::map<std::string, Ids> source_dep_;      // source -> its render step
  Ids folders_, render_deps_;
  std::string tokenizer_;  // the tokenizer file (or the model folder of [model] init)
  Ids tokenizer_dep_;
  // Fine-tuning data: training files of your own, or the sources' (and synthetic) pairs.
  Ids pair_files_, pair_deps_;
  std::string start_;  // the model fine-tuning starts from
  Ids start_dep_;

  std::string out(const std::string& id) const { return dirs_.at(id); }
  bool benchmark(const std::string& b) const {
    return std::find(c_.benchmarks.begin(), c_.benchmarks.end(), b) != c_.benchmarks.end();
  }
  static Ids with(Ids a, const Ids& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }

  // Writes the step's arguments and files from its command, keys it and fills in @OUT@.
  void add(const std::string& id, LmkCommand command, Ids outputs, Ids deps,
           std::string store_run = "", Ids inputs = {}, std::string store_histogram = "") {
    StudyStep step;
    step.id = id;
    step.args = lmk_argv(command);
    step.files = lmk_command_files(command);
    step.outputs = std::move(outputs);
    step.store_run = std::move(store_run);
    step.deps = std::move(deps);
    step.store_histogram = std::move(store_histogram);
    step.inputs = std::move(inputs);
    step.command = std::move(command);
    std::string text;
    for (const std::string& a : step.args) text += a + '\x1f';
    for (const auto& [file, content] : step.files) text += file + '\x1e' + content + '\x1f';
    for (const std::string& o : step.outputs) text += o + '\x1c';
    for (const std::string& input : step.inputs) text += file_stamps(input) + '\x1b';
    for (const std::string& dep : step.deps) {
      const auto it = std::find_if(steps_.begin(), steps_.end(),
                                   [&](const StudyStep& s) { return s.id == dep; });
      if (it == steps_.end()) throw std::logic_error("study step " + step.id + " before " + dep);
      text += it->key + '\x1d';
    }
    step.key = hash_text(text);
    step.dir = (fs::path(c_.dir) / step.id / step.key.substr(0, 12)).string();
    auto fill = [&](std::string& value) {
      for (size_t at; (at = value.find("@OUT@")) != std::string::npos;)
        value.replace(at, 5, step.dir);
    };
    for (std::string& a : step.args) fill(a);
    for (auto& [file, content] : step.files) {
      fill(file);
      fill(content);
    }
    for (std::string& o : step.outputs) fill(o);
    const std::string& name = step.args.front();
    step.kind = name == "train" || name == "pretrain" || name == "eval" ? name : "step";
    dirs_[step.id] = step.dir;
    steps_.push_back(std::move(step));
  }

  // Built-in sources rendered as .txt folders; folders of your own as they are.
  void plan_sources() {
    for (const StudySource& source : c_.sources) {
      if (source.builtin.empty()) {
        folder_[source.name] = source.folder;
      } else {
        const std::string id = "corpus/" + source.name;
        add(id, RenderCorpusRequest{source.builtin, "@OUT@", c_.corpus_limit}, {"@OUT@"}, {});
        folder_[source.name] = out(id);
        source_dep_[source.name] = {id};
        render_deps_.push_back(id);
      }
      folders_.push_back(folder_[source.name]);
    }
  }

  // The tokenizer: trained on every source, or the model folder's.
  void plan_tokenizer() {
    tokenizer_ = c_.init;
    if (!c_.init.empty()) return;
    add("tokenizer", TokenizerTrainRequest{folders_, c_.vocab_size, "@OUT@/tokenizer.model"},
        {"@OUT@/tokenizer.model"}, render_deps_);
    tokenizer_ = out("tokenizer") + "/tokenizer.model";
    tokenizer_dep_ = {"tokenizer"};
  }

  // Per source: evaluation datasets from its dev and test documents (passages; windows of each
  // length), training pairs from its train documents, its length histogram (paper, Figure 2).
  // Training files of your own replace the sources' pairs.
  void plan_datasets() {
    pair_files_ = c_.train_files;
    for (const StudySource& source : c_.sources) {
      const std::string& f = folder_[source.name];
      if (benchmark("passages") || benchmark("documents")) {
        CorpusDataRequest data;
        data.source = f;
        data.out = "@OUT@";
        data.seed = c_.seed;
        data.name = source.name;
        data.queries_per_document = c_.queries_per_document;
        Ids outputs = {"@OUT@/passages/dataset.json"}, deps = source_dep_[source.name];
        if (benchmark("documents")) {
          data.lengths = c_.lengths;
          data.tokenizer = tokenizer_;
          data.windows_per_document = c_.windows_per_document;
          data.max_windows = c_.windows;
          outputs.push_back("@OUT@/documents/dataset.json");
          deps = with(deps, tokenizer_dep_);
        }
        add("data/" + source.name, data, outputs, deps);
      }
      if (c_.train_files.empty()) {
        const std::string id = "pairs/" + source.name;
        add(id,
            PairsRequest{f, "@OUT@/pairs.jsonl", c_.seed, c_.negatives, c_.examples_per_document},
            {"@OUT@/pairs.jsonl"}, source_dep_[source.name]);
        pair_files_.push_back(out(id) + "/pairs.jsonl");
        pair_deps_.push_back(id);
      }
      add("stats/" + source.name, StatsRequest{f, tokenizer_, c_.db, source.name + "-documents"},
          {}, with(tokenizer_dep_, source_dep_[source.name]), "", {}, source.name + "-documents");
    }
  }

  // Synthetic in-domain fine-tuning pairs (a separate experiment: the study's tables say so).
  void plan_synthetic_pairs() {
    if (c_.synthetic_pairs <= 0) return;
    for (const std::string task : {"passkey", "needle"}) {
      SyntheticDataRequest data;
      data.task = task;
      data.tokenizer = tokenizer_;
      data.pairs_out = "@OUT@/pairs.jsonl";
      data.lengths = {c_.passage_length};
      data.queries = data.documents = c_.synthetic_pairs;
      data.negatives = std::max<int64_t>(1, c_.negatives);
      data.seed = c_.seed + 1;  // not the evaluation's documents
      Ids deps = tokenizer_dep_;
      if (task == "needle") {
        data.haystack = folders_.front();
        deps = with(deps, source_dep_[c_.sources.front().name]);
      }
      const std::string id = "pairs/synthetic-" + task;
      add(id, data, {"@OUT@/pairs.jsonl"}, deps);
      pair_files_.push_back(out(id) + "/pairs.jsonl");
      pair_deps_.push_back(id);
    }
  }

  // The code dataset and the generated tasks (passkey, the needles, RULER's word tasks):
  // documents of each needle length, measured with the study's tokenizer.
  void plan_generated_tasks() {
    if (benchmark("code"))
      add("data/code", CodeDataRequest{"@OUT@", "dev,test", c_.seed}, {"@OUT@/dataset.json"}, {});
    for (const std::string& task : synthetic_benchmarks()) {
      if (!benchmark(task)) continue;
      SyntheticDataRequest data;
      data.task = task.rfind("needle", 0) == 0 ? "needle" : task;
      data.tokenizer = tokenizer_;
      data.out = "@OUT@";
      data.lengths = c_.needle_lengths;
      data.queries = c_.queries;
      data.documents = c_.documents;
      data.seed = c_.seed;
      if (task != "fwe") data.depths = c_.depths;
      Ids deps = tokenizer_dep_;
      if (data.task == "needle") {
        // The haystack: natural text of the first source.
        data.haystack = folders_.front();
        data.keys = task == "needle-multiquery" ? std::max(c_.needle_keys, c_.needle_queries)
                                                : c_.needle_keys;
        deps = with(deps, source_dep_[c_.sources.front().name]);
      }
      if (task == "needle-multivalue") data.values = c_.needle_values;
      if (task == "needle-multiquery") data.queries_per_document = c_.needle_queries;
      // The dataset's name in the store, where it is not the command's.
      if (task != data.task) data.name = task;
      add("data/" + task, data, {"@OUT@"}, deps);
    }
  }

  // The [output] keys of a training config, and its device where not the CPU (absent on the
  // CPU, so that a CPU study's steps, and their keys, are what they were).
  void set_output(TrainingSettings& s, Ids& keys) const {
    s.out_dir = "@OUT@";
    s.db = c_.db;
    s.experiment = experiment_;
    s.run_name = "@RUN@";
    keys.insert(keys.end(), {"output.dir", "output.db", "output.experiment", "output.run_name"});
  }
  // [train] epochs, max_steps (when capped), seed, checkpoint_every, log_every and device.
  void set_schedule(TrainingSettings& s, Ids& keys, int64_t max_steps, int64_t epochs) const {
    s.epochs = epochs;
    s.max_steps = max_steps;
    s.seed = static_cast<uint64_t>(c_.seed);
    s.checkpoint_every = 100;
    s.log_every = 10;
    s.device = c_.device;
    keys.push_back("train.epochs");
    if (max_steps > 0) keys.push_back("train.max_steps");
    keys.insert(keys.end(), {"train.seed", "train.checkpoint_every", "train.log_every"});
    if (c_.device != "cpu") keys.push_back("train.device");
  }

  // The start of fine-tuning: the model folder of [model] init, else a model initialized here
  // and pretrained on every source.
  void plan_start() {
    start_ = c_.init;
    if (!c_.init.empty()) return;
    ModelInitRequest init;
    init.preset = c_.preset;
    init.tokenizer = tokenizer_;
    init.out = "@OUT@";
    init.seed = c_.seed;
    // Written only when not ModernBERT, so that an encoder study's steps keep their keys.
    if (c_.architecture != "modernbert") init.architecture = c_.architecture;
    init.hidden_size = c_.hidden_size;
    init.layers = c_.layers;
    init.heads = c_.heads;
    init.intermediate_size = c_.intermediate_size;
    init.local_window = c_.local_window;
    init.rope_theta = c_.rope_theta;
    init.no_rope = !c_.rope;
    init.kv_heads = c_.kv_heads;
    init.bidirectional = c_.bidirectional;
    add("init", init, {"@OUT@/config.json"}, tokenizer_dep_);

    PretrainRequest pretrain;
    pretrain.config_file = "@OUT@.toml";
    PretrainConfig& p = pretrain.config;
    p.init_model = out("init");
    p.train = folders_;
    p.max_length = c_.pretrain_length;
    p.batch_size = c_.pretrain_batch;
    p.learning_rate = c_.pretrain_lr;
    pretrain.keys = {"model.init", "data.train", "train.max_length", "train.batch_size",
                     "train.learning_rate"};
    set_schedule(p, pretrain.keys, c_.pretrain_steps, c_.pretrain_epochs);
    set_output(p, pretrain.keys);
    add("pretrain", pretrain, {"@OUT@/last/config.json"}, with({"init"}, render_deps_), "pretrain");
    start_ = out("pretrain") + "/last";
    start_dep_ = {"pretrain"};
  }

  // Every pooling fine-tuned from the same start on the same pairs.
  void plan_finetunes() {
    for (const StudyVariant& v : c_.variants) {
      FinetuneRequest finetune;
      finetune.config_file = "@OUT@.toml";
      ContrastiveConfig& t = finetune.config;
      Ids& keys = finetune.keys;
      t.init_model = start_;
      t.train_files = pair_files_;
      t.stream = c_.stream;
      keys = {"model.init", "data.train"};
      if (c_.stream) keys.push_back("data.stream");
      t.pooling = v.pooling;
      keys.push_back("train.pooling");
      if (!v.train_landmarks.empty()) {
        // The layout the saved model encodes with by default: its training's first granularity.
        // (The evaluations below pass theirs; keeping [eval] granularity out of the fine-tuning
        // lets a sweep over it share the fine-tuned models.)
        t.train_landmarks = v.train_landmarks;
        t.eval_landmarks =
            LandmarkSpec::of(
                LandmarkMode::Fixed,
                static_cast<int>(v.first_granularity > 0 ? v.first_granularity : c_.granularity))
                .to_string();
        keys.insert(keys.end(), {"train.train_landmarks", "train.eval_landmarks"});
      }
      t.query_max_length = c_.query_length;
      t.passage_max_length = c_.passage_length;
      t.batch_size = c_.finetune_batch;
      t.negatives = c_.negatives;
      t.learning_rate = c_.finetune_lr;
      t.temperature = c_.temperature;
      keys.insert(keys.end(),
                  {"train.query_max_length", "train.passage_max_length", "train.batch_size",
                   "train.negatives", "train.learning_rate", "train.temperature"});
      set_schedule(t, keys, c_.finetune_steps, c_.finetune_epochs);
      // Written only when set, so that a study without them keeps its steps' keys.
      if (c_.warmup_ratio > 0) {
        t.warmup_ratio = c_.warmup_ratio;
        keys.push_back("train.warmup_ratio");
      }
      t.recompute_layers = c_.recompute_layers;
      if (c_.recompute_layers) keys.push_back("train.recompute_layers");
      if (c_.lora_rank > 0) {
        t.lora_rank = c_.lora_rank;
        t.lora_alpha = c_.lora_alpha;
        t.lora_dropout = c_.lora_dropout;
        t.lora_targets = c_.lora_targets;
        keys.insert(keys.end(), {"lora.rank", "lora.alpha", "lora.dropout", "lora.target_modules"});
      }
      set_output(t, keys);
      add("finetune/" + v.label, finetune, {"@OUT@/last/config.json"}, with(start_dep_, pair_deps_),
          "finetune/" + v.label, c_.train_files);
    }
  }

  // Every fine-tuned model on every benchmark: test, and dev where the granularity is chosen on
  // it; datasets of your own on their default split.
  void plan_evaluations() {
    for (const StudyVariant& v : c_.variants) {
      // Only a pooling whose encoding reads the granularity is chosen on dev among its values.
      const bool reads = reads_granularity(parse_pooling(v.pooling, "pooling"));
      auto eval_step = [&](const std::string& name, const std::string& dataset, int64_t max_length,
                           int64_t attention_docs, const std::string& data_dep,
                           const std::string& split) {
        const std::string suffix = split.empty() ? "" : ":" + split;
        EvalRequest eval;
        eval.model = out("finetune/" + v.label) + "/last";
        eval.dataset = dataset;
        eval.pooling = v.pooling;
        eval.db = c_.db;
        eval.experiment = experiment_;
        eval.run_name = "@RUN@";
        eval.attention_docs = split.empty() ? attention_docs : 0;
        eval.query_max_length = c_.query_length;
        if (reads) eval.granularity = c_.granularity;
        eval.max_length = max_length;
        eval.split = split;
        eval.device = c_.device;
        Ids deps = {"finetune/" + v.label};
        if (!data_dep.empty()) deps.push_back(data_dep);
        // A dataset of your own: its files' stamps enter the key.
        add("eval/" + v.label + "/" + name + suffix, eval, {}, deps, v.label + "/" + name + suffix,
            data_dep.empty() ? Ids{dataset} : Ids{});
      };
      Ids splits = {""};
      if (c_.select == "dev" && reads) splits.push_back("dev");
      for (const std::string& split : splits) {
        for (const StudySource& source : c_.sources) {
          // The source's data step exists only for these benchmarks.
          if (benchmark("passages"))
            eval_step(source.name + "-passages", out("data/" + source.name) + "/passages",
                      c_.passage_length, 0, "data/" + source.name, split);
          // Windows are read whole: every target holds its length, no evidence is cut off.
          if (benchmark("documents"))
            eval_step(source.name + "-documents", out("data/" + source.name) + "/documents", 0,
                      c_.attention_docs, "data/" + source.name, split);
        }
        if (benchmark("code"))
          eval_step("code", out("data/code"), c_.pretrain_length, 0, "data/code", split);
      }
      for (const std::string& task : synthetic_benchmarks()) {
        if (benchmark(task))
          eval_step(task, out("data/" + task), 0, c_.attention_docs, "data/" + task, "");
      }
      for (size_t i = 0; i < c_.datasets.size(); ++i)
        eval_step(fs::path(c_.datasets[i]).filename().string(), c_.datasets[i],
                  c_.dataset_max_lengths[c_.dataset_max_lengths.size() == 1 ? 0 : i],
                  c_.attention_docs, "", "");
    }
  }
};

}  // namespace

StudyPlan plan_study(const std::vector<StudyConfig>& cells) {
  if (cells.empty()) throw std::logic_error("plan_study: no cells");
  StudyPlan plan;
  plan.config = cells.front();
  plan.experiment = plan.config.name + "-" + plan.config.profile;
  // Values of each swept label in the whole grid: a label with one value names nothing.
  std::map<std::string, std::set<std::string>> grid_values;
  for (const StudyConfig& c : cells)
    for (const auto& [label, value] : c.cell) grid_values[label].insert(value);
  std::map<std::string, size_t> by_key;  // key -> index in plan.steps
  std::vector<std::map<std::string, std::string>> cell_ids(cells.size());  // cell id -> key
  std::vector<std::string> base_ids, base_runs;  // per merged step: id and run name in a cell
  for (size_t ci = 0; ci < cells.size(); ++ci) {
    for (StudyStep& step : CellPlanner(cells[ci], plan.experiment).plan()) {
      cell_ids[ci][step.id] = step.key;
      const auto found = by_key.find(step.key);
      if (found != by_key.end()) {
        plan.steps[found->second].cells.push_back(ci);
        continue;
      }
      by_key[step.key] = plan.steps.size();
      base_ids.push_back(step.id);
      base_runs.push_back(step.store_run);
      for (std::string& dep : step.deps) dep = cell_ids[ci].at(dep);  // keys for now
      step.cells = {ci};
      plan.steps.push_back(std::move(step));
    }
  }
  // Names: the swept values all users of a step share, in front of its id and run name.
  std::map<std::string, std::string> id_of_key;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    StudyStep& step = plan.steps[i];
    std::string prefix;
    for (const auto& [label, value] : cells[step.cells.front()].cell) {
      if (grid_values[label].size() < 2) continue;
      bool shared = true;
      for (size_t ci : step.cells) {
        for (const auto& [l, v] : cells[ci].cell) shared &= l != label || v == value;
      }
      if (shared) prefix += (prefix.empty() ? "" : ",") + label + "=" + value;
    }
    auto named = [&](const std::string& name) {
      return prefix.empty() ? name : prefix + "/" + name;
    };
    step.id = named(base_ids[i]);
    if (!step.store_run.empty()) step.store_run = named(base_runs[i]);
    const std::string run = step.store_run.empty() ? step.id : step.store_run;
    auto fill = [&](std::string& value) {
      for (size_t at; (at = value.find("@RUN@")) != std::string::npos;) value.replace(at, 5, run);
    };
    for (std::string& a : step.args) fill(a);
    for (auto& [file, content] : step.files) fill(content);
    for (std::string& dep : step.deps) dep = id_of_key.at(dep);
    id_of_key[step.key] = step.id;
  }
  for (size_t ci = 0; ci < cells.size(); ++ci) {
    StudyCell cell{cells[ci], {}};
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const StudyStep& step = plan.steps[i];
      if (!base_runs[i].empty() &&
          std::find(step.cells.begin(), step.cells.end(), ci) != step.cells.end())
        cell.run_names[base_runs[i]] = step.store_run;
    }
    plan.cells.push_back(std::move(cell));
  }
  return plan;
}

StudyPlan plan_study(const StudyConfig& config) {
  return plan_study(std::vector<StudyConfig>{config});
}

}  // namespace lmk
