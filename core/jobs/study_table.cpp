// The study's comparison tables (core/jobs/study.h): per source and task, a cell per pooling
// and length with its interval and marks against CLS (or last, in a decoder study), read back
// from the results store; with [eval] select = "dev", the granularity chosen on dev and reported
// on test.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "core/eval/comparison_report.h"
#include "core/eval/needle_map.h"
#include "core/eval/store_comparison.h"
#include "core/jobs/study.h"
#include "core/pool/pooling_kind.h"
#include "core/store/results_store.h"

namespace lmk {

namespace {

// A column: its header, the run (by its name in a study without a sweep, less the pooling), and
// where in the run's results it is.
struct StudyColumn {
  std::string header, run, metric, group_kind, group_value;
  bool has_dev = false;    // the task has a dev split (granularity can be chosen on it)
  bool any_split = false;  // a dataset of your own: the split its evaluation read
};

struct StudyTableSpec {
  std::string title;
  std::vector<StudyColumn> columns;
  std::string map;  // a needle task: its length x depth map follows the table
};

// The tables of a config: one per source (passages, documents at each length), code, each
// generated task.
std::vector<StudyTableSpec> table_specs(const StudyConfig& c) {
  auto benchmark = [&](const std::string& b) {
    return std::find(c.benchmarks.begin(), c.benchmarks.end(), b) != c.benchmarks.end();
  };
  std::vector<StudyTableSpec> specs;
  for (const StudySource& source : c.sources) {
    StudyTableSpec spec{
        source.name + ": nDCG@10 (passages; documents of each length, read whole)", {}, ""};
    if (benchmark("passages"))
      spec.columns.push_back({"passages@" + std::to_string(c.passage_length),
                              source.name + "-passages", "ndcg_at_10", "all", "", true});
    if (benchmark("documents")) {
      for (int64_t length : c.lengths)
        spec.columns.push_back({"documents@" + std::to_string(length), source.name + "-documents",
                                "ndcg_at_10", "length", std::to_string(length), true});
    }
    if (!spec.columns.empty()) specs.push_back(std::move(spec));
  }
  if (benchmark("code"))
    specs.push_back(
        {"code: nDCG@10 (docstring -> function, Python standard library)",
         {{"code@" + std::to_string(c.pretrain_length), "code", "ndcg_at_10", "all", "", true}},
         ""});
  if (!c.datasets.empty()) {
    StudyTableSpec spec{"your datasets: nDCG@10 (each on its default split)", {}, ""};
    for (const std::string& folder : c.datasets) {
      const std::string name = std::filesystem::path(folder).filename().string();
      spec.columns.push_back({name, name, "ndcg_at_10", "all", "", false, true});
    }
    specs.push_back(std::move(spec));
  }
  for (const std::string& task : synthetic_benchmarks()) {
    if (!benchmark(task)) continue;
    // fwe has no depth: its words are spread over the whole text.
    const bool depths = task != "fwe";
    StudyTableSpec spec{task + ": nDCG@1 per document length" + (depths ? " (all depths)" : ""),
                        {},
                        depths ? task : ""};
    for (int64_t length : c.needle_lengths)
      spec.columns.push_back({task + "@" + std::to_string(length), task, "ndcg_at_1", "length",
                              std::to_string(length), false});
    specs.push_back(std::move(spec));
  }
  return specs;
}

// Newest finished eval run of each name in the study's experiment.
using LatestRuns = std::map<std::string, int64_t>;

// The cell of the run that `names` calls `run` (a name in a study without a sweep) in `column`,
// on `split`.
ComparisonCell read_cell(const ResultsStore& store, const LatestRuns& latest,
                         const std::map<std::string, std::string>& names, const std::string& run,
                         const StudyColumn& column, const std::string& split) {
  const auto name = names.find(run);
  const auto id = name == names.end() ? latest.end() : latest.find(name->second);
  if (id == latest.end()) return {};
  const std::vector<EvalResult> results = store.eval_results(id->second);
  for (const EvalResult& r : results) {
    if ((column.any_split || r.split == split) && r.metric == column.metric &&
        r.group_kind == column.group_kind && r.group_value == column.group_value)
      return stored_cell(store, id->second, results,
                         {r.dataset, r.split, r.metric, r.group_kind, r.group_value});
  }
  return {};
}

// The row the others are marked against: the first cls pooling, else (a decoder study) the
// first last pooling; none: all pairs are tested.
std::optional<size_t> baseline_row(const std::vector<StudyVariant>& variants) {
  for (const char* pooling : {"cls", "last"})
    for (size_t i = 0; i < variants.size(); ++i)
      if (variants[i].pooling == pooling) return i;
  return std::nullopt;
}

std::string render_table(const std::string& title, const std::vector<std::string>& rows,
                         const std::vector<std::string>& headers,
                         const std::vector<std::vector<ComparisonCell>>& cells,
                         std::optional<size_t> baseline, bool tests) {
  ComparisonOptions options;
  options.baseline = baseline;
  options.refuse_unpaired = false;
  options.run_tests = tests;
  options.why_no_tests = "an oracle is not a result to test";
  ReportOptions report;
  report.row_header = "pooling";
  report.title = title;
  return render_comparison(compare_table(rows, headers, cells, options), report);
}

// The length x depth map of a needle task, one block of rows per pooling.
std::string needle_maps(const StudyCell& cell, const LatestRuns& latest, const ResultsStore& store,
                        const StudyTableSpec& spec) {
  std::vector<std::pair<std::string, NeedleMap>> maps;
  size_t fewest = SIZE_MAX, most = 0;
  for (const StudyVariant& v : cell.config.variants) {
    const auto name = cell.run_names.find(v.label + "/" + spec.map);
    const auto id = name == cell.run_names.end() ? latest.end() : latest.find(name->second);
    if (id == latest.end()) continue;
    NeedleMap map = needle_map(store.query_scores(id->second, spec.map, "test", "ndcg_at_1"));
    if (map.lengths.empty()) continue;
    for (const auto& row : map.cells)
      for (const CellSummary& c : row)
        if (c.n > 0) fewest = std::min(fewest, c.n), most = std::max(most, c.n);
    maps.emplace_back(v.label, std::move(map));
  }
  if (maps.empty()) return "";
  const std::string n =
      fewest == most ? std::to_string(most) : std::to_string(fewest) + "-" + std::to_string(most);
  return spec.map + ": nDCG@1 by document length (rows) and needle depth (columns), " + n +
         " queries per cell\n" + render_needle_maps(maps);
}

std::string cell_tables(const StudyCell& cell, const LatestRuns& latest,
                        const ResultsStore& store) {
  const StudyConfig& c = cell.config;
  std::string out;
  for (const StudyTableSpec& spec : table_specs(c)) {
    std::vector<std::string> rows, headers;
    const std::optional<size_t> baseline = baseline_row(c.variants);  // a row per variant
    for (const StudyColumn& col : spec.columns) headers.push_back(col.header);
    std::vector<std::vector<ComparisonCell>> cells;
    for (const StudyVariant& v : c.variants) {
      rows.push_back(v.label);
      cells.emplace_back();
      for (const StudyColumn& col : spec.columns)
        cells.back().push_back(
            read_cell(store, latest, cell.run_names, v.label + "/" + col.run, col, "test"));
    }
    out +=
        (out.empty() ? "" : "\n") + render_table(spec.title, rows, headers, cells, baseline, true);
    if (!spec.map.empty()) out += "\n" + needle_maps(cell, latest, store, spec);
  }
  const std::string synthetic =
      c.synthetic_pairs > 0 ? ", and on " + std::to_string(c.synthetic_pairs) +
                                  " synthetic passkey and as many needle pairs (in-domain data)"
                            : "";
  std::string own;
  for (const std::string& file : c.train_files)
    own += (own.empty() ? ", on " : ", ") + std::filesystem::path(file).filename().string();
  const std::string start = c.init.empty() ? "pretrained at " + std::to_string(c.pretrain_length)
                                           : "from the model folder " + c.init;
  return out + "(fine-tuned at " + std::to_string(c.passage_length) + " tokens" + own + synthetic +
         ", " + start +
         "; documents@L: windows of at least L tokens, evidence inside; passkey, needles, cwe and "
         "fwe: documents of exactly L tokens)\n";
}

// With [eval] select = "dev": per group of cells that differ only in the granularity, each
// granularity-reading pooling's granularity chosen per column on the dev split and its test
// result at that choice, against CLS (or last); then the oracle (best on test), labelled.
std::string dev_selection(const StudyPlan& plan, const LatestRuns& latest,
                          const ResultsStore& store) {
  std::map<std::string, std::vector<const StudyCell*>> groups;  // other swept values -> cells
  for (const StudyCell& cell : plan.cells) {
    std::string key;
    for (const auto& [label, value] : cell.config.cell)
      if (label != cell.config.granularity_label)
        key += (key.empty() ? "" : ",") + label + "=" + value;
    groups[key].push_back(&cell);
  }
  std::string out;
  for (const auto& [group, cells] : groups) {
    const StudyConfig& c = cells.front()->config;
    for (const StudyTableSpec& spec : table_specs(c)) {
      std::vector<StudyColumn> columns;
      for (const StudyColumn& col : spec.columns)
        if (col.has_dev) columns.push_back(col);
      if (columns.empty()) continue;
      std::vector<std::string> headers, rows, oracle_rows, choices;
      for (const StudyColumn& col : columns) headers.push_back(col.header);
      std::vector<std::vector<ComparisonCell>> chosen, oracle;
      const std::optional<size_t> baseline = baseline_row(c.variants);  // a row per variant
      for (const StudyVariant& v : c.variants) {
        const bool reads = reads_granularity(parse_pooling(v.pooling, "pooling"));
        rows.push_back(reads ? v.label + " (g chosen on dev)" : v.label);
        chosen.emplace_back();
        if (reads) {
          oracle_rows.push_back(v.label + " (g best on test: oracle)");
          oracle.emplace_back();
        }
        std::string choice;
        for (const StudyColumn& col : columns) {
          if (!reads) {
            chosen.back().push_back(read_cell(store, latest, cells.front()->run_names,
                                              v.label + "/" + col.run, col, "test"));
            continue;
          }
          // The best granularity on dev (ties: the smaller), and on test for the oracle.
          const StudyCell* best_dev = nullptr;
          const StudyCell* best_test = nullptr;
          double dev_score = -1, test_score = -1;
          for (const StudyCell* candidate : cells) {
            const ComparisonCell dev = read_cell(store, latest, candidate->run_names,
                                                 v.label + "/" + col.run + ":dev", col, "dev");
            const ComparisonCell test = read_cell(store, latest, candidate->run_names,
                                                  v.label + "/" + col.run, col, "test");
            auto better = [&](double score, double best, const StudyCell* holder) {
              return score > best || (score == best && holder &&
                                      candidate->config.granularity < holder->config.granularity);
            };
            if (dev.present && better(dev.stored_mean, dev_score, best_dev))
              dev_score = dev.stored_mean, best_dev = candidate;
            if (test.present && better(test.stored_mean, test_score, best_test))
              test_score = test.stored_mean, best_test = candidate;
          }
          chosen.back().push_back(best_dev ? read_cell(store, latest, best_dev->run_names,
                                                       v.label + "/" + col.run, col, "test")
                                           : ComparisonCell{});
          oracle.back().push_back(best_test ? read_cell(store, latest, best_test->run_names,
                                                        v.label + "/" + col.run, col, "test")
                                            : ComparisonCell{});
          choice +=
              (choice.empty() ? "" : ", ") + col.header +
              " g=" + (best_dev ? std::to_string(best_dev->config.granularity) : "?") +
              " (oracle g=" + (best_test ? std::to_string(best_test->config.granularity) : "?") +
              ")";
        }
        if (reads) choices.push_back("  " + v.label + ": " + choice);
      }
      const std::string where = group.empty() ? "" : " [" + group + "]";
      out += (out.empty() ? "" : "\n") +
             render_table(spec.title + where + ", granularity chosen on dev, scored on test", rows,
                          headers, chosen, baseline, true);
      out += "chosen on the dev split (highest mean; ties: the smaller g):\n";
      for (const std::string& line : choices) out += line + "\n";
      out += "\n" + render_table("oracle" + where +
                                     ": the granularity best on test itself (optimistic: chosen "
                                     "on the data it is scored on; not a result, no tests)",
                                 oracle_rows, headers, oracle, std::nullopt, false);
    }
  }
  return out;
}

}  // namespace

std::string study_table(const StudyPlan& plan, const ResultsStore& store) {
  RunFilter filter;
  filter.experiment = plan.experiment;
  filter.status = RunStatus::Finished;
  filter.kind = "eval";
  LatestRuns latest;  // run name -> newest finished run
  for (const RunRecord& run : store.list_runs(filter)) latest[run.name] = run.id;
  std::string out;
  for (const StudyCell& cell : plan.cells) {
    if (!cell.config.cell_name.empty())
      out += (out.empty() ? "" : "\n") + cell.config.cell_name + ":\n";
    out += cell_tables(cell, latest, store);
  }
  if (plan.config.select == "dev") out += "\n" + dev_selection(plan, latest, store);
  return out;
}

}  // namespace lmk
