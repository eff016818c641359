#pragma once

// The results browser's filter language (the filter bar's text, widgets/results_view.h) and the
// SQL it becomes: a WHERE condition with bound parameters over the runs, which the runs table
// (widgets/results_model.h) and the pivot (widgets/pivot_model.h) both select by.

#include <QSqlDatabase>
#include <QString>
#include <QVariantList>

#include "core/store/run_selection.h"

namespace lmk::widgets {

// What the filter bar selects; the parts are AND-ed. The language is the store's
// (core/store/run_selection.h): the same text selects the same runs in lmk results --where.
struct RunFilter {
  QString text;
  QString status;                // empty: any status
  qlonglong experiment_id = -1;  // -1: any experiment
};

// The core selection of the filter.
RunSelection run_selection(const RunFilter& filter);

// A WHERE condition over `runs r JOIN experiments e` with its positional bindings (the store's
// run_selection_condition, for the runs table's Qt model). `error` names a term that could not
// be read (the condition leaves it out).
struct FilterClause {
  QString sql;
  QVariantList bindings;
  QString error;
};

// The condition selecting the runs `filter` describes; always valid SQL ("1" for no filter).
FilterClause run_filter_clause(const RunFilter& filter);

// The store's bound values as Qt SQL binds them.
QVariantList qt_bindings(const std::vector<SqlValue>& values);

// How many runs `filter` selects.
qlonglong count_runs(const QSqlDatabase& db, const RunFilter& filter);

}  // namespace lmk::widgets
