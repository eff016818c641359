// lmk results, lmk compare, lmk export: read the results store (core/store/results_store.h).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "app/commands.h"
#include "core/store/results_store.h"
#include "core/util/error.h"
#include "core/util/file.h"

namespace lmk::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Shown for a parameter a run does not have, or a result it lacks.
const char* const kAbsent = "-";

// Opens a store for reading: it must exist (a typo must not create an empty file).
ResultsStore open_for_reading(const std::string& db) {
  return ResultsStore(db, ResultsStore::OpenMode::Existing);
}

// "%.4f", or "nan".
std::string format_metric(double value) {
  if (std::isnan(value)) return "nan";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

// "a, b, c", or "none".
template <typename Names>
std::string join(const Names& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

// Display width: code points (UTF-8 continuation bytes take no column).
size_t display_width(const std::string& text) {
  size_t width = 0;
  for (const unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

// Aligned text columns; a cell may be bold (ANSI, only when stdout is a terminal).
class Table {
 public:
  struct Cell {
    std::string text;
    bool bold = false;
  };

  // right_aligned: one flag per column (numbers).
  Table(std::vector<std::string> header, std::vector<bool> right_aligned)
      : right_aligned_(std::move(right_aligned)) {
    std::vector<Cell> cells;
    for (auto& title : header) cells.push_back({std::move(title)});
    rows_.push_back(std::move(cells));
  }

  void add_row(std::vector<Cell> cells) { rows_.push_back(std::move(cells)); }

  // The header, a rule, then the rows; columns two spaces apart.
  std::string render(bool terminal) const {
    std::vector<size_t> widths(rows_[0].size(), 0);
    for (const auto& row : rows_) {
      for (size_t c = 0; c < row.size(); ++c)
        widths[c] = std::max(widths[c], display_width(row[c].text));
    }
    std::string out;
    auto add_line = [&](const std::vector<Cell>& row) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) {
        const std::string padding(widths[c] - display_width(row[c].text), ' ');
        const std::string text =
            terminal && row[c].bold ? "\x1b[1m" + row[c].text + "\x1b[0m" : row[c].text;
        if (c) line += "  ";
        line += right_aligned_[c] ? padding + text : text + padding;
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    };
    add_line(rows_[0]);
    std::vector<Cell> rule;
    for (const size_t width : widths) rule.push_back({std::string(width, '-')});
    add_line(rule);
    for (size_t r = 1; r < rows_.size(); ++r) add_line(rows_[r]);
    return out;
  }

 private:
  std::vector<bool> right_aligned_;
  std::vector<std::vector<Cell>> rows_;
};

// Bold is for a terminal, unless NO_COLOR is set to something (no-color.org).
bool stdout_is_terminal() {
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) != 0 && (no_color == nullptr || *no_color == '\0');
}

// The keys whose values are not the same in every run (a missing key differs from any value).
std::set<std::string> differing_keys(const std::vector<std::map<std::string, std::string>>& runs) {
  std::set<std::string> keys, differing;
  for (const auto& params : runs) {
    for (const auto& entry : params) keys.insert(entry.first);
  }
  for (const auto& key : keys) {
    std::set<std::string> values;
    for (const auto& params : runs) {
      const auto it = params.find(key);
      values.insert(it == params.end() ? std::string("\x01") : it->second);
    }
    if (values.size() > 1) differing.insert(key);
  }
  return differing;
}

std::string value_or_absent(const std::map<std::string, std::string>& params,
                            const std::string& key) {
  const auto it = params.find(key);
  return it == params.end() ? kAbsent : it->second;
}

// ---- lmk results

struct ResultsArgs {
  std::string db, experiment, status, name, metric = "ndcg_at_10";
  std::vector<std::string> where;
};

// "key=value" from --where.
std::pair<std::string, std::string> parse_where(const std::string& text) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos || equals == 0)
    throw input_error("--where", "'" + text + "' is not key=value (e.g. pooling=lmk)");
  return {text.substr(0, equals), text.substr(equals + 1)};
}

