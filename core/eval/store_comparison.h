#pragma once

// Comparison cells (core/eval/comparison.h) read from the results store: a column is a stored
// result (dataset, split, metric and group of queries), a cell one run's value there with its
// per-query scores when the run has them. lmk compare, lmk study's tables and lmk export
// --format latex read their cells through this; so does the workbench.

#include <string>
#include <vector>

#include "core/eval/comparison.h"
#include "core/eval/pivot.h"
#include "core/store/results_store.h"

namespace lmk {

// A stored result: dataset, split, metric and group (kind "all", a part kind such as "length",
// "position", ...; see select_query_group).
struct ResultColumn {
  std::string dataset, split, metric, group_kind = "all", group_value;

  // "corpus-documents/test ndcg_at_10", with " length=4096" for a group.
  std::string label() const;
  bool operator<(const ResultColumn& other) const;
  bool operator==(const ResultColumn& other) const;
};

// Whether an eval result belongs to the column.
bool in_column(const EvalResult& result, const ResultColumn& column);

// The cell of run `run_id` in `column`: present when the run has that eval result (its stored
// mean), with its per-query scores of the group when the store has any for the run.
// `results` are the run's eval results (store.eval_results(run_id)).
ComparisonCell stored_cell(const ResultsStore& store, int64_t run_id,
                           const std::vector<EvalResult>& results, const ResultColumn& column);

// The paper's table's inputs (core/eval/pivot.h): one metric's whole-split and per-length
// results of the runs `selection` selects (and of `runs` when not empty), with each run's
// experiment, name, pooling, granularity and max_length. lmk export --format latex and the
// workbench's pivot build their tables from it.
std::vector<PivotInput> pivot_inputs(const ResultsStore& store, const std::string& metric,
                                     const RunSelection& selection = {},
                                     const std::vector<int64_t>& runs = {});

}  // namespace lmk
