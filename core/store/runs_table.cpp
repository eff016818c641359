#include "core/store/runs_table.h"

#include <sqlite3.h>

#include <tuple>

#include "core/store/sqlite_statement.h"
#include "core/store/store_runs.h"

namespace lmk {

namespace {

struct ColumnSql {
  RunsTableColumn column;
  std::string sql;  // the select expression
  std::vector<SqlValue> bindings;
};

std::vector<ColumnSql> column_sql(const RunsTableSpec& spec) {
  using Kind = RunsTableColumnKind;
  std::vector<ColumnSql> columns;
  // Fields assigned one by one: braced temporaries of these structs trip GCC 12's
  // -Wmaybe-uninitialized.
  const auto add = [&](Kind kind, const std::string& name, const std::string& sql,
                       std::vector<SqlValue> bindings) {
    ColumnSql column;
    column.column.kind = kind;
    column.column.name = name;
    column.sql = sql;
    column.bindings = std::move(bindings);
    columns.push_back(std::move(column));
  };
  const auto field = [&](Kind kind, const char* name, const char* sql) {
    add(kind, name, sql, {});
  };
  // The run's own fields: the filter's keys too (run_selection).
  for (const auto& [name, sql] : run_field_sql())
    add(name == "id" ? Kind::Id : name == "duration" ? Kind::Duration : Kind::Text, name, sql, {});
  for (const std::string& key : spec.param_keys)
    add(Kind::Param, key, "(SELECT value FROM params WHERE run_id = r.id AND key = ?)", {key});
  if (spec.metric.empty()) return columns;
  if (spec.long_format) {
    field(Kind::Text, "benchmark", "er.dataset");
    field(Kind::Text, "split", "er.split");
    field(Kind::Metric, "score", "er.value");
    return columns;
  }
  for (const auto& [dataset, split, label] : spec.benchmarks)
    add(Kind::Metric, label,
        "(SELECT value FROM eval_results WHERE run_id = r.id AND dataset = ? AND split = ? AND "
        "metric = ? AND group_kind = 'all' AND group_value = '')",
        {dataset, split, spec.metric});
  return columns;
}

}  // namespace

std::vector<RunsTableColumn> runs_table_columns(const RunsTableSpec& spec) {
  std::vector<RunsTableColumn> out;
  for (const ColumnSql& column : column_sql(spec)) out.push_back(column.column);
  return out;
}

SqlQuery runs_table_query(const RunsTableSpec& spec) {
  const std::vector<ColumnSql> columns = column_sql(spec);
  SqlQuery query;
  std::string select;
  for (size_t i = 0; i < columns.size(); ++i) {
    select += (i ? ", " : "") + columns[i].sql + " AS c" + std::to_string(i);
    query.bindings.insert(query.bindings.end(), columns[i].bindings.begin(),
                          columns[i].bindings.end());
  }
  // Long format: a row per run and benchmark with the metric (a run without any: one row).
  std::string join;
  if (spec.long_format && !spec.metric.empty()) {
    join =
        " LEFT JOIN eval_results er ON er.run_id = r.id AND er.metric = ? AND "
        "er.group_kind = 'all' AND er.group_value = ''";
    query.bindings.emplace_back(spec.metric);
  }
  const SqlCondition where = run_selection_condition(spec.selection);
  query.error = where.error;
  query.bindings.insert(query.bindings.end(), where.bindings.begin(), where.bindings.end());
  const size_t sort = spec.sort_column < columns.size() ? spec.sort_column : 0;
  const std::string column = "c" + std::to_string(sort);
  const std::string direction = spec.ascending ? "ASC" : "DESC";
  std::string order;
  switch (columns[sort].column.kind) {
    case RunsTableColumnKind::Id:
      order = "c0 " + direction;
      break;
    case RunsTableColumnKind::Text:
      order = column + " COLLATE NOCASE " + direction + ", c0";
      break;
    case RunsTableColumnKind::Param:  // numbers by value, then text; runs without it last
      order = column + " IS NULL, CAST(" + column + " AS NUMERIC) " + direction + ", " + column +
              " " + direction + ", c0";
      break;
    case RunsTableColumnKind::Metric:  // runs without a result last, either way
    case RunsTableColumnKind::Duration:
      order = column + " IS NULL, " + column + " " + direction + ", c0";
      break;
  }
  query.sql = "SELECT " + select + " FROM runs r JOIN experiments e ON e.id = r.experiment_id" +
              join + " WHERE " + where.sql + " ORDER BY " + order;
  return query;
}

std::vector<RunsTableRow> StoredRuns::runs_table_page(const SqlQuery& query, int64_t offset,
                                                      int64_t limit) const {
  store_sql::Statement rows(connection(), file(), query.sql + " LIMIT ? OFFSET ?");
  std::vector<SqlValue> bindings = query.bindings;
  bindings.emplace_back(limit);
  bindings.emplace_back(offset);
  rows.bind_values(bindings);
  std::vector<RunsTableRow> page;
  while (rows.next()) {
    RunsTableRow& row = page.emplace_back();
    for (int column = 0; column < rows.columns(); ++column) {
      switch (rows.type(column)) {
        case SQLITE_NULL:
          row.emplace_back(std::nullopt);
          break;
        case SQLITE_INTEGER:
          row.emplace_back(SqlValue(rows.integer(column)));
          break;
        case SQLITE_FLOAT:
          row.emplace_back(SqlValue(rows.real(column)));
          break;
        default:
          row.emplace_back(SqlValue(rows.text(column)));
      }
    }
  }
  return page;
}

}  // namespace lmk
