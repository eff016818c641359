#pragma once

// The paper's table (lmkcore, no LibTorch): rows of model variants × benchmark columns of one
// metric, from stored eval results, with each cell's uncertainty and significance marks through
// core/eval/comparison.h. lmk export --format latex writes it; the workbench's pivot shows it.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/eval/comparison.h"

namespace lmk {

// Texts in number-aware order: non-numbers ("all", "") first, by text; then numbers ascending
// ("128" before "1024").
bool number_aware_less(const std::string& a, const std::string& b);

// The configuration a run evaluates: the run's name without its last part, the evaluation
// ("lmk-32/corpus@1024" -> "lmk-32", "granularity=16/lmk-32/passkey" -> "granularity=16/lmk-32");
// a name without '/' gives `pooling`.
std::string run_variant(const std::string& run_name, const std::string& pooling);

// The name of a line or row: `name`, after "EXPERIMENT: " when the data spans several
// experiments — runs of two experiments share names ("lmk-32/passkey") but not results.
std::string with_experiment(const std::string& experiment, const std::string& name,
                            bool several_experiments);

// One stored result of an eval run (whole split, or a per-length group) with what the pivot
// groups by: the run's experiment, name, pooling, granularity and max_length parameters.
struct PivotInput {
  int64_t run = 0;
  std::string experiment, name, pooling, granularity, max_length;
  std::string dataset, split, group_kind, group_value;
  double value = stats::kNaN;
};

// How the pivot groups eval runs into rows.
enum class PivotRows {
  Variant,             // the run name without its benchmark part: "lmk-32" of "lmk-32/corpus@512"
  PoolingGranularity,  // the variant after its pooling and granularity: "lmk, granularity 32 ·
                       // lmk-var"
  Pooling,             // the variant after its pooling: "lmk · lmk-var"
};

// The result behind one cell: the runs it averages (several only where one variant ran one
// benchmark twice under different names) and, per run, which stored result it is.
struct PivotCell {
  std::vector<int64_t> runs;
  std::vector<std::string> run_names;
  std::string dataset, split, group_kind, group_value;  // of the cell's results
  double value = stats::kNaN;                           // the mean of its runs' values
};

// Rows × benchmark columns. A benchmark is a dataset, or dataset@L when it was evaluated at
// several lengths: per-length groups of the results (group_kind 'length', passkey and needle)
// or several max_length params of runs (corpus@L). A row is one variant (run_variant) of one
// experiment (named with it when the runs span several) in every mode: rows never average
// different models. Of runs of one name only the newest counts.
struct Pivot {
  std::string row_header;
  std::vector<std::string> rows, columns;
  std::vector<std::vector<PivotCell>> cells;  // [row][column]; runs empty: no result
};

// The pivot of results (of one metric: the caller selects; whole-split and 'length' groups).
Pivot build_pivot(std::vector<PivotInput> results, PivotRows rows);

// One run's per-query scores of a metric on a dataset split; nullopt when the store has none.
using QueryScoreSource = std::function<std::optional<std::vector<QueryScore>>(
    int64_t run, const std::string& dataset, const std::string& split)>;

// The pivot's cells with intervals and tests: a cell of one run is compared through its
// per-query scores (the group of its result), a cell averaging several runs shows its mean only.
ComparisonTable compare_pivot(const Pivot& pivot, const QueryScoreSource& scores,
                              const ComparisonOptions& options);

}  // namespace lmk
