// Metric series (core/store/store_metrics.h).
#include "core/store/store_metrics.h"

#include <sqlite3.h>
#include <algorithm>

#include "core/store/sqlite_statement.h"

namespace lmk {

using namespace store_sql;

namespace {

Metric read_metric(const Statement& row) {
  return {row.text(0), row.integer(1), row.real(2), row.text(3)};
}

}  // namespace

void MetricSeries::log_metrics(int64_t run_id, int64_t step,
                               const std::vector<std::pair<std::string, double>>& values) {
  for (const auto& value : values) require_nonempty(value.first, "metric key");
  write_run_transaction(connection(), file(), run_id, [&] {
    Statement point(connection(), file(),
                    "INSERT INTO metrics (run_id, key, step, value) VALUES (?, ?, ?, ?)");
    // The latest value is the point with the highest step (a later one at the same step wins).
    Statement latest(connection(), file(),
                     "INSERT INTO metric_latest (run_id, key, step, value, time) "
                     "SELECT run_id, key, step, value, time FROM metrics WHERE rowid = ? "
                     "ON CONFLICT (run_id, key) DO UPDATE SET step = excluded.step, "
                     "value = excluded.value, time = excluded.time "
                     "WHERE excluded.step >= metric_latest.step");
    for (const auto& [key, value] : values) {
      point.bind(run_id, key, step, value).run();
      latest.bind(sqlite3_last_insert_rowid(connection())).run();
    }
  });
}

std::vector<Metric> MetricSeries::latest_metrics(int64_t run_id) const {
  return select_rows(
      connection(), file(),
      "SELECT key, step, value, time FROM metric_latest WHERE run_id = ? ORDER BY key", read_metric,
      run_id);
}

std::vector<Metric> MetricSeries::metric_series(int64_t run_id, const std::string& key) const {
  return select_rows(connection(), file(),
                     "SELECT key, step, value, time FROM metrics WHERE run_id = ? AND key = ? "
                     "ORDER BY step, rowid",
                     read_metric, run_id, key);
}

std::vector<RunSummary> MetricSeries::runs_logging(const std::string& key) const {
  // metric_latest holds a row per run and key: small, and what a run logged at a glance.
  return select_rows(
      connection(), file(),
      "SELECT r.id, e.name, r.name, r.kind, r.status FROM runs r JOIN experiments e ON e.id = "
      "r.experiment_id WHERE EXISTS (SELECT 1 FROM metric_latest m WHERE m.run_id = r.id AND "
      "m.key = ?1) ORDER BY r.id",
      [](const Statement& row) {
        return RunSummary{row.integer(0), row.text(1), row.text(2), row.text(3), row.text(4)};
      },
      key);
}

std::vector<std::string> MetricSeries::metric_keys_of_runs_logging(const std::string& key) const {
  return select_rows(
      connection(), file(),
      "SELECT DISTINCT key FROM metric_latest WHERE run_id IN (SELECT run_id FROM "
      "metric_latest WHERE key = ?1) ORDER BY key",
      [](const Statement& row) { return row.text(0); }, key);
}

std::vector<MetricCurve> MetricSeries::metric_curves(
    int64_t run_id, const std::vector<std::pair<std::string, int64_t>>& keys,
    int64_t max_points) const {
  const int64_t most = std::max<int64_t>(1, max_points);
  // One read transaction: every key from the same snapshot of the store. Each key is an ordered
  // scan of the (run_id, key, step) index, thinned here to every stride-th point and its last
  // one (so the curve ends where the run is); a window function over all keys at once sorts
  // millions of rows instead. Ended however the reads end, so no snapshot stays pinned.
  struct ReadTransaction {
    sqlite3* db;
    const std::string& path;
    ReadTransaction(sqlite3* db, const std::string& path) : db(db), path(path) {
      execute(db, path, "BEGIN");
    }
    ~ReadTransaction() { sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr); }
  } transaction(connection(), file());
  Statement start(connection(), file(),
                  "SELECT COALESCE(NULLIF(started_at, ''), (SELECT MIN(time) FROM metrics WHERE "
                  "run_id = ?1)) FROM runs WHERE id = ?1");
  const std::string started = start.bind(run_id).next() ? start.text(0) : "";
  Statement count(connection(), file(),
                  "SELECT COUNT(*) FROM metrics WHERE run_id = ? AND key = ? AND step > ?");
  Statement points(connection(), file(),
                   "SELECT step, value, (julianday(time) - julianday(?1)) * 86400.0 FROM metrics "
                   "WHERE run_id = ?2 AND key = ?3 AND step > ?4 ORDER BY step");
  std::vector<MetricCurve> curves;
  for (const auto& [key, after] : keys) {
    const int64_t total = count.bind(run_id, key, after).next() ? count.integer(0) : 0;
    if (total == 0) continue;
    const int64_t stride = (total + most - 1) / most;
    MetricCurve curve;
    curve.key = key;
    points.bind(started, run_id, key, after);
    for (int64_t n = 0; points.next(); ++n) {
      const int64_t step = points.integer(0);
      curve.last_step = std::max(curve.last_step, step);
      if (n % stride != 0 && n != total - 1) continue;
      if (points.is_null(1)) continue;  // NaN
      curve.steps.push_back(step);
      curve.values.push_back(points.real(1));
      curve.seconds.push_back(points.real(2));
    }
    curves.push_back(std::move(curve));
  }
  return curves;
}

}  // namespace lmk
