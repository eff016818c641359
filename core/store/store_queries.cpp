// Per-query results (core/store/store_queries.h).
#include "core/store/store_queries.h"

#include <cmath>

#include "core/store/sqlite_statement.h"

namespace lmk {

using namespace store_sql;

namespace {

// The one join of per-query scores: columns run_id, part, query_id, value, evidence_position,
// target_length of one metric on a dataset split; `where` adds the runs' condition and `order`
// an ORDER BY. Across many runs the rows come in the index's order: sorting them cost the
// workbench 10x on a store of 10 000 runs (BENCHMARKS.md, workbench at scale), and the readers
// pair queries by (part, query id) themselves.
std::string query_scores_sql(const std::string& where, const std::string& order = "") {
  return "SELECT q.run_id, q.part, q.query_id, m.value, q.evidence_position, q.target_length "
         "FROM eval_queries q JOIN query_metrics m ON m.query = q.id AND m.metric = ?3 "
         "WHERE q.dataset = ?1 AND q.split = ?2" +
         where + order;
}

QueryScore read_query_score(const Statement& row) {
  QueryScore score{row.text(1), row.text(2), row.real(3), {}, {}};
  if (!row.is_null(4)) score.evidence_position = row.real(4);
  if (!row.is_null(5)) score.target_length = row.integer(5);
  return score;
}

}  // namespace

void QueryResults::add_query_results(int64_t run_id, const std::vector<QueryResult>& rows) {
  for (const QueryResult& row : rows) {
    require_nonempty(row.dataset, "query result dataset");
    require_nonempty(row.split, "query result split");
    require_nonempty(row.query_id, "query result query id");
  }
  write_run_transaction(connection(), file(), run_id, [&] {
    // A (dataset, split, part) evaluated again replaces its queries (and, by the cascade,
    // their metrics).
    Statement clear(connection(), file(),
                    "DELETE FROM eval_queries WHERE run_id = ? AND dataset = ? AND split = ? "
                    "AND part = ?");
    std::string cleared;
    for (const QueryResult& row : rows) {
      const std::string key = row.dataset + '\n' + row.split + '\n' + row.part;
      if (key == cleared) continue;
      clear.bind(run_id, row.dataset, row.split, row.part).run();
      cleared = key;
    }
    Statement query(connection(), file(),
                    "INSERT OR REPLACE INTO eval_queries (run_id, dataset, split, part, query_id, "
                    "evidence_position, target_length) VALUES (?, ?, ?, ?, ?, ?, ?)");
    Statement metric(
        connection(), file(),
        "INSERT OR REPLACE INTO query_metrics (query, metric, value) VALUES (?, ?, ?)");
    for (const QueryResult& row : rows) {
      query
          .bind(run_id, row.dataset, row.split, row.part, row.query_id,
                row.evidence_position.value_or(std::nan("")), row.target_length)
          .run();
      const int64_t id = sqlite3_last_insert_rowid(connection());
      for (const auto& [name, value] : row.metrics) metric.bind(id, name, value).run();
    }
  });
}

bool QueryResults::has_query_results(int64_t run_id) const {
  Statement row(connection(), file(), "SELECT 1 FROM eval_queries WHERE run_id = ? LIMIT 1");
  return row.bind(run_id).next();
}

std::vector<QueryResult> QueryResults::query_results(int64_t run_id,
                                                     const std::string& dataset) const {
  Statement rows(connection(), file(),
                 "SELECT q.id, q.dataset, q.split, q.part, q.query_id, q.evidence_position, "
                 "q.target_length, m.metric, m.value FROM eval_queries q "
                 "JOIN query_metrics m ON m.query = q.id "
                 "WHERE q.run_id = ?1 AND (?2 = '' OR q.dataset = ?2) "
                 "ORDER BY q.dataset, q.split, q.part, q.query_id, m.metric");
  rows.bind(run_id, dataset);
  std::vector<QueryResult> out;
  int64_t current = -1;
  while (rows.next()) {
    if (rows.integer(0) != current) {
      current = rows.integer(0);
      QueryResult result{rows.text(1), rows.text(2), rows.text(3), rows.text(4), {}, {}, {}};
      if (!rows.is_null(5)) result.evidence_position = rows.real(5);
      if (!rows.is_null(6)) result.target_length = rows.integer(6);
      out.push_back(std::move(result));
    }
    out.back().metrics[rows.text(7)] = rows.real(8);
  }
  return out;
}

std::vector<QueryScore> QueryResults::query_scores(int64_t run_id, const std::string& dataset,
                                                   const std::string& split,
                                                   const std::string& metric) const {
  return select_rows(connection(), file(),
                     query_scores_sql(" AND q.run_id = ?4", " ORDER BY q.part, q.query_id"),
                     read_query_score, dataset, split, metric, run_id);
}

std::map<int64_t, std::vector<QueryScore>> QueryResults::query_scores(
    const std::string& dataset, const std::string& split, const std::string& metric,
    const std::vector<int64_t>& runs) const {
  std::string where;
  for (size_t i = 0; i < runs.size(); ++i)
    where += (i == 0 ? " AND q.run_id IN (" : ", ") + std::to_string(runs[i]);
  if (!runs.empty()) where += ")";
  Statement rows(connection(), file(), query_scores_sql(where));
  rows.bind(dataset, split, metric);
  std::map<int64_t, std::vector<QueryScore>> scores;
  while (rows.next()) scores[rows.integer(0)].push_back(read_query_score(rows));
  return scores;
}

std::vector<std::tuple<int64_t, std::string, std::string>> QueryResults::query_result_sets() const {
  return select_rows(connection(), file(),
                     "SELECT DISTINCT run_id, dataset, split FROM eval_queries ORDER BY 1, 2, 3",
                     [](const Statement& row) {
                       return std::tuple{row.integer(0), row.text(1), row.text(2)};
                     });
}

std::vector<std::string> QueryResults::query_metric_names(int64_t run_id,
                                                          const std::string& dataset,
                                                          const std::string& split) const {
  return select_rows(
      connection(), file(),
      "SELECT DISTINCT m.metric FROM query_metrics m WHERE m.query = (SELECT id FROM "
      "eval_queries WHERE run_id = ?1 AND dataset = ?2 AND split = ?3 LIMIT 1) ORDER BY 1",
      [](const Statement& row) { return row.text(0); }, run_id, dataset, split);
}

std::vector<std::tuple<std::string, std::string, std::string>>
QueryResults::positioned_query_metrics() const {
  return select_rows(connection(), file(),
                     "SELECT q.dataset, q.split, m.metric FROM eval_queries q "
                     "JOIN query_metrics m ON m.query = q.id WHERE q.part != '' AND "
                     "q.evidence_position IS NOT NULL GROUP BY q.dataset, q.split, m.metric "
                     "ORDER BY q.dataset, q.split, m.metric",
                     [](const Statement& row) {
                       return std::tuple{row.text(0), row.text(1), row.text(2)};
                     });
}

std::optional<double> QueryResults::query_metric(int64_t run_id, const std::string& query_id,
                                                 const std::string& metric,
                                                 const std::string& prefer_part) const {
  Statement row(connection(), file(),
                "SELECT m.value FROM eval_queries q JOIN query_metrics m ON m.query = q.id "
                "WHERE q.run_id = ? AND q.query_id = ? AND m.metric = ? "
                "ORDER BY q.part = ? DESC, q.part LIMIT 1");
  if (!row.bind(run_id, query_id, metric, prefer_part).next()) return std::nullopt;
  return row.real(0);
}

}  // namespace lmk
