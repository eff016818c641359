#pragma once

// A unit of the results store (core/store/results_store.h). The metric series runs log while they
// train (the metrics table and each key's latest value).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/store/store_runs.h"
#include "core/store/store_unit.h"

namespace lmk {

// One point of a metric series (value NaN is kept).
struct Metric {
  std::string key;
  int64_t step = 0;
  double value = 0;
  std::string time;  // ISO-8601 UTC of logging
};

// One metric's points of a run after a step, thinned to about max_points (every k-th and the
// last); NaN values left out.
struct MetricCurve {
  std::string key;
  std::vector<int64_t> steps;
  std::vector<double> values;
  std::vector<double> seconds;  // per point, since the run started (its first metric when it
                                // has no start); NaN when unknown
  int64_t last_step = -1;       // the last step read, NaN or not
};

class MetricSeries : public virtual StoreUnit {
 public:
  // Appends one step of metrics and updates each key's latest value (the highest step).
  void log_metrics(int64_t run_id, int64_t step,
                   const std::vector<std::pair<std::string, double>>& values);
  // The value of each metric key at its highest step, by key.
  std::vector<Metric> latest_metrics(int64_t run_id) const;
  // One metric's points in step order.
  std::vector<Metric> metric_series(int64_t run_id, const std::string& key) const;
  // The runs that logged metric `key`, by id, and every metric key those runs logged, sorted.
  std::vector<RunSummary> runs_logging(const std::string& key) const;
  std::vector<std::string> metric_keys_of_runs_logging(const std::string& key) const;
  // The run's curves of each (key, after step), each after its own step, in one read
  // transaction (one snapshot of the store); keys without points after their step are left out.
  std::vector<MetricCurve> metric_curves(int64_t run_id,
                                         const std::vector<std::pair<std::string, int64_t>>& keys,
                                         int64_t max_points) const;
};

}  // namespace lmk
