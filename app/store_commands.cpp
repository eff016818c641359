// lmk results and lmk export, and what they share with lmk compare (app/store_access.h): read
// the results store (core/store/results_store.h).
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
#include "app/store_access.h"
#include "core/eval/comparison_report.h"
#include "core/eval/pivot.h"
#include "core/eval/store_comparison.h"
#include "core/store/export.h"
#include "core/store/results_store.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/text_table.h"

namespace lmk::cli {

ResultsStore open_for_reading(const std::string& db) {
  ResultsStore store(db, ResultsStore::OpenMode::Existing);
  // A run whose process died without recording how is shown as what it is (FAILED, saying so),
  // not RUNNING for ever. A store this process cannot write is still read.
  try {
    store.end_lost_runs();
  } catch (const std::exception&) {
  }
  return store;
}

bool stdout_is_terminal() {
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) != 0 && (no_color == nullptr || *no_color == '\0');
}

std::string value_or_absent(const std::map<std::string, std::string>& params,
                            const std::string& key) {
  const auto it = params.find(key);
  return it == params.end() ? kAbsent : it->second;
}

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- lmk results

struct ResultsArgs {
  std::string db, experiment, status, name, metric = "ndcg_at_10";
  std::vector<std::string> where;
};

// The --where terms as one selection in the filter language the workbench's filter bar reads
// (core/store/run_selection.h): each a `key<op>value` term, AND-ed.
RunSelection where_selection(const std::vector<std::string>& terms) {
  RunSelection selection;
  for (const std::string& term : terms) {
    const size_t op = term.find_first_of("=<>!");
    if (op == std::string::npos || op == 0)
      throw input_error("--where", "'" + term +
                                       "' is not key=value, key!=value or key<op>number (e.g. "
                                       "pooling=lmk, max_length>=1024)");
    if (term.find('"') != std::string::npos)
      throw input_error("--where", "'" + term + "': no double quotes in a term");
    selection.text += (selection.text.empty() ? "\"" : " \"") + term + "\"";
  }
  const SqlCondition condition = run_selection_condition(selection);
  if (!condition.error.empty()) throw input_error("--where", condition.error);
  return selection;
}

int run_results(const ResultsArgs& args) {
  ResultsStore store = open_for_reading(args.db);
  RunFilter filter;
  filter.experiment = args.experiment;
  if (!args.status.empty()) filter.status = parse_run_status(args.status, "--status");
  filter.name_contains = args.name;
  const std::vector<int64_t> selected = store.selected_runs(where_selection(args.where));
  const std::set<int64_t> where(selected.begin(), selected.end());
  if (!args.experiment.empty()) {
    std::vector<std::string> names;
    for (const auto& experiment : store.experiments()) names.push_back(experiment.name);
    if (std::find(names.begin(), names.end(), args.experiment) == names.end()) {
      throw input_error("--experiment", "no experiment '" + args.experiment + "' in " + args.db +
                                            " (experiments: " + join(names) + ")");
    }
  }
  std::vector<RunRecord> runs;
  for (RunRecord& run : store.list_runs(filter))
    if (where.count(run.id)) runs.push_back(std::move(run));
  if (runs.empty()) {
    std::cerr << "lmk results: no runs in " << args.db << " match\n";
    return 0;
  }

  // The chosen metric over whole splits, per run and dataset/split: a run's score on a dataset,
  // the mean over all its queries pooled over its parts, with N and its interval where the
  // per-query results are stored (the same cells as lmk compare's).
  std::vector<std::map<std::string, std::string>> params;
  std::vector<std::map<std::string, std::string>> values;
  bool any_interval = false;
  const stats::ResamplingOptions resampling;
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
      const std::vector<QueryScore> scores =
          store.query_scores(run.id, result.dataset, result.split, result.metric);
      std::string cell = format_metric(result.value);
      if (!scores.empty()) {
        const CellSummary summary = summarize_scores(scores, resampling);
        char text[64];
        std::snprintf(text, sizeof text, "%.4f ± %.4f (N %zu)", summary.mean,
                      summary.interval.half_width(), summary.n);
        cell = text;
        any_interval = true;
      }
      values.back()[column] = cell;
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
  TextTable table(header, right);
  for (size_t r = 0; r < runs.size(); ++r) {
    std::vector<TextTable::Cell> row = {
        {std::to_string(runs[r].id)}, {runs[r].name}, {run_status_name(runs[r].status)}};
    if (show_experiment) row.insert(row.begin() + 2, {runs[r].experiment});
    for (const auto& key : keys) row.push_back({value_or_absent(params[r], key)});
    for (const auto& column : columns) {
      const auto it = values[r].find(column);
      row.push_back({it == values[r].end() ? kAbsent : it->second});
    }
    table.add_row(std::move(row));
  }
  std::cout << table.render(stdout_is_terminal());
  if (!columns.empty()) {
    std::cout << "(" << args.metric
              << " on each dataset: the mean over all its queries, pooled over its parts";
    if (any_interval)
      std::cout << ", ± half the width of its 95 % percentile bootstrap interval ("
                << resampling.resamples << " resamples of the queries), N queries";
    std::cout << "; lmk compare gives paired tests, --group length the parts)\n";
  }
  return 0;
}

