#include "core/jobs/study.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "core/eval/comparison_report.h"
#include "core/eval/store_comparison.h"
#include "core/store/results_store.h"
#include "core/tokenize/landmark.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/random.h"
#include "core/util/toml_config.h"

namespace lmk {

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kProfiles = {"micro", "quick", "full"};
const std::vector<std::string> kBenchmarks = {"passages", "corpus", "passkey", "needle"};
const std::vector<std::string> kPoolings = {"cls",    "mean", "lmk",         "multicls",
                                            "latent", "last", "mean_every_k"};

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

// "lmk:variable:32,64" -> pooling lmk, landmarks variable:32,64, label lmk-var.
StudyVariant parse_variant(const std::string& text, const std::string& where) {
  StudyVariant v;
  const size_t colon = text.find(':');
  v.pooling = text.substr(0, colon);
  if (std::find(kPoolings.begin(), kPoolings.end(), v.pooling) == kPoolings.end())
    throw input_error(where, "unknown pooling '" + v.pooling + "' in '" + text + "'");
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

// FNV-1a, 64 bits, as 16 hex digits: the identity of a step's inputs.
std::string hash_text(const std::string& text) {
  std::ostringstream out;
  out << std::hex << std::setw(16) << std::setfill('0') << fnv1a64(text);
  return out.str();
}

std::string marker_path(const StudyPlan& plan, const StudyStep& step) {
  return (fs::path(plan.config.dir) / "steps" / (step.key + ".done")).string();
}

// The last non-empty line of a file (progress bars end lines with \r: the last segment).
std::string last_line(const std::string& path) {
  std::string tail = read_file_tail(path, 4096);
  std::replace(tail.begin(), tail.end(), '\r', '\n');
  std::istringstream lines(tail);
  std::string line, last;
  while (std::getline(lines, line))
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  return last;
}

}  // namespace

std::string log_tail(const std::string& path, size_t count) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception&) {
    return "";
  }
  std::replace(text.begin(), text.end(), '\r', '\n');
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  std::string out;
  for (size_t i = lines.size() > count ? lines.size() - count : 0; i < lines.size(); ++i)
    out += "    " + lines[i] + "\n";
  return out;
}

namespace {

std::string format_seconds(double s) {
  std::ostringstream out;
  if (s < 60)
    out << std::fixed << std::setprecision(1) << s << " s";
  else
    out << static_cast<int64_t>(s) / 60 << " min " << static_cast<int64_t>(s) % 60 << " s";
  return out.str();
}

// Runs lmk with args, output to log; returns the exit status (or 128 + signal).
int run_child(const std::string& binary, const std::vector<std::string>& args,
              const std::string& log, const std::string& label, const StudyReport& report,
              double interval_s) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(log + ": cannot write the step's log");
  std::vector<char*> argv;
  std::string program = binary;
  argv.push_back(program.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fd);
    throw InputError("cannot start a process for " + label);
  }
  if (pid == 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    ::execv(program.c_str(), argv.data());
    const std::string message = "cannot run " + program + "\n";
    (void)!::write(2, message.data(), message.size());
    ::_exit(127);
  }
  ::close(fd);
  const auto start = std::chrono::steady_clock::now();
  auto last_report = start;
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw InputError("lost the process of " + label);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_report).count() >= interval_s) {
      last_report = now;
      const std::string line = last_line(log);
      if (!line.empty()) report("  " + label + ": " + line, true);
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

namespace {

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
  toml.text("study", "corpus", c.corpus);
  if (c.corpus != "builtin") {
    c.corpus = fs::absolute(toml.resolve(c.corpus)).lexically_normal().string();
    if (!fs::is_directory(c.corpus, ec))
      throw input_error(toml.where("study", "corpus"),
                        "'" + c.corpus + "' is not a folder (or use \"builtin\")");
  }
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
  toml.integer("finetune", "batch_size", c.finetune_batch, 2);
  toml.integer("finetune", "negatives", c.negatives, 0);
  toml.integer("finetune", "steps", c.finetune_steps, 0);
  toml.integer("finetune", "epochs", c.finetune_epochs, 1);
  toml.integer("finetune", "examples_per_document", c.examples_per_document, 1);
  toml.number("finetune", "learning_rate", c.finetune_lr, 1e-12, 10);
  toml.number("finetune", "temperature", c.temperature, 1e-4, 100);

  toml.texts("eval", "benchmarks", c.benchmarks);
  for (const std::string& b : c.benchmarks) {
    if (std::find(kBenchmarks.begin(), kBenchmarks.end(), b) == kBenchmarks.end())
      throw input_error(toml.where("eval", "benchmarks"),
                        "unknown benchmark '" + b + "' (passages, corpus, passkey, needle)");
  }
  c.lengths = {c.pretrain_length, 4 * c.pretrain_length, 16 * c.pretrain_length};
  toml.integers("eval", "lengths", c.lengths, 16);
  std::sort(c.lengths.begin(), c.lengths.end());
  c.lengths.erase(std::unique(c.lengths.begin(), c.lengths.end()), c.lengths.end());
  toml.integer("eval", "granularity", c.granularity, 1);
  toml.integer("eval", "queries", c.queries, 1);
  toml.integer("eval", "documents", c.documents, 1);
  toml.integer("eval", "attention_docs", c.attention_docs, 0);
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
        "rope_theta"}},
      {"pretrain", {"max_length", "batch_size", "steps", "epochs", "learning_rate"}},
      {"finetune",
       {"poolings", "query_max_length", "passage_max_length", "batch_size", "negatives", "steps",
        "epochs", "examples_per_document", "learning_rate", "temperature"}},
      {"eval", {"benchmarks", "lengths", "granularity", "queries", "documents", "attention_docs"}},
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