int run_results(const ResultsArgs& args) {
  ResultsStore store = open_for_reading(args.db);
  RunFilter filter;
  filter.experiment = args.experiment;
  if (!args.status.empty()) filter.status = parse_run_status(args.status, "--status");
  filter.name_contains = args.name;
  for (const auto& condition : args.where) filter.params.push_back(parse_where(condition));
  if (!args.experiment.empty()) {
    std::vector<std::string> names;
    for (const auto& experiment : store.experiments()) names.push_back(experiment.name);
    if (std::find(names.begin(), names.end(), args.experiment) == names.end()) {
      throw input_error("--experiment", "no experiment '" + args.experiment + "' in " + args.db +
                                            " (experiments: " + join(names) + ")");
    }
  }
  const std::vector<RunRecord> runs = store.list_runs(filter);
  if (runs.empty()) {
    std::cerr << "lmk results: no runs in " << args.db << " match\n";
    return 0;
  }

  // The chosen metric over whole splits, per run and dataset/split.
  std::vector<std::map<std::string, std::string>> params;
  std::vector<std::map<std::string, double>> values;
  std::set<std::string> columns, other_metrics;
  for (const auto& run : runs) {
    params.push_back(store.run_params(run.id));
    values.emplace_back();
    for (const auto& result : store.eval_results(run.id)) {
      if (result.group_kind != "all") continue;
      if (result.metric != args.metric) {
        other_metrics.insert(result.metric);
        continue;
      }
      const std::string column = result.dataset + "/" + result.split;
      values.back()[column] = result.value;
      columns.insert(column);
    }
  }
  if (columns.empty() && !other_metrics.empty()) {
    throw input_error("--metric", "no '" + args.metric + "' results in these runs (they have " +
                                      join(other_metrics) + ")");
  }

  std::set<std::string> experiments;
  for (const auto& run : runs) experiments.insert(run.experiment);
  const bool show_experiment = experiments.size() > 1;
  const std::set<std::string> keys = differing_keys(params);
  std::vector<std::string> header = {"id", "name", "status"};
  if (show_experiment) header.insert(header.begin() + 2, "experiment");
  header.insert(header.end(), keys.begin(), keys.end());
  header.insert(header.end(), columns.begin(), columns.end());
  std::vector<bool> right(header.size(), false);
  right[0] = true;
  std::fill(right.end() - static_cast<std::ptrdiff_t>(columns.size()), right.end(), true);
  Table table(header, right);
  for (size_t r = 0; r < runs.size(); ++r) {
    std::vector<Table::Cell> row = {
        {std::to_string(runs[r].id)}, {runs[r].name}, {run_status_name(runs[r].status)}};
    if (show_experiment) row.insert(row.begin() + 2, {runs[r].experiment});
    for (const auto& key : keys) row.push_back({value_or_absent(params[r], key)});
    for (const auto& column : columns) {
      const auto it = values[r].find(column);
      row.push_back({it == values[r].end() ? kAbsent : format_metric(it->second)});
    }
    table.add_row(std::move(row));
  }
  std::cout << table.render(stdout_is_terminal());
  if (!columns.empty()) std::cout << "(" << args.metric << ", whole split)\n";
  return 0;
}

// ---- lmk compare

struct CompareArgs {
  std::string db;
  std::vector<int64_t> runs;
  bool all = false;
};

// An eval result's identity across runs: dataset, split, metric, group kind, group value.
using ResultKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;

int run_compare(const CompareArgs& args) {
  if (args.runs.size() < 2) throw input_error("compare", "give at least two run ids");
  ResultsStore store = open_for_reading(args.db);
  std::vector<RunRecord> runs;
  std::vector<std::map<std::string, std::string>> params;
  std::vector<std::map<ResultKey, double>> results(args.runs.size());
  std::set<ResultKey> result_keys;
  for (size_t r = 0; r < args.runs.size(); ++r) {
    runs.push_back(store.get_run(args.runs[r]));
    params.push_back(store.run_params(args.runs[r]));
    for (const auto& e : store.eval_results(args.runs[r])) {
      const ResultKey key{e.dataset, e.split, e.metric, e.group_kind, e.group_value};
      results[r][key] = e.value;
      result_keys.insert(key);
    }
  }
  const bool terminal = stdout_is_terminal();

  std::vector<std::string> header = {"", ""};
  for (const auto& run : runs) header.push_back("run " + std::to_string(run.id));
  Table overview(header, std::vector<bool>(header.size(), false));
  auto add_field = [&](const char* field, const std::function<std::string(const RunRecord&)>& of) {
    std::vector<Table::Cell> row = {{""}, {field}};
    for (const auto& run : runs) row.push_back({of(run)});
    overview.add_row(std::move(row));
  };
  add_field("name", [](const RunRecord& run) { return run.name; });
  add_field("experiment", [](const RunRecord& run) { return run.experiment; });
  add_field("kind", [](const RunRecord& run) { return run.kind; });
  add_field("status", [](const RunRecord& run) { return run_status_name(run.status); });
  add_field("created", [](const RunRecord& run) { return run.created_at; });

  // Config: the differing parameters (marked *), with --all the equal ones too.
  const std::set<std::string> differing = differing_keys(params);
  std::set<std::string> keys = differing;
  if (args.all) {
    for (const auto& run_params : params) {
      for (const auto& entry : run_params) keys.insert(entry.first);
    }
  }
  for (const auto& key : keys) {
    const bool differs = differing.count(key) > 0;
    std::vector<Table::Cell> row = {{differs ? "*" : "", differs}, {key, differs}};
    for (const auto& run_params : params)
      row.push_back({value_or_absent(run_params, key), differs});
    overview.add_row(std::move(row));
  }
  std::cout << overview.render(terminal);
  if (differing.empty()) std::cout << "(configs are identical)\n";

  if (result_keys.empty()) {
    std::cout << "\nno evaluation results\n";
    return 0;
  }
  // Metrics: each run's value and its change from the first run.
  std::vector<std::string> metric_header = {"", "dataset/split", "metric", "group"};
  for (const auto& run : runs) metric_header.push_back("run " + std::to_string(run.id));
  std::vector<bool> right(metric_header.size(), true);
  std::fill(right.begin(), right.begin() + 4, false);
  Table metrics(metric_header, right);
  for (const auto& key : result_keys) {
    const auto& [dataset, split, metric, group_kind, group_value] = key;
    const auto first = results[0].find(key);
    std::vector<Table::Cell> row = {
        {""},
        {dataset + "/" + split},
        {metric},
        {group_kind == "all" ? group_kind : group_kind + "=" + group_value}};
    bool any_change = false;
    for (size_t r = 0; r < runs.size(); ++r) {
      const auto it = results[r].find(key);
      if (it == results[r].end()) {
        row.push_back({kAbsent});
        any_change = true;
        continue;
      }
      std::string text = format_metric(it->second);
      bool changed = false;
      if (r > 0 && first != results[0].end()) {
        const double delta = it->second - first->second;
        char delta_text[32];
        std::snprintf(delta_text, sizeof delta_text, " (%+.4f)", delta);
        text += delta_text;
        changed = std::isnan(delta) || std::fabs(delta) >= 5e-5;
      }
      any_change = any_change || changed;
      row.push_back({text, changed});
    }
    if (any_change) row[0] = {"*", true};
    metrics.add_row(std::move(row));
  }
  std::cout << "\n"
            << metrics.render(terminal) << "(delta: change from run " << runs[0].id << ")\n";
  return 0;
}

