// The filter bar's language as the store reads it (core/store/run_selection.h), in Qt's types.
#include "widgets/run_filter.h"

#include <variant>

#include "core/store/results_store.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {

RunSelection run_selection(const RunFilter& filter) {
  return {filter.text.toStdString(), filter.status.toStdString(), filter.experiment_id};
}

QString run_filter_error(const RunFilter& filter) {
  return QString::fromStdString(run_selection_condition(run_selection(filter)).error);
}

QVariantList qt_bindings(const std::vector<SqlValue>& values) {
  QVariantList bindings;
  for (const SqlValue& value : values) {
    if (const auto* text = std::get_if<std::string>(&value))
      bindings << QString::fromStdString(*text);
    else if (const auto* number = std::get_if<double>(&value))
      bindings << *number;
    else
      bindings << static_cast<qlonglong>(std::get<int64_t>(value));
  }
  return bindings;
}

qlonglong count_runs(const QSqlDatabase& db, const RunFilter& filter) {
  return store_reader(db).count_runs(run_selection(filter));
}

}  // namespace lmk::widgets
