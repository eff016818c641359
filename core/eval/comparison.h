#pragma once

// Tables of evaluations with their uncertainty (lmkcore, no LibTorch). A cell is one run's
// metric over a group of queries of a dataset split: its mean with a bootstrap confidence
// interval and N. Rows are compared by paired tests over the queries both cells share — each
// row against a baseline row, or all pairs — and the p-values of the whole table are corrected
// together with Holm–Bonferroni. Pure functions over per-query scores (the store's QueryScore
// rows), so lmk compare, lmk study, lmk export and the workbench report the same numbers.

#include <optional>
#include <string>
#include <vector>

#include "core/eval/stats.h"
#include "core/store/results_store.h"

namespace lmk {

// The queries of one group of an evaluation, as its eval_results rows name groups: "all" (every
// query); a dataset part (kind "length" or "part", value "4096"); an evidence-position bucket
// over all parts (kind "position", value "20-30%") or within one part ("position@4096").
// Other kinds (classification labels) have no per-query scores: empty.
std::vector<QueryScore> select_query_group(const std::vector<QueryScore>& scores,
                                           const std::string& group_kind,
                                           const std::string& group_value,
                                           int position_buckets = 10);

// Two cells' values paired by (part, query id), in (part, query id) order; queries of only one
// side are counted, not paired.
struct PairedScores {
  std::vector<double> a, b;
  std::vector<std::pair<std::string, std::string>> units;  // (part, query id) of each pair
  size_t only_a = 0, only_b = 0;
};
PairedScores pair_scores(const std::vector<QueryScore>& a, const std::vector<QueryScore>& b);

// A cell's mean over its queries with a bootstrap interval (percentile, or BCa), resampled in
// (part, query id) order with a seed drawn from `options.seed` and those (part, query id): the
// one function every table, view and command summarizes a cell with, so the same queries with
// the same values give the same interval everywhere, whatever the cell is called.
struct CellSummary {
  size_t n = 0;  // queries; 0 when only a stored mean is known
  double mean = stats::kNaN;
  stats::Interval interval;
  bool per_query = false;  // computed from per-query scores
};
CellSummary summarize_scores(const std::vector<QueryScore>& scores,
                             const stats::ResamplingOptions& options, bool bca = false);
// The interval of a cell as a phrase: "95 % CI 0.412 – 0.533, N = 12"; a cell of one query has
// none ("N = 1: no interval from one query"), nor has one of none ("no queries").
std::string interval_text(const CellSummary& cell, int digits, double confidence = 0.95);

// What the table knows of one cell.
struct ComparisonCell {
  bool present = false;                           // the run has this result at all
  std::optional<std::vector<QueryScore>> scores;  // per-query scores; nullopt: not stored
  double stored_mean = stats::kNaN;               // the stored mean (shown without scores)
  // Why a present cell has no scores, for the note under the table (default: the run was
  // evaluated before lmk stored per-query results).
  std::string why_no_scores;
};

struct ComparisonOptions {
  stats::PairedTest test = stats::PairedTest::Fisher;
  stats::ResamplingOptions resampling;  // resamples, base seed, confidence of the intervals
  double alpha = 0.05;                  // family-wise, after Holm–Bonferroni
  std::optional<size_t> baseline;       // the row every other row is tested against; else all pairs
  bool all_pairs = false;  // test all pairs even with a baseline (which then only marks rows)
  bool run_tests = true;   // false: intervals only (a table too large to test)
  std::string why_no_tests = "not run for a table this large";  // the legend's reason then
  bool bca = false;           // BCa intervals for cells and differences
  bool intersection = false;  // pair on the shared queries when the sets differ
  // Whether differing query sets or fewer than 2 shared queries are an InputError (the CLI) or a
  // note beside the table (lmk study, the workbench).
  bool refuse_unpaired = true;
};

// One paired test of the table: row against other in one column (difference = row - other).
struct ComparisonTest {
  size_t row = 0, other = 0, column = 0;
  stats::PairedComparison result;
  double p_adjusted = stats::kNaN;  // Holm–Bonferroni over the table's tests
  bool significant = false;         // p_adjusted < alpha
  size_t left_out = 0;              // queries of only one side (with intersection)
};

struct ComparisonTable {
  std::vector<std::string> rows, columns;
  std::vector<std::vector<CellSummary>> cells;  // [row][column]; absent: n 0 and mean NaN
  std::vector<std::vector<bool>> present;       // [row][column]
  std::vector<ComparisonTest> tests;
  std::vector<std::string> notes;  // what was not compared, and why (deduplicated)
  ComparisonOptions options;

  // The test of (row, other) in a column, in either order (the difference then taken as
  // row - other); nullptr when there is none.
  const ComparisonTest* find_test(size_t row, size_t other, size_t column) const;
  // Rows that `row` beats significantly in `column` (higher mean, adjusted p < alpha).
  std::vector<size_t> beaten_rows(size_t row, size_t column) const;
  // +1 / -1 when `row` is significantly above / below the baseline in `column`, else 0.
  int versus_baseline(size_t row, size_t column) const;
  // The row with the highest mean in the column (nullopt: none), and whether it beats every
  // other present row significantly (else it is a tied best).
  std::optional<size_t> best_row(size_t column) const;
  bool best_is_significant(size_t column) const;
  // Sentences naming the interval, the test, the correction and the family, for under a table.
  std::vector<std::string> legend() const;
};

// Summarizes every cell and runs the table's tests. With refuse_unpaired, two cells to compare
// that do not hold the same queries (unless intersection) or share fewer than 2 are an
// InputError naming both rows and the column; without it they become notes. Seeds are derived
// from the options' seed and the queries of the cell (of the pair, for a test), so a cell's
// numbers depend neither on the rest of the table nor on what it is called.
ComparisonTable compare_table(const std::vector<std::string>& rows,
                              const std::vector<std::string>& columns,
                              const std::vector<std::vector<ComparisonCell>>& cells,
                              const ComparisonOptions& options);

}  // namespace lmk
