// The filter bar's language as the store reads it (core/store/run_selection.h), in Qt's types.
#include "widgets/run_filter.h"

#include <variant>

#include "core/store/results_store.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {

RunSelection run_selection(const RunFilter& filter) {
  return {filter.text.toStdString(), filter.status.toStdString(), filter.experiment_id};
}

FilterClause run_filter_clause(const RunFilter& filter) {
  const SqlCondition condition = run_selection_condition(run_selection(filter));
  FilterClause clause;
  clause.sql = QString::fromStdString(condition.sql);
  clause.error = QString::fromStdString(condition.error);
  clause.bindings = qt_bindings(condition.bindings);
  return clause;
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
