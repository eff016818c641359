// lmk compare: runs side by side — their config differences, then a ranx-style table of their
// results with confidence intervals and paired significance tests over the queries
// (core/eval/comparison.h), as text, CSV, LaTeX or Markdown.
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <tuple>

#include "app/commands.h"
#include "app/store_access.h"
#include "core/eval/comparison_report.h"
#include "core/eval/pivot.h"
#include "core/eval/store_comparison.h"
#include "core/util/error.h"
#include "core/util/text_table.h"

namespace lmk::cli {

namespace {

struct CompareArgs {
  std::string db;
  std::vector<int64_t> runs;
  bool all = false;
  int64_t baseline = 0;  // 0: all pairs
  std::vector<std::string> metrics;
  std::vector<std::string> groups = {"all"};
  std::string test = "fisher", format = "text";
  double alpha = 0.05, confidence = 0.95;
  int64_t resamples = 10000;
  uint64_t seed = 0;
  bool bca = false, p_values = false, intersection = false;
  bool test_given = false;
};

// The config of the runs side by side: name, experiment, kind, status, creation time, then the
// differing parameters (marked *), with `all` the equal ones too.
std::string config_overview(const std::vector<RunRecord>& runs,
                            const std::vector<std::map<std::string, std::string>>& params, bool all,
                            bool terminal) {
  std::vector<std::string> header = {"", ""};
  for (const auto& run : runs) header.push_back("run " + std::to_string(run.id));
  TextTable overview(header, std::vector<bool>(header.size(), false));
  auto add_field = [&](const char* field, const std::function<std::string(const RunRecord&)>& of) {
    std::vector<TextTable::Cell> row = {{""}, {field}};
    for (const auto& run : runs) row.push_back({of(run)});
    overview.add_row(std::move(row));
  };
  add_field("name", [](const RunRecord& run) { return run.name; });
  add_field("experiment", [](const RunRecord& run) { return run.experiment; });
  add_field("kind", [](const RunRecord& run) { return run.kind; });
  add_field("status", [](const RunRecord& run) { return run_status_name(run.status); });
  add_field("created", [](const RunRecord& run) { return run.created_at; });
  const std::set<std::string> differing = differing_keys(params);
  std::set<std::string> keys = differing;
  if (all) {
    for (const auto& run_params : params) {
      for (const auto& entry : run_params) keys.insert(entry.first);
    }
  }
  for (const auto& key : keys) {
    const bool differs = differing.count(key) > 0;
    std::vector<TextTable::Cell> row = {{differs ? "*" : "", differs}, {key, differs}};
    for (const auto& run_params : params)
      row.push_back({value_or_absent(run_params, key), differs});
    overview.add_row(std::move(row));
  }
  return overview.render(terminal) + (differing.empty() ? "(configs are identical)\n" : "");
}

// Whether an eval result's group is among those asked for: "all", "length" (the parts of a
// dataset: kinds length / part), "position" (evidence-position buckets over all parts).
bool wanted_group(const EvalResult& result, const std::vector<std::string>& groups) {
  const std::string kind = result.group_kind == "part" ? "length" : result.group_kind;
  return std::find(groups.begin(), groups.end(), kind) != groups.end();
}

// The result columns the runs have for the chosen metrics and groups, dataset by dataset.
std::vector<ResultColumn> result_columns(const CompareArgs& args,
                                         const std::vector<std::vector<EvalResult>>& results) {
  std::set<std::string> metrics_seen;
  std::set<ResultColumn> found;
  for (const auto& run_results : results) {
    for (const EvalResult& e : run_results) {
      if (!wanted_group(e, args.groups)) continue;
      metrics_seen.insert(e.metric);
      found.insert({e.dataset, e.split, e.metric, e.group_kind, e.group_value});
    }
  }
  std::vector<std::string> metrics = args.metrics;
  if (metrics.empty()) {
    if (metrics_seen.count("ndcg_at_10"))
      metrics = {"ndcg_at_10"};
    else if (!metrics_seen.empty())
      metrics = {*metrics_seen.begin()};
  }
  for (const std::string& metric : metrics) {
    if (!metrics_seen.count(metric))
      throw input_error("--metric", "no '" + metric + "' results in these runs (they have " +
                                        join(metrics_seen) + ")");
  }
  std::vector<ResultColumn> columns;
  for (const ResultColumn& column : found) {
    if (std::find(metrics.begin(), metrics.end(), column.metric) != metrics.end())
      columns.push_back(column);
  }
  auto group_rank = [](const std::string& kind) {
    return kind == "all" ? 0 : kind == "position" ? 2 : 1;
  };
  std::stable_sort(columns.begin(), columns.end(),
                   [&](const ResultColumn& a, const ResultColumn& b) {
                     const auto metric_index = [&](const std::string& m) {
                       return std::find(metrics.begin(), metrics.end(), m) - metrics.begin();
                     };
                     if (std::tie(a.dataset, a.split) != std::tie(b.dataset, b.split))
                       return std::tie(a.dataset, a.split) < std::tie(b.dataset, b.split);
                     if (group_rank(a.group_kind) != group_rank(b.group_kind))
                       return group_rank(a.group_kind) < group_rank(b.group_kind);
                     if (a.group_value != b.group_value)
                       return number_aware_less(a.group_value, b.group_value);
                     return metric_index(a.metric) < metric_index(b.metric);
                   });
  return columns;
}

// The comparison the options ask for and the report's format, every option checked first, in
// this order (InputError naming the option otherwise).
struct CompareRequest {
  ComparisonOptions options;
  ReportFormat format = ReportFormat::Text;
};

CompareRequest compare_request(const CompareArgs& args) {
  if (args.runs.size() < 2) throw input_error("compare", "give at least two run ids");
  std::set<int64_t> distinct(args.runs.begin(), args.runs.end());
  if (distinct.size() != args.runs.size()) throw input_error("RUN", "a run id is given twice");
  for (const std::string& group : args.groups) {
    if (group != "all" && group != "length" && group != "position")
      throw input_error("--group", "unknown group '" + group + "' (all, length, position)");
  }
  CompareRequest request;
  request.format = parse_report_format(args.format, "--format");
  ComparisonOptions& options = request.options;
  options.test = stats::parse_paired_test(args.test, "--test");
  options.alpha = args.alpha;
  options.resampling = {args.resamples, args.seed, args.confidence};
  options.bca = args.bca;
  options.intersection = args.intersection;
  if (args.baseline) {
    const auto at = std::find(args.runs.begin(), args.runs.end(), args.baseline);
    if (at == args.runs.end())
      throw input_error("--baseline",
                        "run " + std::to_string(args.baseline) + " is not among the runs compared");
    options.baseline = static_cast<size_t>(at - args.runs.begin());
  }
  return request;
}

// The pairs the table tests must be comparable at all: the same dataset folders, a shared
// result, and (when a test or a baseline is asked for) per-query results. Throws InputError
// saying which runs cannot be compared and why.
void check_comparable(const CompareArgs& args, const ComparisonOptions& options,
                      const ResultsStore& store, const std::vector<RunRecord>& runs,
                      const std::vector<std::map<std::string, std::string>>& params,
                      const std::vector<std::vector<EvalResult>>& results,
                      const std::vector<std::string>& rows,
                      const std::vector<ResultColumn>& columns) {
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t r = 0; r < runs.size(); ++r) {
    if (options.baseline) {
      if (r != *options.baseline) pairs.push_back({r, *options.baseline});
    } else {
      for (size_t other = r + 1; other < runs.size(); ++other) pairs.push_back({r, other});
    }
  }
  auto has_column = [&](size_t r, const ResultColumn& column) {
    return std::any_of(results[r].begin(), results[r].end(),
                       [&](const EvalResult& e) { return in_column(e, column); });
  };
  for (const auto& [r, other] : pairs) {
    if (results[r].empty() || results[other].empty()) continue;  // a row of "-" (failed runs)
    const auto folder = params[r].find("dataset"), other_folder = params[other].find("dataset");
    bool shared = false;
    for (const ResultColumn& column : columns)
      shared |= has_column(r, column) && has_column(other, column);
    if (!shared) {
      auto datasets = [&](size_t i) {
        std::set<std::string> names;
        for (const EvalResult& e : results[i]) names.insert(e.dataset + "/" + e.split);
        return join(names);
      };
      // Shared, but only in groups not asked for (a store from before every dataset had its
      // whole-set score): say which --group pairs them.
      std::set<std::string> other_groups;
      for (const EvalResult& a : results[r])
        for (const EvalResult& b : results[other])
          if (std::tie(a.dataset, a.split, a.metric, a.group_kind, a.group_value) ==
                  std::tie(b.dataset, b.split, b.metric, b.group_kind, b.group_value) &&
              !wanted_group(a, args.groups) && a.group_kind.rfind("position@", 0) != 0)
            other_groups.insert(a.group_kind == "part" ? "length" : a.group_kind);
      if (!other_groups.empty()) {
        throw input_error("compare", "runs " + std::to_string(runs[r].id) + " and " +
                                         std::to_string(runs[other].id) + " share " + datasets(r) +
                                         " only by " + join(other_groups) + ": add --group " +
                                         *other_groups.begin());
      }
      throw input_error("compare", "runs " + std::to_string(runs[r].id) + " and " +
                                       std::to_string(runs[other].id) +
                                       " share no evaluated dataset and metric (" + rows[r] + ": " +
                                       datasets(r) + "; " + rows[other] + ": " + datasets(other) +
                                       ")");
    }
    if (folder != params[r].end() && other_folder != params[other].end() &&
        folder->second != other_folder->second) {
      throw input_error("compare", "runs " + std::to_string(runs[r].id) + " and " +
                                       std::to_string(runs[other].id) +
                                       " evaluated different dataset folders (" + folder->second +
                                       "; " + other_folder->second +
                                       "): their queries cannot be paired");
    }
  }
  if (args.test_given || options.baseline) {
    for (size_t r = 0; r < runs.size(); ++r) {
      if (!results[r].empty() && !store.has_query_results(runs[r].id))
        throw input_error("compare", "run " + std::to_string(runs[r].id) + " (" + runs[r].name +
                                         ") has no per-query results (evaluated before lmk "
                                         "stored them): a paired test needs them; evaluate it "
                                         "again, or compare its means without --test / "
                                         "--baseline");
    }
  }
}

int run_compare(const CompareArgs& args) {
  const CompareRequest request = compare_request(args);
  const ComparisonOptions& options = request.options;
  const ReportFormat format = request.format;
  ResultsStore store = open_for_reading(args.db);
  std::vector<RunRecord> runs;
  std::vector<std::map<std::string, std::string>> params;
  std::vector<std::vector<EvalResult>> results;
  std::vector<std::string> rows;
  for (const int64_t id : args.runs) {
    runs.push_back(store.get_run(id));
    params.push_back(store.run_params(id));
    results.push_back(store.eval_results(id));
    rows.push_back("#" + std::to_string(id) + " " + runs.back().name);
  }
  const bool terminal = stdout_is_terminal();
  const std::string overview =
      format == ReportFormat::Text ? config_overview(runs, params, args.all, terminal) : "";
  bool any_results = false;
  for (const auto& run_results : results) any_results |= !run_results.empty();
  if (!any_results) {
    if (format == ReportFormat::Text) std::cout << overview << "\nno evaluation results\n";
    return 0;
  }
  const std::vector<ResultColumn> columns = result_columns(args, results);

  check_comparable(args, options, store, runs, params, results, rows, columns);

  std::vector<std::string> labels;
  for (const ResultColumn& column : columns) labels.push_back(column.label());
  std::vector<std::vector<ComparisonCell>> cells(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    for (const ResultColumn& column : columns)
      cells[r].push_back(stored_cell(store, runs[r].id, results[r], column));
  }
  const ComparisonTable table = compare_table(rows, labels, cells, options);
  ReportOptions report;
  report.format = format;
  report.paired_tests = args.p_values || options.baseline;
  report.terminal = terminal;
  // Printed once everything is checked: a refused comparison prints only its message.
  std::cout << overview << (format == ReportFormat::Text ? "\n" : "")
            << render_comparison(table, report);
  return 0;
}

}  // namespace