// ---- lmk export

struct ExportArgs {
  std::string db, format, out, experiment;
  std::vector<int64_t> runs;
  // --format latex
  std::string metric = "ndcg_at_10", rows = "pooling-granularity", baseline, test = "fisher";
  double alpha = 0.05;
  int64_t resamples = 10000;
  uint64_t seed = 0;
};

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

// Each run's saved ranking (lmk eval --save-run) and judgments in TREC form: one run to a file
// (its judgments beside it as FILE.qrels; '-': the ranking on stdout), several to a folder
// (NAME.trec and NAME.trec.qrels per run). A run named by --run (`named`) must have a saved
// ranking; of all runs, those without are left out. Returns how many runs were written.
size_t export_trec(ResultsStore& store, const std::vector<RunRecord>& runs, bool named,
                   const std::string& out) {
  struct Saved {
    const RunRecord* run;
    std::string ranking, judgments;
  };
  std::vector<Saved> saved;
  for (const RunRecord& run : runs) {
    Saved s{&run, "", ""};
    for (const Artifact& artifact : store.artifacts(run.id)) {
      if (artifact.kind == "trec-run") s.ranking = artifact.path;
      if (artifact.kind == "trec-qrels") s.judgments = artifact.path;
    }
    if (s.ranking.empty()) {
      if (named) {
        throw input_error("run " + std::to_string(run.id),
                          "no saved ranking (" + run.name +
                              "): evaluate it with lmk eval --save-run FILE to export it as TREC");
      }
      continue;
    }
    saved.push_back(s);
  }
  if (saved.empty())
    throw InputError("lmk export: none of these runs has a saved ranking (lmk eval --save-run)");
  auto copy = [](const std::string& from, const std::string& to) {
    if (to == "-") {
      std::cout << read_file(from);
    } else {
      write_file(to, read_file(from));
    }
  };
  if (saved.size() == 1 && !fs::is_directory(out)) {
    copy(saved[0].ranking, out);
    if (out != "-" && !saved[0].judgments.empty()) copy(saved[0].judgments, out + ".qrels");
    return 1;
  }
  if (out == "-") throw input_error("--out", "several runs' rankings need a folder");
  fs::create_directories(out);
  std::map<std::string, int> name_uses;
  for (const Saved& s : saved) ++name_uses[safe_file_name(s.run->name)];
  for (const Saved& s : saved) {
    std::string name = safe_file_name(s.run->name);
    if (name_uses[name] > 1) name += "-" + std::to_string(s.run->id);
    const std::string file = (fs::path(out) / (name + ".trec")).string();
    copy(s.ranking, file);
    if (!s.judgments.empty()) copy(s.judgments, file + ".qrels");
  }
  return saved.size();
}

