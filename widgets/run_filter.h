#pragma once

// The results browser's filter language (the filter bar's text, widgets/results_view.h) and the
// SQL it becomes: a WHERE condition with bound parameters over the runs, which the runs table
// (widgets/results_model.h) and the pivot (widgets/pivot_model.h) both select by.

#include <QSqlDatabase>
#include <QString>
#include <QVariantList>

namespace lmk::widgets {

// What the filter bar selects; the parts are AND-ed.
//   text: whitespace-separated terms, each `key=value`, `key!=value` or `key<op>number` (op one of
//   < <= > >=), or free text. Keys are run params (pooling, max_length, train.pooling, …; a `*` in
//   the key matches any characters) or the run's own id / name / kind / status / experiment; a
//   `*` in the value matches any characters; values with spaces go in double quotes. Free text
//   matches the run's name or its experiment's, ignoring case. (The store has no tags: params are
//   the attributes to filter by.)
struct RunFilter {
  QString text;
  QString status;                // empty: any status
  qlonglong experiment_id = -1;  // -1: any experiment
};

// A WHERE condition over `runs r JOIN experiments e` with its positional bindings. `error` names
// a term that could not be read (the condition leaves it out).
struct FilterClause {
  QString sql;
  QVariantList bindings;
  QString error;
};

// The condition selecting the runs `filter` describes; always valid SQL ("1" for no filter).
FilterClause run_filter_clause(const RunFilter& filter);

// How many runs `filter` selects.
qlonglong count_runs(const QSqlDatabase& db, const RunFilter& filter);

}  // namespace lmk::widgets