namespace {

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

  std::string corpus = c.corpus;
  std::vector<std::string> corpus_dep;
  if (c.corpus == "builtin") {
    add({"corpus",
         {"data", "manpages", "--out", "@OUT@", "--limit", std::to_string(c.corpus_limit)},
         {},
         {"@OUT@"},
         "",
         {}});
    corpus = out("corpus");
    corpus_dep = {"corpus"};
  }
  add({"tokenizer",
       {"tokenizer-train", "--input", corpus, "--vocab-size", std::to_string(c.vocab_size), "--out",
        "@OUT@/tokenizer.model"},
       {},
       {"@OUT@/tokenizer.model"},
       "",
       corpus_dep});
  const std::string tokenizer = out("tokenizer") + "/tokenizer.model";
  // The datasets are corpus-documents and corpus-passages, as their length histograms (stats/)
  // are: not named after the source folder, which for the built-in corpus is a step key.
  add({"data/corpus",
       {"data", "corpus", "--source", corpus, "--out", "@OUT@", "--seed", seed, "--name", "corpus"},
       {},
       {"@OUT@/documents/dataset.json", "@OUT@/passages/dataset.json"},
       "",
       corpus_dep});
  const std::string data = out("data/corpus");
  add({"data/pairs",
       {"data", "pairs", "--source", corpus, "--out", "@OUT@/pairs.jsonl", "--seed", seed,
        "--negatives", std::to_string(c.negatives), "--examples-per-document",
        std::to_string(c.examples_per_document)},
       {},
       {"@OUT@/pairs.jsonl"},
       "",
       corpus_dep});
  const std::string pairs = out("data/pairs") + "/pairs.jsonl";
  auto benchmark = [&](const std::string& b) {
    return std::find(c.benchmarks.begin(), c.benchmarks.end(), b) != c.benchmarks.end();
  };
  for (const std::string task : {"passkey", "needle"}) {
    if (!benchmark(task)) continue;
    StudyStep step{"data/" + task,
                   {"data", task, "--tokenizer", tokenizer, "--out", "@OUT@", "--lengths",
                    join(c.lengths), "--queries", std::to_string(c.queries), "--documents",
                    std::to_string(c.documents), "--seed", seed},
                   {},
                   {"@OUT@"},
                   "",
                   {"tokenizer"}};
    if (std::string(task) == "needle") {
      step.args.insert(step.args.end(), {"--haystack", corpus});
      step.deps.insert(step.deps.end(), corpus_dep.begin(), corpus_dep.end());
    }
    add(step);
  }
  // Length histograms of what the models read (paper, Figure 2).
  for (const std::string part : {"documents", "passages"}) {
    StudyStep step{"stats/" + part,
                   {"data", "stats", data + "/" + part, "--tokenizer", tokenizer, "--db", c.db,
                    "--name", "corpus-" + part},
                   {},
                   {},
                   "",
                   {"tokenizer", "data/corpus"}};
    step.store_histogram = "corpus-" + part;
    add(step);
  }

