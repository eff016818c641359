#pragma once

// The results browser's runs table as one query over the store: a row per run (or, in long
// format, per run and benchmark) with the run's fields, the parameters asked for and one metric
// on each benchmark, selected by a filter text (core/store/run_selection.h) and sorted by any
// column. The workbench reads it a page at a time (ResultsStore::runs_table_page) so its table
// can scroll through 10 000 runs without reading them all; the columns and their SQL are the
// store's.

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/store/run_selection.h"

namespace lmk {

enum class RunsTableColumnKind {
  Id,        // the run id
  Text,      // a run field
  Duration,  // seconds from start to end (null while running)
  Param,     // a run parameter (null when the run has none)
  Metric,    // the whole-split value of the metric on a benchmark (null without one)
};

struct RunsTableColumn {
  RunsTableColumnKind kind = RunsTableColumnKind::Text;
  std::string name;  // the field ("id", "experiment", ...), the param key or the benchmark's label
};

struct RunsTableSpec {
  std::vector<std::string> param_keys;
  // (dataset, split, label) of each benchmark column (wide format).
  std::vector<std::tuple<std::string, std::string, std::string>> benchmarks;
  std::string metric;        // "": no metric columns
  bool long_format = false;  // a row per run and benchmark: benchmark, split, score columns
  RunSelection selection;
  size_t sort_column = 0;  // an index of runs_table_columns (out of range: the id)
  bool ascending = true;
};

// The columns in order: id, experiment, name, kind, status, started, duration, host, device,
// error; one per param key; with a metric, one per benchmark — or, in long format, benchmark,
// split and score.
std::vector<RunsTableColumn> runs_table_columns(const RunsTableSpec& spec);

struct SqlQuery {
  std::string sql;
  std::vector<SqlValue> bindings;
  std::string error;  // the selection's (a term left out)
};

// The table's query: the columns as c0, c1, ... in runs_table_columns' order. Sorted by the
// sort column: ids by number; text ignoring case; params by number, then text, runs without the
// param last; metrics and durations with the runs without a value last; ties by id.
SqlQuery runs_table_query(const RunsTableSpec& spec);

// One row of the table as SQLite holds it: an integer, a real or a text per column, nullopt for
// NULL.
using RunsTableRow = std::vector<std::optional<SqlValue>>;

}  // namespace lmk