Runner add_compare_command(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Runs side by side: config differences, then their results with confidence intervals and "
      "paired significance tests over the queries (ranx-style)");
  cmd->add_option("--db", args->db, "results database (SQLite)")->required();
  cmd->add_option("RUN", args->runs, "run ids (two or more)")
      ->required()
      ->check(whole(1, std::numeric_limits<int64_t>::max()));
  cmd->add_flag("--all", args->all, "show the parameters that are equal too");
  cmd->add_option("--baseline", args->baseline,
                  "test each run against this one (default: all pairs, ranx-style letters)")
      ->check(whole(1, std::numeric_limits<int64_t>::max()));
  cmd->add_option("--metric", args->metrics,
                  "metric columns (repeatable; default ndcg_at_10 where the runs have it)");
  cmd->add_option("--group", args->groups,
                  "groups of queries: all (the whole split), length (each part / context length), "
                  "position (evidence-position buckets); repeatable")
      ->capture_default_str();
  auto* test = cmd->add_option("--test", args->test,
                               "paired test: fisher (randomization), student (t), bootstrap")
                   ->capture_default_str();
  cmd->add_option("--alpha", args->alpha, "family-wise significance level (Holm–Bonferroni)")
      ->capture_default_str()
      ->check(real(0, 1, true, true));
  cmd->add_option("--confidence", args->confidence, "confidence level of the intervals")
      ->capture_default_str()
      ->check(real(0, 1, true, true));
  cmd->add_option("--resamples", args->resamples, "bootstrap resamples and random sign patterns")
      ->capture_default_str()
      ->check(whole(1));
  cmd->add_option("--seed", args->seed, "seed of the resampling")
      ->capture_default_str()
      ->check(seed_range());
  cmd->add_flag("--bca", args->bca, "BCa intervals instead of percentile ones");
  cmd->add_flag("--p-values", args->p_values,
                "list every paired test: difference, its interval, p and Holm-adjusted p, d_z "
                "(always with --baseline)");
  cmd->add_flag("--intersection", args->intersection,
                "pair runs on the queries they share when their query sets differ");
  cmd->add_option("--format", args->format, "text | csv | latex | markdown")->capture_default_str();
  return [args, test] {
    args->test_given = test->count() > 0;
    return run_compare(*args);
  };
}

}  // namespace lmk::cli