  std::vector<std::string> init_args = {"model",       "init",    "--preset",  c.preset,
                                        "--tokenizer", tokenizer, "--out",     "@OUT@",
                                        "--seed",      seed,      "--pooling", "cls"};
  auto shape = [&](const char* flag, int64_t value, int64_t unset) {
    if (value != unset) init_args.insert(init_args.end(), {flag, std::to_string(value)});
  };
  shape("--hidden-size", c.hidden_size, 0);
  shape("--layers", c.layers, 0);
  shape("--heads", c.heads, 0);
  shape("--intermediate-size", c.intermediate_size, 0);
  shape("--local-window", c.local_window, -1);
  if (c.rope_theta > 0)
    init_args.insert(init_args.end(), {"--rope-theta", number_text(c.rope_theta)});
  add({"init", init_args, {}, {"@OUT@/config.json"}, "", {"tokenizer"}});

  auto quoted = [](const std::string& s) {
    std::string out = "\"";
    for (char ch : s) out += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
    return out + "\"";
  };
  auto schedule = [&](int64_t steps_cap, int64_t epochs) {
    return "epochs = " + std::to_string(epochs) + "\n" +
           (steps_cap > 0 ? "max_steps = " + std::to_string(steps_cap) + "\n" : std::string());
  };
  const std::string output = "db = " + quoted(c.db) + "\nexperiment = " + quoted(experiment) + "\n";
  add({"pretrain",
       {"pretrain", "--config", "@OUT@.toml", "--auto-resume"},
       {{"@OUT@.toml",
         "# written by lmk study (its folder is this step's inputs)\n[model]\ninit = " +
             quoted(out("init")) + "\n[data]\ntrain = " + quoted(corpus) +
             "\n[train]\nmax_length = " + std::to_string(c.pretrain_length) + "\nbatch_size = " +
             std::to_string(c.pretrain_batch) + "\nlearning_rate = " + number_text(c.pretrain_lr) +
             "\n" + schedule(c.pretrain_steps, c.pretrain_epochs) + "seed = " + seed +
             "\ncheckpoint_every = 100\nlog_every = 10\n[output]\ndir = \"@OUT@\"\n" + output +
             "run_name = \"@RUN@\"\n"}},
       {"@OUT@/last/config.json"},
       "pretrain",
       {"init", "tokenizer"}});
  const std::string pretrained = out("pretrain") + "/last";
  for (const StudyVariant& v : c.variants) {
    std::string train = "[train]\npooling = " + quoted(v.pooling) + "\n";
    if (!v.train_landmarks.empty()) {
      // The layout the saved model encodes with by default: its training's first granularity.
      // (The evaluations below pass theirs; keeping [eval] granularity out of the fine-tuning
      // lets a sweep over it share the fine-tuned models.)
      const size_t colon = v.train_landmarks.find(':');
      const std::string first =
          colon == std::string::npos
              ? std::to_string(c.granularity)
              : v.train_landmarks.substr(colon + 1, v.train_landmarks.find(',', colon) - colon - 1);
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
             "\ncheckpoint_every = 100\nlog_every = 10\n";
    add({"finetune/" + v.label,
         {"train", "--config", "@OUT@.toml", "--auto-resume"},
         {{"@OUT@.toml",
           "# written by lmk study (its folder is this step's inputs)\n[model]\ninit = " +
               quoted(pretrained) + "\n[data]\ntrain = " + quoted(pairs) + "\n" + train +
               "[output]\ndir = \"@OUT@\"\n" + output + "run_name = \"@RUN@\"\n"}},
         {"@OUT@/last/config.json"},
         "finetune/" + v.label,
         {"pretrain", "data/pairs"}});
  }
  for (const StudyVariant& v : c.variants) {
    const std::string model = out("finetune/" + v.label) + "/last";
    auto eval_step = [&](const std::string& name, const std::string& dataset, int64_t max_length,
                         int64_t attention_docs, const std::string& data_dep) {
      StudyStep step{
          "eval/" + v.label + "/" + name,
          {"eval", "--model", model, "--dataset", dataset, "--pooling", v.pooling, "--db", c.db,
           "--experiment", experiment, "--run-name", "@RUN@", "--attention-docs",
           std::to_string(attention_docs), "--query-max-length", std::to_string(c.query_length)},
          {},
          {},
          v.label + "/" + name,
          {"finetune/" + v.label, data_dep}};
      if (v.pooling == "lmk")
        step.args.insert(step.args.end(), {"--granularity", std::to_string(c.granularity)});
      if (max_length > 0)
        step.args.insert(step.args.end(), {"--max-length", std::to_string(max_length)});
      add(step);
    };
    if (benchmark("passages"))
      eval_step("passages", data + "/passages", c.passage_length, 0, "data/corpus");
    if (benchmark("corpus")) {
      for (int64_t length : c.lengths)
        eval_step("corpus@" + std::to_string(length), data + "/documents", length, c.attention_docs,
                  "data/corpus");
    }
    for (const std::string task : {"passkey", "needle"}) {
      if (benchmark(task))
        eval_step(task, out("data/" + task), 0, c.attention_docs, "data/" + task);
    }
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

bool step_done(const StudyPlan& plan, const StudyStep& step) {
  std::error_code ec;
  const std::string marker = marker_path(plan, step);
  if (!fs::exists(marker, ec)) return false;
  std::string recorded;
  try {
    recorded = read_file(marker);
  } catch (const std::exception&) {
    return false;
  }
  if (recorded.substr(0, step.key.size()) != step.key) return false;
  for (const std::string& out : step.outputs)
    if (!fs::exists(out, ec)) return false;
  if (step.store_run.empty() && step.store_histogram.empty()) return true;
  // What the step leaves in the store must be there (a deleted or new store file runs it again).
  if (!fs::exists(plan.config.db, ec)) return false;
  const ResultsStore store(plan.config.db, ResultsStore::OpenMode::Existing);
  if (!step.store_histogram.empty() && store.length_histograms(step.store_histogram).empty())
    return false;
  if (!step.store_run.empty()) {
    RunFilter filter;
    filter.experiment = plan.experiment;
    filter.status = RunStatus::Finished;
    bool found = false;
    for (const RunRecord& run : store.list_runs(filter)) found |= run.name == step.store_run;
    if (!found) return false;
  }
  return true;
}

StudyFolderLock::StudyFolderLock(const std::string& dir, double wait_s) {
  fs::create_directories(dir);
  const std::string path = (fs::path(dir) / "study.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw input_error(path, "cannot open the study's lock file");
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(wait_s));
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::close(fd_);
      throw input_error(dir, "another lmk study or lmk submit is running on this folder");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

StudyFolderLock::~StudyFolderLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::string step_log_path(const StudyPlan& plan, const StudyStep& step) {
  std::string name = step.id;
  std::replace(name.begin(), name.end(), '/', '_');
  return (fs::path(plan.config.dir) / "logs" / (name + "-" + step.key.substr(0, 12) + ".log"))
      .string();
}

void mark_step_done(const StudyPlan& plan, const StudyStep& step, double seconds) {
  std::error_code ec;
  for (const std::string& out : step.outputs) {
    if (!fs::exists(out, ec))
      throw InputError("study step " + step.id + " finished without writing " + out);
  }
  fs::create_directories(fs::path(marker_path(plan, step)).parent_path());
  AtomicFile marker(marker_path(plan, step));
  marker.write(step.key + "\n" + step.id + "\n" + std::to_string(seconds) + " s\n");
  marker.commit();
}

void prepare_step(const StudyStep& step, bool fresh) {
  std::error_code ec;
  if (fresh) fs::remove_all(step.dir, ec);
  // Training steps continue from a checkpoint in their folder (--auto-resume): a checkpoint
  // there was written by the same inputs, unless `fresh`. Other steps start over.
  const bool resumes = step.kind == "train" || step.kind == "pretrain";
  for (const std::string& out : step.outputs) {
    if (!resumes && (fs::is_regular_file(out, ec) || fs::is_directory(out, ec)))
      fs::remove_all(out, ec);
    fs::create_directories(fs::path(out).parent_path(), ec);
  }
  for (const auto& [file, content] : step.files) {
    fs::create_directories(fs::path(file).parent_path());
    AtomicFile f(file);
    f.write(content);
    f.commit();
  }
}

StudyRunSummary run_study(const StudyPlan& plan, const std::string& lmk_binary,
                          const StudyReport& report, double interval_s) {
  const auto start = std::chrono::steady_clock::now();
  StudyRunSummary summary;
  fs::create_directories(fs::path(plan.config.dir) / "steps");
  // One study process per folder: a second one would run the same steps into the same files.
  const StudyFolderLock lock(plan.config.dir);
  fs::create_directories(fs::path(plan.config.dir) / "logs");
  std::set<std::string> ran;
  const size_t total = plan.steps.size();
  for (size_t i = 0; i < total; ++i) {
    const StudyStep& step = plan.steps[i];
    const std::string counter = "[" + std::to_string(i + 1) + "/" + std::to_string(total) + "]";
    bool dep_ran = false;
    for (const std::string& dep : step.deps) dep_ran |= ran.count(dep) > 0;
    if (!dep_ran && step_done(plan, step)) {
      ++summary.reused;
      report("study " + counter + " " + step.id + ": done before, reused", false);
      continue;
    }
    std::error_code ec;
    fs::remove(marker_path(plan, step), ec);
    // A training step stopped part-way (killed, Ctrl-C) continues from its last checkpoint, as
    // its folder is its inputs' (DIR/ID/KEY); after a dependency ran again it starts afresh.
    if (!dep_ran && (step.kind == "train" || step.kind == "pretrain")) {
      for (const char* name : {"checkpoint", "checkpoint.new", "checkpoint.old"}) {
        if (fs::exists(fs::path(step.dir) / name / "state.json", ec)) {
          report("study " + counter + " " + step.id + ": continuing from its checkpoint", false);
          break;
        }
      }
    }
    prepare_step(step, dep_ran);
    const std::string log = step_log_path(plan, step);
    report("study " + counter + " " + step.id + " (log: " + log + ")", false);
    const auto step_start = std::chrono::steady_clock::now();
    const int status = run_child(lmk_binary, step.args, log, step.id, report, interval_s);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
    if (status != 0) {
      throw InputError("study step " + step.id + " failed (exit " + std::to_string(status) +
                       "); the end of " + log + ":\n" + log_tail(log, 12));
    }
    mark_step_done(plan, step, seconds);
    ran.insert(step.id);
    ++summary.ran;
    report("study " + counter + " " + step.id + ": done in " + format_seconds(seconds), false);
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

namespace {

std::string cell_table(const StudyCell& cell, const std::map<std::string, int64_t>& latest,
                       const ResultsStore& store) {
  const StudyConfig& c = cell.config;
  // Columns: (header, run name suffix, metric, group kind, group value).
  struct Column {
    std::string header, run, metric, group_kind, group_value;
  };
  std::vector<Column> columns;
  for (const std::string& b : c.benchmarks) {
    if (b == "passages") {
      columns.push_back(
          {"passages@" + std::to_string(c.passage_length), "passages", "ndcg_at_10", "all", ""});
    } else if (b == "corpus") {
      for (int64_t length : c.lengths)
        columns.push_back({"corpus@" + std::to_string(length), "corpus@" + std::to_string(length),
                           "ndcg_at_10", "all", ""});
    } else {
      for (int64_t length : c.lengths)
        columns.push_back(
            {b + "@" + std::to_string(length), b, "ndcg_at_1", "length", std::to_string(length)});
    }
  }
  // Each variant's result per column, with its per-query scores, compared with the CLS row.
  std::vector<std::string> rows, headers;
  std::optional<size_t> cls;
  for (const Column& col : columns) headers.push_back(col.header);
  std::vector<std::vector<ComparisonCell>> cells;
  for (const StudyVariant& v : c.variants) {
    if (v.pooling == "cls" && !cls) cls = rows.size();
    rows.push_back(v.label);
    cells.emplace_back();
    for (const Column& col : columns) {
      const auto name = cell.run_names.find(v.label + "/" + col.run);
      const auto run = name == cell.run_names.end() ? latest.end() : latest.find(name->second);
      ComparisonCell result;
      if (run != latest.end()) {
        const std::vector<EvalResult> results = store.eval_results(run->second);
        for (const EvalResult& r : results) {
          if (r.metric == col.metric && r.group_kind == col.group_kind &&
              r.group_value == col.group_value)
            result = stored_cell(store, run->second, results,
                                 {r.dataset, r.split, r.metric, r.group_kind, r.group_value});
        }
      }
      cells.back().push_back(std::move(result));
    }
  }
  ComparisonOptions options;
  options.baseline = cls;
  options.refuse_unpaired = false;
  ReportOptions report;
  report.row_header = "pooling";
  return render_comparison(compare_table(rows, headers, cells, options), report) +
         "(training length " + std::to_string(c.pretrain_length) +
         " tokens; passages and corpus: nDCG@10, passkey and needle: nDCG@1 per document length; "
         "corpus@L truncates documents to L tokens)\n";
}

}  // namespace

std::string study_table(const StudyPlan& plan, const ResultsStore& store) {
  RunFilter filter;
  filter.experiment = plan.experiment;
  filter.status = RunStatus::Finished;
  filter.kind = "eval";
  std::map<std::string, int64_t> latest;  // run name -> newest finished run
  for (const RunRecord& run : store.list_runs(filter)) latest[run.name] = run.id;
  std::string out;
  for (const StudyCell& cell : plan.cells) {
    if (!cell.config.cell_name.empty())
      out += (out.empty() ? "" : "\n") + cell.config.cell_name + ":\n";
    out += cell_table(cell, latest, store);
  }
  return out;
}

}  // namespace lmk
