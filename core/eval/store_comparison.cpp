#include "core/eval/store_comparison.h"

#include <tuple>

namespace lmk {

std::string ResultColumn::label() const {
  return dataset + "/" + split + " " + metric +
         (group_kind == "all" ? "" : " " + group_kind + "=" + group_value);
}

bool ResultColumn::operator<(const ResultColumn& other) const {
  return std::tie(dataset, split, metric, group_kind, group_value) <
         std::tie(other.dataset, other.split, other.metric, other.group_kind, other.group_value);
}

bool ResultColumn::operator==(const ResultColumn& other) const {
  return std::tie(dataset, split, metric, group_kind, group_value) ==
         std::tie(other.dataset, other.split, other.metric, other.group_kind, other.group_value);
}

bool in_column(const EvalResult& result, const ResultColumn& column) {
  return result.dataset == column.dataset && result.split == column.split &&
         result.metric == column.metric && result.group_kind == column.group_kind &&
         result.group_value == column.group_value;
}

ComparisonCell stored_cell(const ResultsStore& store, int64_t run_id,
                           const std::vector<EvalResult>& results, const ResultColumn& column) {
  ComparisonCell cell;
  for (const EvalResult& result : results) {
    if (!in_column(result, column)) continue;
    cell.present = true;
    cell.stored_mean = result.value;
  }
  if (!cell.present) return cell;
  std::vector<QueryScore> scores =
      select_query_group(store.query_scores(run_id, column.dataset, column.split, column.metric),
                         column.group_kind, column.group_value);
  if (!scores.empty()) {
    cell.scores = std::move(scores);
  } else if (store.has_query_results(run_id)) {
    cell.why_no_scores = "run " + std::to_string(run_id) + ": " + column.metric + " on " +
                         column.dataset + " has no per-query values (not a mean over queries, " +
                         "as macro-F1): its mean is shown without an interval or test";
  }
  return cell;
}

std::vector<PivotInput> pivot_inputs(const ResultsStore& store, const std::string& metric,
                                     const RunSelection& selection,
                                     const std::vector<int64_t>& runs) {
  std::vector<PivotInput> inputs;
  for (const PivotSourceRow& row : store.pivot_source_rows(metric, selection, runs))
    inputs.push_back({row.run_id, row.experiment, row.run_name, row.pooling, row.granularity,
                      row.max_length, row.result.dataset, row.result.split, row.result.group_kind,
                      row.result.group_value, row.result.value});
  return inputs;
}

}  // namespace lmk
