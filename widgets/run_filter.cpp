// The filter bar's language as the store reads it (core/store/run_selection.h), in Qt's types.
#include "widgets/run_filter.h"

#include "core/store/results_store.h"

namespace lmk::widgets {

RunSelection run_selection(const RunFilter& filter) {
  return {filter.text.toStdString(), filter.status.toStdString(), filter.experiment_id};
}

QString run_filter_error(const RunFilter& filter) {
  return QString::fromStdString(run_selection_condition(run_selection(filter)).error);
}

qlonglong count_runs(const ResultsStore& db, const RunFilter& filter) {
  return db.count_runs(run_selection(filter));
}

}  // namespace lmk::widgets
