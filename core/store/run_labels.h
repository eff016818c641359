#pragma once

// How the store's reads across runs name each run (internal to core/store): the columns of a
// RunLabel and the joins they need, for the evaluation results' curves (store_evaluations) and
// the attention profiles' bins (store_attention).

#include <string>

#include "core/store/sqlite_statement.h"
#include "core/store/store_runs.h"

namespace lmk::store_sql {

// The columns of a RunLabel for rows of table alias `t` (a run_id column): run id, experiment,
// run name, pooling, evaluated length; the joins they need follow the FROM of `t`.
inline constexpr const char* kRunLabelColumns =
    "r.id, x.name, r.name, COALESCE(pooling.value, train_pooling.value, 'unknown'), "
    "COALESCE(CAST(max_length.value AS INTEGER), 0)";
inline std::string run_label_joins(const std::string& table) {
  return " JOIN runs r ON r.id = " + table +
         ".run_id JOIN experiments x ON x.id = r.experiment_id "
         "LEFT JOIN params pooling ON pooling.run_id = r.id AND pooling.key = 'pooling' "
         "LEFT JOIN params train_pooling "
         "  ON train_pooling.run_id = r.id AND train_pooling.key = 'train.pooling' "
         "LEFT JOIN params max_length ON max_length.run_id = r.id AND max_length.key = "
         "'max_length' ";
}

inline RunLabel read_run_label(const Statement& row) {
  return {row.integer(0), row.text(1), row.text(2), row.text(3), row.integer(4)};
}

}  // namespace lmk::store_sql