// The paper-layout pivot (core/eval/pivot.h) of the runs' eval results as a LaTeX table: rows ×
// benchmark columns of one metric, mean ± CI, significance marks, the significant best bold.
std::string export_latex(ResultsStore& store, const std::vector<RunRecord>& runs,
                         const ExportArgs& args) {
  const PivotRows rows = args.rows == "variant"   ? PivotRows::Variant
                         : args.rows == "pooling" ? PivotRows::Pooling
                                                  : PivotRows::PoolingGranularity;
  std::vector<int64_t> ids;
  for (const RunRecord& run : runs) ids.push_back(run.id);
  std::vector<PivotInput> inputs =
      ids.empty() ? std::vector<PivotInput>() : pivot_inputs(store, args.metric, {}, ids);
  if (inputs.empty()) {
    std::set<std::string> metrics;
    for (const RunRecord& run : runs)
      for (const EvalResult& e : store.eval_results(run.id)) metrics.insert(e.metric);
    throw input_error("--metric", "no '" + args.metric + "' results in these runs (they have " +
                                      join(metrics) + ")");
  }
  const Pivot pivot = build_pivot(inputs, rows);
  ComparisonOptions options;
  options.test = stats::parse_paired_test(args.test, "--test");
  options.alpha = args.alpha;
  options.resampling.resamples = args.resamples;
  options.resampling.seed = args.seed;
  options.refuse_unpaired = false;
  options.all_pairs = true;  // the significant best is bold, with or without a baseline
  if (!args.baseline.empty()) {
    const auto at = std::find(pivot.rows.begin(), pivot.rows.end(), args.baseline);
    if (at == pivot.rows.end())
      throw input_error("--baseline",
                        "no row '" + args.baseline + "' (rows: " + join(pivot.rows) + ")");
    options.baseline = static_cast<size_t>(at - pivot.rows.begin());
  }
  const ComparisonTable table = compare_pivot(
      pivot,
      [&](int64_t run, const std::string& dataset,
          const std::string& split) -> std::optional<std::vector<QueryScore>> {
        std::vector<QueryScore> scores = store.query_scores(run, dataset, split, args.metric);
        if (scores.empty()) return std::nullopt;
        return scores;
      },
      options);
  ReportOptions report;
  report.format = ReportFormat::Latex;
  report.row_header = pivot.row_header;
  report.title = args.metric;
  return render_comparison(table, report);
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
  } else if (args.format == "trec") {
    const size_t written = export_trec(store, runs, !args.runs.empty(), args.out);
    if (args.out != "-")
      std::cerr << "lmk export: the rankings of " << written << " run" << (written == 1 ? "" : "s")
                << " (TREC run files, judgments in .qrels beside them) written to " << args.out
                << "\n";
  } else if (args.format == "latex") {
    const std::string latex = export_latex(store, runs, args);
    if (args.out == "-") {
      std::cout << latex;
    } else {
      write_file(args.out, latex);
      std::cerr << "lmk export: the " << args.metric << " pivot of " << runs.size()
                << " runs written to " << args.out << " (LaTeX, booktabs)\n";
    }
  } else {
    if (args.out == "-") throw input_error("--out", "mteb export needs a folder");
    const size_t files = export_mteb(store, runs, args.out).size();
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
  cmd->add_option("--where", args->where,
                  "key=value, key!=value or key<op>number (< <= > >=; * matches any characters): "
                  "only runs whose parameter or own field (id, name, kind, status, experiment) "
                  "matches (repeatable; the workbench's filter language)");
  cmd->add_option("--name", args->name, "only runs whose name contains this");
  cmd->add_option("--metric", args->metric, "metric to show")->capture_default_str();
  return [args] { return run_results(*args); };
}

Runner add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export",
      "Evaluation results as CSV (one row per result), MTEB v2 JSON files, TREC run files (the "
      "rankings lmk eval --save-run kept) or the paper's table in LaTeX (with intervals and "
      "significance marks)");
  cmd->add_option("--db", args->db, "results database (SQLite)")->required();
  cmd->add_option("--format", args->format, "csv | mteb | trec | latex")
      ->required()
      ->check(CLI::IsMember({"csv", "mteb", "trec", "latex"}));
  cmd->add_option("--run", args->runs, "run id (repeatable; default: every run)")
      ->check(whole(1, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--experiment", args->experiment, "without --run: only this experiment's runs");
  cmd->add_option("--out", args->out,
                  "CSV / LaTeX / TREC file ('-': stdout), the MTEB folder, or a folder for several "
                  "runs' TREC files")
      ->required();
  cmd->add_option("--metric", args->metric, "latex: the metric of the table")
      ->capture_default_str();
  cmd->add_option("--rows", args->rows, "latex: variant | pooling-granularity | pooling")
      ->check(CLI::IsMember({"variant", "pooling-granularity", "pooling"}))
      ->capture_default_str();
  cmd->add_option("--baseline", args->baseline,
                  "latex: a row label (e.g. cls) to mark rows significantly above / below");
  cmd->add_option("--test", args->test, "latex: fisher | student | bootstrap")
      ->capture_default_str();
  cmd->add_option("--alpha", args->alpha, "latex: family-wise level (Holm–Bonferroni)")
      ->capture_default_str()
      ->check(real(0, 1, true, true));
  cmd->add_option("--resamples", args->resamples, "latex: bootstrap resamples / sign patterns")
      ->capture_default_str()
      ->check(whole(1));
  cmd->add_option("--seed", args->seed, "latex: seed of the resampling")
      ->capture_default_str()
      ->check(seed_range());
  return [args] { return run_export(*args); };
}

}  // namespace lmk::cli
