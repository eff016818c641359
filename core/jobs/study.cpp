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

#include "core/pool/pooling_kind.h"
#include "core/tokenize/landmark.h"
#include "core/util/error.h"
#include "core/util/random.h"
#include "core/util/toml_config.h"

namespace lmk {

namespace {

namespace fs = std::filesystem;

std::string join(const std::vector<int64_t>& values, const char* separator = ",") {
  std::string out;
  for (int64_t v : values) out += (out.empty() ? "" : separator) + std::to_string(v);
  return out;
}

std::string number_text(double v) {
  std::ostringstream out;
  out << std::setprecision(10) << v;
  return out.str();
}

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

// One cell's steps. Placeholders: @OUT@ is the step's own folder (DIR/ID/KEY, known once its
// key is), @RUN@ the name of the run it records (known once the cells are merged); neither
// enters the key, so a step's key is the same in every cell that has it.
std::vector<StudyStep> plan_cell(const StudyConfig& c, const std::string& experiment) {
  const fs::path dir(c.dir);
  const std::string seed = std::to_string(c.seed);
  std::vector<StudyStep> steps;
  std::map<std::string, std::string> dirs;  // step id -> its folder
  auto out = [&](const std::string& id) { return dirs.at(id); };
  auto add = [&](StudyStep step) {
    std::string text;
    for (const std::string& a : step.args) text += a + '\x1f';
    for (const auto& [file, content] : step.files) text += file + '\x1e' + content + '\x1f';
    for (const std::string& o : step.outputs) text += o + '\x1c';
    for (const std::string& input : step.inputs) text += file_stamps(input) + '\x1b';
    for (const std::string& dep : step.deps) {
      const auto it =
          std::find_if(steps.begin(), steps.end(), [&](const StudyStep& s) { return s.id == dep; });
      if (it == steps.end()) throw std::logic_error("study step " + step.id + " before " + dep);
      text += it->key + '\x1d';
    }
    step.key = hash_text(text);
    step.dir = (dir / step.id / step.key.substr(0, 12)).string();
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
    const std::string& command = step.args.front();
    step.kind = command == "train" || command == "pretrain" || command == "eval" ? command : "step";
    dirs[step.id] = step.dir;
    steps.push_back(std::move(step));
  };

  auto benchmark = [&](const std::string& b) {
    return std::find(c.benchmarks.begin(), c.benchmarks.end(), b) != c.benchmarks.end();
  };
  // The sources' folders: a built-in one is rendered by a step of its own.
  std::map<std::string, std::string> folder;                   // source -> folder
  std::map<std::string, std::vector<std::string>> source_dep;  // source -> its render step
  std::vector<std::string> folders, render_deps;
  for (const StudySource& source : c.sources) {
    if (source.builtin.empty()) {
      folder[source.name] = source.folder;
    } else {
      const std::string id = "corpus/" + source.name;
      add({id,
           source.builtin == "manpages"
               ? std::vector<std::string>{"data", "manpages", "--out", "@OUT@", "--limit",
                                          std::to_string(c.corpus_limit)}
               : std::vector<std::string>{"data", "docs", "--source", source.builtin, "--out",
                                          "@OUT@", "--limit", std::to_string(c.corpus_limit)},
           {},
           {"@OUT@"},
           "",
           {}});
      folder[source.name] = out(id);
      source_dep[source.name] = {id};
      render_deps.push_back(id);
    }
    folders.push_back(folder[source.name]);
  }
  // The tokenizer: trained on every source, or the model folder's.
  std::string tokenizer = c.init;
  std::vector<std::string> tokenizer_dep;
  if (c.init.empty()) {
    std::vector<std::string> args = {"tokenizer-train"};
    for (const std::string& f : folders) args.insert(args.end(), {"--input", f});
    args.insert(args.end(),
                {"--vocab-size", std::to_string(c.vocab_size), "--out", "@OUT@/tokenizer.model"});
    add({"tokenizer", args, {}, {"@OUT@/tokenizer.model"}, "", render_deps});
    tokenizer = out("tokenizer") + "/tokenizer.model";
    tokenizer_dep = {"tokenizer"};
  }
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  // Per source: evaluation datasets from its dev and test documents (passages; windows of each
  // length), training pairs from its train documents, its length histogram (paper, Figure 2).
  // Training files of your own replace the sources' pairs.
  std::vector<std::string> pair_files = c.train_files, pair_deps;
  for (const StudySource& source : c.sources) {
    const std::string& f = folder[source.name];
    if (benchmark("passages") || benchmark("documents")) {
      StudyStep step{"data/" + source.name,
                     {"data", "corpus", "--source", f, "--out", "@OUT@", "--seed", seed, "--name",
                      source.name, "--splits", "dev,test", "--stratified", "--queries-per-document",
                      std::to_string(c.queries_per_document)},
                     {},
                     {"@OUT@/passages/dataset.json"},
                     "",
                     source_dep[source.name]};
      if (benchmark("documents")) {
        step.args.insert(
            step.args.end(),
            {"--lengths", join(c.lengths), "--tokenizer", tokenizer, "--windows-per-document",
             std::to_string(c.windows_per_document), "--max-windows", std::to_string(c.windows)});
        step.outputs.push_back("@OUT@/documents/dataset.json");
        step.deps = with(step.deps, tokenizer_dep);
      }
      add(step);
    }
    if (c.train_files.empty()) {
      add({"pairs/" + source.name,
           {"data", "pairs", "--source", f, "--out", "@OUT@/pairs.jsonl", "--seed", seed,
            "--negatives", std::to_string(c.negatives), "--examples-per-document",
            std::to_string(c.examples_per_document)},
           {},
           {"@OUT@/pairs.jsonl"},
           "",
           source_dep[source.name]});
      pair_files.push_back(out("pairs/" + source.name) + "/pairs.jsonl");
      pair_deps.push_back("pairs/" + source.name);
    }
    StudyStep stats{"stats/" + source.name,
                    {"data", "stats", f, "--tokenizer", tokenizer, "--db", c.db, "--name",
                     source.name + "-documents"},
                    {},
                    {},
                    "",
                    with(tokenizer_dep, source_dep[source.name])};
    stats.store_histogram = source.name + "-documents";
    add(stats);
  }
  // Synthetic in-domain fine-tuning pairs (a separate experiment: the study's tables say so).
  if (c.synthetic_pairs > 0) {
    for (const std::string task : {"passkey", "needle"}) {
      StudyStep step{
          "pairs/synthetic-" + task,
          {"data", task, "--tokenizer", tokenizer, "--pairs-out", "@OUT@/pairs.jsonl", "--lengths",
           std::to_string(c.passage_length), "--queries", std::to_string(c.synthetic_pairs),
           "--documents", std::to_string(c.synthetic_pairs), "--negatives",
           std::to_string(std::max<int64_t>(1, c.negatives)), "--seed", std::to_string(c.seed + 1)},
          {},
          {"@OUT@/pairs.jsonl"},
          "",
          tokenizer_dep};
      if (std::string(task) == "needle") {
        step.args.insert(step.args.end(), {"--haystack", folders.front()});
        step.deps = with(step.deps, source_dep[c.sources.front().name]);
      }
      add(step);
      pair_files.push_back(out(step.id) + "/pairs.jsonl");
      pair_deps.push_back(step.id);
    }
  }
  if (benchmark("code")) {
    add({"data/code",
         {"data", "code", "--out", "@OUT@", "--seed", seed, "--splits", "dev,test"},
         {},
         {"@OUT@/dataset.json"},
         "",
         {}});
  }
  std::string depth_list;
  for (double d : c.depths) depth_list += (depth_list.empty() ? "" : ",") + number_text(d);
  // The generated tasks (passkey, the needles, RULER's word tasks): documents of each needle
  // length, measured with the study's tokenizer.
  for (const std::string& task : synthetic_benchmarks()) {
    if (!benchmark(task)) continue;
    const std::string command = task.rfind("needle", 0) == 0 ? "needle" : task;
    StudyStep step{"data/" + task,
                   {"data", command, "--tokenizer", tokenizer, "--out", "@OUT@", "--lengths",
                    join(c.needle_lengths), "--queries", std::to_string(c.queries), "--documents",
                    std::to_string(c.documents), "--seed", seed},
                   {},
                   {"@OUT@"},
                   "",
                   tokenizer_dep};
    if (task != "fwe") step.args.insert(step.args.end(), {"--depths", depth_list});
    if (command == "needle") {
      // The haystack: natural text of the first source.
      const int64_t keys =
          task == "needle-multiquery" ? std::max(c.needle_keys, c.needle_queries) : c.needle_keys;
      step.args.insert(step.args.end(),
                       {"--haystack", folders.front(), "--keys", std::to_string(keys)});
      step.deps = with(step.deps, source_dep[c.sources.front().name]);
    }
    if (task == "needle-multivalue")
      step.args.insert(step.args.end(), {"--values", std::to_string(c.needle_values)});
    if (task == "needle-multiquery")
      step.args.insert(step.args.end(),
                       {"--queries-per-document", std::to_string(c.needle_queries)});
    // The dataset's name in the store, where it is not the command's.
    if (task != command) step.args.insert(step.args.end(), {"--name", task});
    add(step);
  }

  auto quoted = [](const std::string& text) {  // a TOML basic string
    std::string q = "\"";
    for (char ch : text) q += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
    return q + "\"";
  };
  auto schedule = [&](int64_t steps_cap, int64_t epochs) {
    return "epochs = " + std::to_string(epochs) + "\n" +
           (steps_cap > 0 ? "max_steps = " + std::to_string(steps_cap) + "\n" : std::string());
  };
  auto quoted_list = [&](const std::vector<std::string>& items) {
    std::string list = "[";
    for (const std::string& item : items) list += (list.size() > 1 ? ", " : "") + quoted(item);
    return list + "]";
  };
  const std::string output = "db = " + quoted(c.db) + "\nexperiment = " + quoted(experiment) + "\n";
  // [train] device of the training configs; absent on the CPU, so a CPU study's steps (and
  // their keys) are what they were.
  const std::string device_line = c.device == "cpu" ? "" : "device = " + quoted(c.device) + "\n";
  // The start of fine-tuning: the model folder of [model] init, else a model initialized here
  // and MLM-pretrained on every source.
  std::string start = c.init;
  std::vector<std::string> start_dep;
  if (c.init.empty()) {
    std::vector<std::string> init_args = {"model",       "init",    "--preset",  c.preset,
                                          "--tokenizer", tokenizer, "--out",     "@OUT@",
                                          "--seed",      seed,      "--pooling", "cls"};
    auto shape = [&](const char* flag, int64_t value, int64_t unset) {
      if (value != unset) init_args.insert(init_args.end(), {flag, std::to_string(value)});
    };
    // Written only when not ModernBERT, so that an encoder study's steps keep their keys.
    if (c.architecture != "modernbert")
      init_args.insert(init_args.end(), {"--architecture", c.architecture});
    shape("--hidden-size", c.hidden_size, 0);
    shape("--layers", c.layers, 0);
    shape("--heads", c.heads, 0);
    shape("--intermediate-size", c.intermediate_size, 0);
    shape("--local-window", c.local_window, -1);
    if (c.rope_theta > 0)
      init_args.insert(init_args.end(), {"--rope-theta", number_text(c.rope_theta)});
    if (!c.rope) init_args.push_back("--no-rope");
    shape("--kv-heads", c.kv_heads, 0);
    if (c.bidirectional) init_args.push_back("--bidirectional");
    add({"init", init_args, {}, {"@OUT@/config.json"}, "", tokenizer_dep});
    add({"pretrain",
         {"pretrain", "--config", "@OUT@.toml", "--auto-resume"},
         {{"@OUT@.toml",
           "# written by lmk study (its folder is this step's inputs)\n[model]\ninit = " +
               quoted(out("init")) + "\n[data]\ntrain = " + quoted_list(folders) +
               "\n[train]\nmax_length = " + std::to_string(c.pretrain_length) +
               "\nbatch_size = " + std::to_string(c.pretrain_batch) + "\nlearning_rate = " +
               number_text(c.pretrain_lr) + "\n" + schedule(c.pretrain_steps, c.pretrain_epochs) +
               "seed = " + seed + "\ncheckpoint_every = 100\nlog_every = 10\n" + device_line +
               "[output]\ndir = \"@OUT@\"\n" + output + "run_name = \"@RUN@\"\n"}},
         {"@OUT@/last/config.json"},
         "pretrain",
         with({"init"}, render_deps)});
    start = out("pretrain") + "/last";
    start_dep = {"pretrain"};
  }
  for (const StudyVariant& v : c.variants) {
    std::string train = "[train]\npooling = " + quoted(v.pooling) + "\n";
    if (!v.train_landmarks.empty()) {
      // The layout the saved model encodes with by default: its training's first granularity.
      // (The evaluations below pass theirs; keeping [eval] granularity out of the fine-tuning
      // lets a sweep over it share the fine-tuned models.)
      const std::string first =
          std::to_string(v.first_granularity > 0 ? v.first_granularity : c.granularity);
      train += "train_landmarks = " + quoted(v.train_landmarks) +
               "\neval_landmarks = " + quoted("fixed:" + first) + "\n";
    }
    train += "query_max_length = " + std::to_string(c.query_length) +
             "\npassage_max_length = " + std::to_string(c.passage_length) +
             "\nbatch_size = " + std::to_string(c.finetune_batch) +
             "\nnegatives = " + std::to_string(c.negatives) +
             "\nlearning_rate = " + number_text(c.finetune_lr) +
             "\ntemperature = " + number_text(c.temperature) + "\n" +
             schedule(c.finetune_steps, c.finetune_epochs) + "seed = " + seed +
             "\ncheckpoint_every = 100\nlog_every = 10\n" + device_line;
    // Written only when set, so that a study without them keeps its steps' keys.
    if (c.warmup_ratio > 0) train += "warmup_ratio = " + number_text(c.warmup_ratio) + "\n";
    if (c.recompute_layers) train += "recompute_layers = true\n";
    if (c.lora_rank > 0) {
      train += "[lora]\nrank = " + std::to_string(c.lora_rank) +
               "\nalpha = " + number_text(c.lora_alpha) +
               "\ndropout = " + number_text(c.lora_dropout) +
               "\ntarget_modules = " + quoted_list(c.lora_targets) + "\n";
    }
    const std::string stream = c.stream ? "stream = true\n" : "";
    StudyStep finetune{
        "finetune/" + v.label,
        {"train", "--config", "@OUT@.toml", "--auto-resume"},
        {{"@OUT@.toml",
          "# written by lmk study (its folder is this step's inputs)\n[model]\ninit = " +
              quoted(start) + "\n[data]\ntrain = " + quoted_list(pair_files) + "\n" + stream +
              train + "[output]\ndir = \"@OUT@\"\n" + output + "run_name = \"@RUN@\"\n"}},
        {"@OUT@/last/config.json"},
        "finetune/" + v.label,
        with(start_dep, pair_deps)};
    finetune.inputs = c.train_files;
    add(finetune);
  }
  for (const StudyVariant& v : c.variants) {
    const std::string model = out("finetune/" + v.label) + "/last";
    // Only a pooling whose encoding reads the granularity is chosen on dev among its values.
    const bool reads = reads_granularity(parse_pooling(v.pooling, "pooling"));
    auto eval_step = [&](const std::string& name, const std::string& dataset, int64_t max_length,
                         int64_t attention_docs, const std::string& data_dep,
                         const std::string& split) {
      const std::string suffix = split.empty() ? "" : ":" + split;
      StudyStep step{"eval/" + v.label + "/" + name + suffix,
                     {"eval", "--model", model, "--dataset", dataset, "--pooling", v.pooling,
                      "--db", c.db, "--experiment", experiment, "--run-name", "@RUN@",
                      "--attention-docs", std::to_string(split.empty() ? attention_docs : 0),
                      "--query-max-length", std::to_string(c.query_length)},
                     {},
                     {},
                     v.label + "/" + name + suffix,
                     {"finetune/" + v.label}};
      if (!data_dep.empty()) step.deps.push_back(data_dep);
      if (data_dep.empty()) step.inputs = {dataset};  // a dataset of your own
      if (reads)
        step.args.insert(step.args.end(), {"--granularity", std::to_string(c.granularity)});
      if (max_length > 0)
        step.args.insert(step.args.end(), {"--max-length", std::to_string(max_length)});
      if (!split.empty()) step.args.insert(step.args.end(), {"--split", split});
      if (c.device != "cpu") step.args.insert(step.args.end(), {"--device", c.device});
      add(step);
    };
    // Test, and dev where the granularity is chosen on it.
    std::vector<std::string> splits = {""};
    if (c.select == "dev" && reads) splits.push_back("dev");
    for (const std::string& split : splits) {
      for (const StudySource& source : c.sources) {
        // The source's data step exists only for these benchmarks.
        if (benchmark("passages"))
          eval_step(source.name + "-passages", out("data/" + source.name) + "/passages",
                    c.passage_length, 0, "data/" + source.name, split);
        // Windows are read whole: every target holds its length, no evidence is cut off.
        if (benchmark("documents"))
          eval_step(source.name + "-documents", out("data/" + source.name) + "/documents", 0,
                    c.attention_docs, "data/" + source.name, split);
      }
      if (benchmark("code"))
        eval_step("code", out("data/code"), c.pretrain_length, 0, "data/code", split);
    }
    for (const std::string& task : synthetic_benchmarks()) {
      if (benchmark(task))
        eval_step(task, out("data/" + task), 0, c.attention_docs, "data/" + task, "");
    }
    // Datasets of your own, on their default split.
    for (size_t i = 0; i < c.datasets.size(); ++i)
      eval_step(fs::path(c.datasets[i]).filename().string(), c.datasets[i],
                c.dataset_max_lengths[c.dataset_max_lengths.size() == 1 ? 0 : i], c.attention_docs,
                "", "");
  }
  return steps;
}

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
    for (StudyStep& step : plan_cell(cells[ci], plan.experiment)) {
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
