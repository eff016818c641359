#pragma once

// The results browser's filter (the filter bar's text, widgets/results_view.h) in the store's
// language (core/store/run_selection.h), which the runs table (widgets/results_model.h) and the
// pivot (widgets/pivot_model.h) both select by.

#include <QString>

#include "core/store/run_selection.h"

namespace lmk {
class ResultsStore;
}

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

// The term of the filter's text that cannot be read (the selection leaves it out), "" when
// every term reads.
QString run_filter_error(const RunFilter& filter);

// How many runs `filter` selects.
qlonglong count_runs(const ResultsStore& db, const RunFilter& filter);

}  // namespace lmk::widgets
