// Reads across runs (core/store/results_store.h): what the workbench's plots of several runs
// read, each run named by its experiment, name, pooling and evaluated length.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "core/store/results_store.h"
#include "core/store/sqlite_statement.h"

namespace lmk {

using namespace store_sql;

namespace {

// The columns of a RunLabel for rows of table alias `t` (a run_id column): run id, experiment,
// run name, pooling, evaluated length; the joins they need follow the FROM of `t`.
constexpr const char* kRunLabelColumns =
    "r.id, x.name, r.name, COALESCE(pooling.value, train_pooling.value, 'unknown'), "
    "COALESCE(CAST(max_length.value AS INTEGER), 0)";
std::string run_label_joins(const std::string& table) {
  return " JOIN runs r ON r.id = " + table +
         ".run_id JOIN experiments x ON x.id = r.experiment_id "
         "LEFT JOIN params pooling ON pooling.run_id = r.id AND pooling.key = 'pooling' "
         "LEFT JOIN params train_pooling "
         "  ON train_pooling.run_id = r.id AND train_pooling.key = 'train.pooling' "
         "LEFT JOIN params max_length ON max_length.run_id = r.id AND max_length.key = "
         "'max_length' ";
}

RunLabel read_run_label(const Statement& row) {
  return {row.integer(0), row.text(1), row.text(2), row.text(3), row.integer(4)};
}

}  // namespace

std::vector<std::tuple<std::string, std::string, std::string>> ResultsStore::eval_result_metrics()
    const {
  return select_rows(
      db_.get(), path_,
      "SELECT dataset, split, metric FROM eval_results GROUP BY dataset, split, metric "
      "ORDER BY dataset, split, metric",
      [](const Statement& row) {
        return std::tuple{row.text(0), row.text(1), row.text(2)};
      });
}

std::vector<RunResultPoint> ResultsStore::result_points(const std::string& dataset,
                                                        const std::string& split,
                                                        const std::string& metric) const {
  return select_rows(
      db_.get(), path_,
      std::string("SELECT ") + kRunLabelColumns +
          ", e.group_kind, e.group_value, e.value FROM eval_results e" + run_label_joins("e") +
          "WHERE e.dataset = ?1 AND e.split = ?2 AND e.metric = ?3 "
          "AND (e.group_kind IN ('all', 'length', 'position') OR e.group_kind LIKE 'position@%') "
          "ORDER BY e.run_id",
      [](const Statement& row) {
        return RunResultPoint{read_run_label(row), row.text(5), row.text(6), row.real(7)};
      },
      dataset, split, metric);
}

std::vector<std::tuple<std::string, int64_t, int64_t, std::string>>
ResultsStore::attention_profile_keys() const {
  return select_rows(db_.get(), path_,
                     "SELECT dataset, layer, head, length_group FROM attention_profiles "
                     "GROUP BY dataset, layer, head, length_group ORDER BY dataset, layer, head, "
                     "length_group",
                     [](const Statement& row) {
                       return std::tuple{row.text(0), row.integer(1), row.integer(2), row.text(3)};
                     });
}

std::vector<RunAttentionBin> ResultsStore::attention_profile_bins(const std::string& dataset,
                                                                  int64_t layer,
                                                                  int64_t head) const {
  return select_rows(
      db_.get(), path_,
      std::string("SELECT ") + kRunLabelColumns +
          ", a.length_group, a.bin_start, a.bin_end, a.weight FROM attention_profiles a" +
          run_label_joins("a") +
          "WHERE a.dataset = ?1 AND a.layer = ?2 AND a.head = ?3 "
          "ORDER BY a.run_id, a.length_group, a.bin",
      [](const Statement& row) {
        return RunAttentionBin{read_run_label(row), row.text(5), row.real(6), row.real(7),
                               row.real(8)};
      },
      dataset, layer, head);
}

std::vector<std::string> ResultsStore::attention_profile_models(const std::string& dataset) const {
  return select_rows(
      db_.get(), path_,
      "SELECT DISTINCT p.value FROM params p WHERE p.key = 'model' AND p.run_id IN "
      "(SELECT DISTINCT run_id FROM attention_profiles WHERE dataset = ?1) ORDER BY p.value",
      [](const Statement& row) { return row.text(0); }, dataset);
}

int64_t ResultsStore::count_runs(const RunSelection& selection) const {
  const SqlCondition where = run_selection_condition(selection);
  Statement count(db_.get(), path_,
                  "SELECT count(*) FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                  "WHERE " +
                      where.sql);
  return count.bind_values(where.bindings).next() ? count.integer(0) : 0;
}

std::vector<int64_t> ResultsStore::selected_runs(const RunSelection& selection) const {
  const SqlCondition where = run_selection_condition(selection);
  Statement rows(db_.get(), path_,
                 "SELECT r.id FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE " +
                     where.sql + " ORDER BY r.id");
  rows.bind_values(where.bindings);
  std::vector<int64_t> ids;
  while (rows.next()) ids.push_back(rows.integer(0));
  return ids;
}

std::vector<PivotSourceRow> ResultsStore::pivot_source_rows(
    const std::string& metric, const RunSelection& selection,
    const std::vector<int64_t>& runs) const {
  const SqlCondition selected = run_selection_condition(selection);
  std::string where = " AND " + selected.sql;
  for (size_t i = 0; i < runs.size(); ++i)
    where += (i == 0 ? " AND r.id IN (" : ", ") + std::to_string(runs[i]);
  if (!runs.empty()) where += ")";
  const auto param = [](const char* key) {
    return std::string("COALESCE((SELECT value FROM params WHERE run_id = r.id AND key = '") + key +
           "'), '')";
  };
  // The dataset condition selects nothing by itself: it lets SQLite seek the (dataset, metric)
  // index instead of reading every result (1 000 000 rows: 0.06 s instead of 1.8 s).
  Statement rows(db_.get(), path_,
                 "SELECT r.id, e.name, r.name, " + param("pooling") + ", " + param("granularity") +
                     ", " + param("max_length") +
                     ", er.dataset, er.split, er.group_kind, er.group_value, er.value "
                     "FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                     "JOIN eval_results er ON er.run_id = r.id "
                     "WHERE er.dataset IN (SELECT DISTINCT dataset FROM eval_results) AND "
                     "er.metric = ? AND er.group_kind IN ('all', 'length')" +
                     where + " ORDER BY r.id");
  std::vector<SqlValue> bindings{metric};
  bindings.insert(bindings.end(), selected.bindings.begin(), selected.bindings.end());
  rows.bind_values(bindings);
  std::vector<PivotSourceRow> out;
  while (rows.next())
    out.push_back(
        {rows.integer(0),
         rows.text(1),
         rows.text(2),
         rows.text(3),
         rows.text(4),
         rows.text(5),
         {rows.text(6), rows.text(7), metric, rows.real(10), rows.text(8), rows.text(9)}});
  return out;
}

std::vector<std::string> ResultsStore::param_keys() const {
  return select_rows(db_.get(), path_, "SELECT DISTINCT key FROM params ORDER BY key",
                     [](const Statement& row) { return row.text(0); });
}

StoredBenchmarks ResultsStore::benchmarks() const {
  // DISTINCT over the (dataset, metric) index skips ahead instead of reading every result; the
  // splits and first run of a dataset are a range of that index.
  std::map<std::string, std::string> a_metric_of;  // dataset -> one of its metrics
  std::set<std::string> metrics;
  Statement pairs(db_.get(), path_, "SELECT DISTINCT dataset, metric FROM eval_results");
  while (pairs.next()) {
    a_metric_of[pairs.text(0)] = pairs.text(1);
    metrics.insert(pairs.text(1));
  }
  StoredBenchmarks out;
  Statement splits(db_.get(), path_,
                   "SELECT split, MIN(run_id) FROM eval_results WHERE dataset = ? AND metric = ? "
                   "GROUP BY split");
  for (const auto& [dataset, metric] : a_metric_of) {
    splits.bind(dataset, metric);
    while (splits.next()) out.benchmarks.push_back({dataset, splits.text(0), splits.integer(1)});
  }
  std::stable_sort(out.benchmarks.begin(), out.benchmarks.end(),
                   [](const StoredBenchmark& a, const StoredBenchmark& b) {
                     return std::tie(a.first_run, a.dataset, a.split) <
                            std::tie(b.first_run, b.dataset, b.split);
                   });
  out.metrics.assign(metrics.begin(), metrics.end());
  return out;
}

std::vector<std::pair<int64_t, std::string>> ResultsStore::training_lengths() const {
  return select_rows(
      db_.get(), path_,
      "SELECT CAST(p.value AS INTEGER) AS tokens, r.name FROM params p JOIN runs r ON r.id = "
      "p.run_id WHERE ((r.kind = 'train' AND p.key = 'train.passage_max_length') "
      "OR (r.kind = 'pretrain' AND p.key = 'train.max_length')) AND tokens > 0 "
      "ORDER BY tokens, r.id",
      [](const Statement& row) {
        return std::pair{row.integer(0), row.text(1)};
      });
}

std::vector<RunSummary> ResultsStore::runs_logging(const std::string& key) const {
  // metric_latest holds a row per run and key: small, and what a run logged at a glance.
  return select_rows(
      db_.get(), path_,
      "SELECT r.id, e.name, r.name, r.kind, r.status FROM runs r JOIN experiments e ON e.id = "
      "r.experiment_id WHERE EXISTS (SELECT 1 FROM metric_latest m WHERE m.run_id = r.id AND "
      "m.key = ?1) ORDER BY r.id",
      [](const Statement& row) {
        return RunSummary{row.integer(0), row.text(1), row.text(2), row.text(3), row.text(4)};
      },
      key);
}

std::vector<std::string> ResultsStore::metric_keys_of_runs_logging(const std::string& key) const {
  return select_rows(
      db_.get(), path_,
      "SELECT DISTINCT key FROM metric_latest WHERE run_id IN (SELECT run_id FROM "
      "metric_latest WHERE key = ?1) ORDER BY key",
      [](const Statement& row) { return row.text(0); }, key);
}

std::vector<MetricCurve> ResultsStore::metric_curves(
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
  } transaction(db_.get(), path_);
  Statement start(db_.get(), path_,
                  "SELECT COALESCE(NULLIF(started_at, ''), (SELECT MIN(time) FROM metrics WHERE "
                  "run_id = ?1)) FROM runs WHERE id = ?1");
  const std::string started = start.bind(run_id).next() ? start.text(0) : "";
  Statement count(db_.get(), path_,
                  "SELECT COUNT(*) FROM metrics WHERE run_id = ? AND key = ? AND step > ?");
  Statement points(db_.get(), path_,
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
