#pragma once

// A unit of the results store (core/store/results_store.h). The evaluation results: one number per
// run, dataset, split, metric and group of queries, and the reads across runs the plots, the
// benchmark columns and the paper's table are built of.

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "core/store/run_selection.h"
#include "core/store/store_runs.h"
#include "core/store/store_unit.h"

namespace lmk {

// One evaluation number. group_kind "all" is the whole split (group_value empty); other kinds
// slice it, e.g. "length" / "4k-8k" or "position" / "0.25".
struct EvalResult {
  std::string dataset, split, metric;
  double value = 0;
  std::string group_kind = "all", group_value;
};

// One evaluation result of a run, for the curves over length and position.
struct RunResultPoint {
  RunLabel run;
  std::string group_kind, group_value;
  double value = 0;
};

// A dataset split evaluated in the store, and the first run that has results on it.
struct StoredBenchmark {
  std::string dataset, split;
  int64_t first_run = 0;
};
struct StoredBenchmarks {
  std::vector<StoredBenchmark> benchmarks;
  std::vector<std::string> metrics;
};

// One result of a run with the parameters the paper's table groups runs by.
struct PivotSourceRow {
  int64_t run_id = 0;
  std::string experiment, run_name, pooling, granularity, max_length;
  EvalResult result;
};

class EvaluationResults : public virtual StoreUnit {
 public:
  // Adds evaluation results; a row with the same run, dataset, split, metric and group
  // replaces the stored one.
  void add_eval_results(int64_t run_id, const std::vector<EvalResult>& rows);
  // The run's evaluation results (of one dataset when given), ordered by dataset, split,
  // metric, group.
  std::vector<EvalResult> eval_results(int64_t run_id, const std::string& dataset = "") const;
  // The (dataset, split, metric) triples of stored evaluation results, sorted.
  std::vector<std::tuple<std::string, std::string, std::string>> eval_result_metrics() const;
  // One metric's results of every run on a dataset split, of the groups a curve reads (all,
  // length, position, position@PART), by run id.
  std::vector<RunResultPoint> result_points(const std::string& dataset, const std::string& split,
                                            const std::string& metric) const;
  // One metric's whole-split and per-length results of the runs `selection` selects (and of
  // `runs` when not empty), each with its run's experiment and name and its pooling,
  // granularity and max_length parameters as stored ("" when absent): what the paper's table
  // is built of (core/eval/store_comparison.h, pivot_inputs). By run id.
  std::vector<PivotSourceRow> pivot_source_rows(const std::string& metric,
                                                const RunSelection& selection = {},
                                                const std::vector<int64_t>& runs = {}) const;
  // The (dataset, split) pairs with evaluation results, in the order their first run was
  // written, and every metric of any result, sorted.
  StoredBenchmarks benchmarks() const;
};

}  // namespace lmk