// ---- lmk export

struct ExportArgs {
  std::string db, format, out, experiment;
  std::vector<int64_t> runs;
};

// A CSV field, quoted when it holds a comma, quote or line break (RFC 4180).
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// Shortest text that reads back as the same double; "nan" for NaN.
std::string exact_number(double value) {
  return std::isnan(value) ? "nan" : json(value).dump();
}

// A file or folder name made of the text: characters other than letters, digits and ._-=+,
// become '_'.
std::string safe_file_name(const std::string& text) {
  std::string name;
  for (const unsigned char c : text)
    name += std::isalnum(c) || std::string("._-=+,").find(static_cast<char>(c)) != std::string::npos
                ? static_cast<char>(c)
                : '_';
  if (name.empty() || name.find_first_not_of('.') == std::string::npos) name = "_" + name;
  return name;
}

void write_file(const std::string& path, const std::string& text) {
  AtomicFile file(path);
  file.write(text);
  file.commit();
}

std::string export_csv(ResultsStore& store, const std::vector<RunRecord>& runs, size_t& rows) {
  std::vector<std::map<std::string, std::string>> params;
  std::set<std::string> keys;
  for (const auto& run : runs) {
    params.push_back(store.run_params(run.id));
    for (const auto& entry : params.back()) keys.insert(entry.first);
  }
  std::string csv = "run_id,run_name,experiment,kind,status";
  for (const auto& key : keys) csv += "," + csv_field("params." + key);
  csv += ",dataset,split,metric,group_kind,group_value,value\n";
  for (size_t r = 0; r < runs.size(); ++r) {
    std::string prefix = std::to_string(runs[r].id) + "," + csv_field(runs[r].name) + "," +
                         csv_field(runs[r].experiment) + "," + csv_field(runs[r].kind) + "," +
                         run_status_name(runs[r].status);
    for (const auto& key : keys) {
      const auto it = params[r].find(key);
      prefix += "," + (it == params[r].end() ? std::string() : csv_field(it->second));
    }
    for (const auto& e : store.eval_results(runs[r].id)) {
      csv += prefix + "," + csv_field(e.dataset) + "," + csv_field(e.split) + "," +
             csv_field(e.metric) + "," + csv_field(e.group_kind) + "," + csv_field(e.group_value) +
             "," + exact_number(e.value) + "\n";
      ++rows;
    }
  }
  return csv;
}

