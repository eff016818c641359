#include "core/eval/comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "core/eval/metrics.h"
#include "core/util/error.h"
#include "core/util/random.h"

namespace lmk {

namespace {

std::string unit_key(const QueryScore& score) {
  return score.part + '\n' + score.query_id;
}

// The scores in (part, query id) order: resampling then depends on the set of queries, not on
// the order a reader returned them in.
std::vector<const QueryScore*> in_unit_order(const std::vector<QueryScore>& scores) {
  std::vector<const QueryScore*> ordered;
  for (const QueryScore& score : scores) ordered.push_back(&score);
  std::sort(ordered.begin(), ordered.end(), [](const QueryScore* a, const QueryScore* b) {
    return std::tie(a->part, a->query_id) < std::tie(b->part, b->query_id);
  });
  return ordered;
}

// The seed of the numbers over a set of queries: the base seed and the queries' (part, query
// id), in that order. So a cell's interval (and a pair's test) is a function of its queries,
// their values and the base seed alone: every table, view and command that shows the cell
// draws the same resamples, whatever it calls the cell.
uint64_t query_set_seed(uint64_t seed,
                        const std::vector<std::pair<std::string, std::string>>& units) {
  std::string text;
  for (const auto& [part, query] : units) text += part + '\n' + query + '\x1f';
  return splitmix64(seed ^ fnv1a64(text));
}

// "1 query", "2 queries".
std::string format_count(size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::vector<QueryScore> select_query_group(const std::vector<QueryScore>& scores,
                                           const std::string& group_kind,
                                           const std::string& group_value, int position_buckets) {
  if (group_kind == "all") return scores;
  std::vector<QueryScore> selected;
  const bool by_position = group_kind == "position" || group_kind.rfind("position@", 0) == 0;
  const std::string part = group_kind.rfind("position@", 0) == 0 ? group_kind.substr(9) : "";
  for (const QueryScore& score : scores) {
    bool in = false;
    if (by_position) {
      in = score.evidence_position && (part.empty() || score.part == part) &&
           position_bucket(*score.evidence_position, position_buckets) == group_value;
    } else if (group_kind == "length" || group_kind == "part") {
      in = score.part == group_value;
    }
    if (in) selected.push_back(score);
  }
  return selected;
}

PairedScores pair_scores(const std::vector<QueryScore>& a, const std::vector<QueryScore>& b) {
  std::map<std::string, double> of_b;
  for (const QueryScore& score : b) of_b[unit_key(score)] = score.value;
  PairedScores paired;
  std::set<std::string> matched;
  for (const QueryScore* score : in_unit_order(a)) {
    const auto found = of_b.find(unit_key(*score));
    if (found == of_b.end()) {
      ++paired.only_a;
      continue;
    }
    paired.a.push_back(score->value);
    paired.b.push_back(found->second);
    paired.units.emplace_back(score->part, score->query_id);
    matched.insert(found->first);
  }
  paired.only_b = of_b.size() - matched.size();
  return paired;
}

CellSummary summarize_scores(const std::vector<QueryScore>& scores,
                             const stats::ResamplingOptions& options, bool bca) {
  std::vector<double> values;
  std::vector<std::pair<std::string, std::string>> units;
  for (const QueryScore* score : in_unit_order(scores)) {
    values.push_back(score->value);
    units.emplace_back(score->part, score->query_id);
  }
  stats::ResamplingOptions seeded = options;
  seeded.seed = query_set_seed(options.seed, units);
  CellSummary summary;
  summary.n = values.size();
  summary.mean = stats::mean(values);
  summary.interval =
      bca ? stats::bca_interval(values, seeded) : stats::percentile_interval(values, seeded);
  summary.per_query = true;
  return summary;
}

std::string interval_text(const CellSummary& cell, int digits, double confidence) {
  if (cell.n == 0) return "no queries";
  const std::string n = "N = " + std::to_string(cell.n);
  if (!std::isfinite(cell.interval.low) || !std::isfinite(cell.interval.high))
    return n + (cell.n == 1 ? ": no interval from one query" : ": no interval");
  char text[128];
  std::snprintf(text, sizeof text, "%g %% CI %.*f – %.*f, ", confidence * 100, digits,
                cell.interval.low, digits, cell.interval.high);
  return text + n;
}

const ComparisonTest* ComparisonTable::find_test(size_t row, size_t other, size_t column) const {
  for (const ComparisonTest& test : tests) {
    if (test.column == column &&
        ((test.row == row && test.other == other) || (test.row == other && test.other == row)))
      return &test;
  }
  return nullptr;
}

std::vector<size_t> ComparisonTable::beaten_rows(size_t row, size_t column) const {
  std::vector<size_t> beaten;
  for (const ComparisonTest& test : tests) {
    if (test.column != column || !test.significant) continue;
    if (test.row == row && test.result.difference > 0) beaten.push_back(test.other);
    if (test.other == row && test.result.difference < 0) beaten.push_back(test.row);
  }
  std::sort(beaten.begin(), beaten.end());
  return beaten;
}

int ComparisonTable::versus_baseline(size_t row, size_t column) const {
  if (!options.baseline || row == *options.baseline) return 0;
  const ComparisonTest* test = find_test(row, *options.baseline, column);
  if (!test || !test->significant) return 0;
  const double difference = test->row == row ? test->result.difference : -test->result.difference;
  return difference > 0 ? 1 : difference < 0 ? -1 : 0;
}

std::optional<size_t> ComparisonTable::best_row(size_t column) const {
  std::optional<size_t> best;
  for (size_t r = 0; r < rows.size(); ++r) {
    const double mean = cells[r][column].mean;
    if (!present[r][column] || std::isnan(mean)) continue;
    if (!best || mean > cells[*best][column].mean) best = r;
  }
  return best;
}

bool ComparisonTable::best_is_significant(size_t column) const {
  const std::optional<size_t> best = best_row(column);
  if (!best) return false;
  bool others = false;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (r == *best || !present[r][column]) continue;
    others = true;
    const std::vector<size_t> beaten = beaten_rows(*best, column);
    if (std::find(beaten.begin(), beaten.end(), r) == beaten.end()) return false;
  }
  return others;
}

std::vector<std::string> ComparisonTable::legend() const {
  const stats::ResamplingOptions& resampling = options.resampling;
  char confidence[16];
  std::snprintf(confidence, sizeof confidence, "%g", 100 * resampling.confidence);
  std::vector<std::string> lines = {
      std::string("Cells: the mean of the metric over the queries (a dataset's: over all its ") +
      "queries, pooled over its parts; a part's: over that part's) ± half the width of its " +
      confidence + " % " + (options.bca ? "BCa" : "percentile") + " bootstrap interval (" +
      std::to_string(resampling.resamples) + " resamples of the queries, seed " +
      std::to_string(resampling.seed) + ")."};
  char alpha[16];
  std::snprintf(alpha, sizeof alpha, "%g", options.alpha);
  if (tests.empty()) {
    lines.push_back("No paired tests (" +
                    std::string(!options.run_tests ? options.why_no_tests
                                : rows.size() < 2  ? "one row"
                                                   : "no two cells to pair") +
                    ").");
  } else {
    const std::string pairs =
        options.baseline && !options.all_pairs
            ? "each row against " + rows[*options.baseline]
            : "all pairs of rows" + (options.baseline
                                         ? " (marks against " + rows[*options.baseline] + ")"
                                         : std::string());
    lines.push_back("Tests: " + stats::describe_paired_test(options.test, resampling.resamples) +
                    ", " + pairs + "; Holm–Bonferroni over the " +
                    format_count(tests.size(), "comparison", "comparisons") +
                    " of this table, significant where the adjusted p < " + alpha + ".");
  }
  lines.insert(lines.end(), notes.begin(), notes.end());
  return lines;
}

ComparisonTable compare_table(const std::vector<std::string>& rows,
                              const std::vector<std::string>& columns,
                              const std::vector<std::vector<ComparisonCell>>& cells,
                              const ComparisonOptions& options) {
  if (!(options.alpha > 0 && options.alpha < 1)) throw FieldError("alpha", "must be in (0, 1)");
  if (!(options.resampling.confidence > 0 && options.resampling.confidence < 1))
    throw FieldError("confidence", "must be in (0, 1)");
  if (options.resampling.resamples < 1) throw FieldError("resamples", "must be > 0");
  if (options.baseline && *options.baseline >= rows.size())
    throw std::invalid_argument("compare_table: baseline row out of range");
  ComparisonTable table;
  table.rows = rows;
  table.columns = columns;
  table.options = options;
  std::set<std::string> noted;
  auto note = [&](const std::string& text) {
    if (noted.insert(text).second) table.notes.push_back(text);
  };
  auto unpaired = [&](const std::string& text) {
    if (options.refuse_unpaired) throw InputError(text);
    note(text);
  };

  table.cells.assign(rows.size(), std::vector<CellSummary>(columns.size()));
  table.present.assign(rows.size(), std::vector<bool>(columns.size(), false));
  for (size_t r = 0; r < rows.size(); ++r) {
    for (size_t c = 0; c < columns.size(); ++c) {
      const ComparisonCell& cell = cells[r][c];
      table.present[r][c] = cell.present;
      if (!cell.present) continue;
      if (cell.scores) {
        table.cells[r][c] = summarize_scores(*cell.scores, options.resampling, options.bca);
      } else {
        table.cells[r][c].mean = cell.stored_mean;
        note(!cell.why_no_scores.empty()
                 ? cell.why_no_scores + "."
                 : rows[r] +
                       ": no per-query results (evaluated before lmk stored them): its "
                       "means are shown without intervals or tests; evaluate it again for "
                       "them.");
      }
    }
  }

  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t r = 0; r < rows.size() && options.run_tests; ++r) {
    if (options.baseline && !options.all_pairs) {
      if (r != *options.baseline) pairs.push_back({r, *options.baseline});
    } else {
      for (size_t other = r + 1; other < rows.size(); ++other) pairs.push_back({r, other});
    }
  }
  for (size_t c = 0; c < columns.size(); ++c) {
    for (const auto& [r, other] : pairs) {
      const ComparisonCell &a = cells[r][c], &b = cells[other][c];
      if (!a.present || !b.present || !a.scores || !b.scores) continue;
      const PairedScores paired = pair_scores(*a.scores, *b.scores);
      const std::string both = rows[r] + " and " + rows[other] + " in " + columns[c];
      if ((paired.only_a || paired.only_b) && !options.intersection) {
        unpaired(both + ": not the same queries (" + rows[r] + ": " +
                 format_count(a.scores->size(), "query", "queries") + ", " + rows[other] + ": " +
                 format_count(b.scores->size(), "query", "queries") + ", " +
                 std::to_string(paired.a.size()) +
                 " shared); paired tests need the same queries (--intersection compares the "
                 "shared ones)");
        continue;
      }
      if (paired.a.size() < 2) {
        unpaired(both + ": " + format_count(paired.a.size(), "shared query", "shared queries") +
                 " (a paired test needs at least 2)");
        continue;
      }
      stats::ResamplingOptions seeded = options.resampling;
      seeded.seed = query_set_seed(options.resampling.seed, paired.units);
      ComparisonTest test;
      test.row = r;
      test.other = other;
      test.column = c;
      test.result = stats::compare_paired(paired.a, paired.b, options.test, seeded);
      test.left_out = paired.only_a + paired.only_b;
      if (test.left_out > 0)
        note(both + ": compared on the " + std::to_string(paired.a.size()) +
             " shared queries (--intersection; " + std::to_string(test.left_out) + " left out)");
      table.tests.push_back(std::move(test));
    }
  }
  std::vector<double> p_values;
  for (const ComparisonTest& test : table.tests) p_values.push_back(test.result.p_value);
  const std::vector<double> adjusted = stats::holm_adjust(p_values);
  for (size_t i = 0; i < table.tests.size(); ++i) {
    table.tests[i].p_adjusted = adjusted[i];
    table.tests[i].significant = adjusted[i] < options.alpha;
  }
  return table;
}

}  // namespace lmk
