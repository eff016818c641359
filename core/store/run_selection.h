#pragma once

// The runs a filter text selects — the workbench's filter bar and lmk results --where — and the
// SQL condition it becomes over `runs r JOIN experiments e`, with its bound values. lmkcore; the
// store runs it (ResultsStore::count_runs, selected_runs), the workbench's runs table adds it to
// the query its Qt model scrolls in.
//
// The text: whitespace-separated terms, each `key=value`, `key!=value` or `key<op>number` (op one
// of < <= > >=), or free text. Keys are the runs table's own columns (run_field_sql: id,
// experiment, name, kind, status, started, duration in seconds, host, device, error; and
// benchmark / split: a run with an evaluation result on that dataset / split), else run params
// (pooling, max_length, train.pooling, ...; a `*` in the key matches any characters); a `*` in
// the value matches any characters; values with spaces go in double quotes. Free text
// matches the run's name or its experiment's, ignoring ASCII case. The terms are AND-ed, with
// the status and experiment when given.

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace lmk {

struct RunSelection {
  std::string text;
  std::string status;          // "" : any status (else a stored status name, e.g. "FINISHED")
  int64_t experiment_id = -1;  // -1: any experiment
};

// A value bound to a `?` of a condition.
using SqlValue = std::variant<int64_t, double, std::string>;

struct SqlCondition {
  std::string sql;  // always valid SQL: "1" when nothing is selected by
  std::vector<SqlValue> bindings;
  std::string error;  // a term that could not be read (the condition leaves it out)
};

SqlCondition run_selection_condition(const RunSelection& selection);

// The run's own fields as the runs table shows them and the filter reads them: (column name,
// SQL expression over `runs r JOIN experiments e`), in the table's order. One list, so a column
// the table shows is a key the filter takes.
const std::vector<std::pair<std::string, std::string>>& run_field_sql();

}  // namespace lmk