// One MTEB v2 result per (run, dataset): OUT/<run name>/<dataset>.json with the whole-split
// metrics; returns how many files were written.
size_t export_mteb(ResultsStore& store, const std::vector<RunRecord>& runs,
                   const std::string& out) {
  std::map<std::string, int> name_uses;
  for (const auto& run : runs) ++name_uses[safe_file_name(run.name)];
  size_t files = 0;
  for (const auto& run : runs) {
    // dataset -> split -> metric -> value
    std::map<std::string, std::map<std::string, std::map<std::string, double>>> scores;
    for (const auto& e : store.eval_results(run.id)) {
      if (e.group_kind == "all") scores[e.dataset][e.split][e.metric] = e.value;
    }
    if (scores.empty()) continue;
    json evaluation_time = nullptr;
    for (const auto& metric : store.latest_metrics(run.id)) {
      if (metric.key == "evaluation_time") evaluation_time = metric.value;
    }
    const std::map<std::string, std::string> params = store.run_params(run.id);
    const auto revision = params.find("dataset_revision");
    std::string folder = safe_file_name(run.name);
    if (name_uses[folder] > 1) folder += "-" + std::to_string(run.id);
    fs::create_directories(fs::path(out) / folder);
    for (const auto& [dataset, splits] : scores) {
      json result_scores = json::object();
      json dataset_time = evaluation_time;
      for (const auto& [split, metrics] : splits) {
        json entry = {{"hf_subset", "default"}, {"languages", {"eng-Latn"}}};
        for (const auto& [metric, value] : metrics) {
          if (metric == "evaluation_time")
            dataset_time = value;
          else
            entry[metric] = value;
        }
        if (!entry.contains("main_score"))
          entry["main_score"] =
              metrics.count("ndcg_at_10") ? json(metrics.at("ndcg_at_10")) : json();
        result_scores[split] = json::array({entry});
      }
      const json result = {
          {"dataset_revision", revision == params.end() ? json() : json(revision->second)},
          {"task_name", dataset},
          {"mteb_version", "2.0.0"},
          {"scores", result_scores},
          {"evaluation_time", dataset_time},
          {"kg_co2_emissions", nullptr}};
      write_file((fs::path(out) / folder / (safe_file_name(dataset) + ".json")).string(),
                 result.dump(2) + "\n");
      ++files;
    }
  }
  return files;
}

int run_export(const ExportArgs& args) {
  ResultsStore store = open_for_reading(args.db);
  std::vector<RunRecord> runs;
  if (args.runs.empty()) {
    RunFilter filter;
    filter.experiment = args.experiment;
    runs = store.list_runs(filter);
  } else {
    for (const int64_t id : args.runs) runs.push_back(store.get_run(id));
  }
  if (args.format == "csv") {
    size_t rows = 0;
    const std::string csv = export_csv(store, runs, rows);
    if (args.out == "-") {
      std::cout << csv;
    } else {
      write_file(args.out, csv);
      std::cerr << "lmk export: " << rows << " results of " << runs.size() << " runs written to "
                << args.out << "\n";
    }
  } else {
    if (args.out == "-") throw input_error("--out", "mteb export needs a folder");
    const size_t files = export_mteb(store, runs, args.out);
    std::cerr << "lmk export: " << files << " MTEB result files written under " << args.out << "\n";
  }
  return 0;
}

}  // namespace

Runner add_results_command(CLI::App& app) {
  auto args = std::make_shared<ResultsArgs>();
  auto* cmd = app.add_subcommand(
      "results", "Table of runs and one metric per dataset/split, from a results database");
  cmd->add_option("--db", args->db, "results database (SQLite)")->required();
  cmd->add_option("--experiment", args->experiment, "only this experiment's runs");
  cmd->add_option("--status", args->status, "SCHEDULED | RUNNING | FINISHED | FAILED | KILLED");
  cmd->add_option("--where", args->where, "key=value: only runs with this parameter (repeatable)");
  cmd->add_option("--name", args->name, "only runs whose name contains this");
  cmd->add_option("--metric", args->metric, "metric to show")->capture_default_str();
  return [args] { return run_results(*args); };
}

Runner add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Config differences and metric deltas of runs (vs the first) in a results database");
  cmd->add_option("--db", args->db, "results database (SQLite)")->required();
  cmd->add_option("RUN", args->runs, "run ids (two or more)")->required();
  cmd->add_flag("--all", args->all, "show the parameters that are equal too");
  return [args] { return run_compare(*args); };
}

Runner add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export", "Evaluation results as CSV (one row per result) or MTEB v2 JSON files");
  cmd->add_option("--db", args->db, "results database (SQLite)")->required();
  cmd->add_option("--format", args->format, "csv | mteb")
      ->required()
      ->check(CLI::IsMember({"csv", "mteb"}));
  cmd->add_option("--run", args->runs, "run id (repeatable; default: every run)");
  cmd->add_option("--experiment", args->experiment, "without --run: only this experiment's runs");
  cmd->add_option("--out", args->out, "CSV file ('-': stdout), or the MTEB folder")->required();
  return [args] { return run_export(*args); };
}

}  // namespace lmk::cli
