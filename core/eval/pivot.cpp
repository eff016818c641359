#include "core/eval/pivot.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

namespace lmk {

namespace {

// A whole text that is a number, as its value.
std::optional<double> as_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

// A run evaluated again replaces its older namesakes, as in lmk study's table; the rest in run
// order.
void keep_newest_runs(std::vector<PivotInput>& results) {
  std::map<std::string, int64_t> newest;  // experiment + name -> the newest run of that name
  for (const PivotInput& r : results) {
    int64_t& latest = newest[r.experiment + '\n' + r.name];
    latest = std::max(latest, r.run);
  }
  results.erase(std::remove_if(results.begin(), results.end(),
                               [&](const PivotInput& r) {
                                 return newest[r.experiment + '\n' + r.name] != r.run;
                               }),
                results.end());
  std::stable_sort(results.begin(), results.end(),
                   [](const PivotInput& a, const PivotInput& b) { return a.run < b.run; });
}

// Every row is one variant of one experiment, whatever names it: averaging across variants
// merged different models (lmk-32 and lmk-var record the same pooling and granularity), and
// across experiments different studies. The pooling modes name the variant's params first.
std::string row_label(const PivotInput& r, PivotRows rows, bool several_experiments) {
  const std::string pooling = r.pooling.empty() ? "(no pooling)" : r.pooling;
  const std::string variant =
      with_experiment(r.experiment, run_variant(r.name, pooling), several_experiments);
  std::string params;
  switch (rows) {
    case PivotRows::Variant:
      return variant;
    case PivotRows::PoolingGranularity:
      params = r.granularity.empty() || r.granularity == "0"
                   ? pooling
                   : pooling + ", granularity " + r.granularity;
      break;
    case PivotRows::Pooling:
      params = pooling;
      break;
  }
  return params == variant ? params : params + " · " + variant;
}

}  // namespace

bool number_aware_less(const std::string& a, const std::string& b) {
  const std::optional<double> x = as_number(a), y = as_number(b);
  if (x.has_value() != y.has_value()) return !x.has_value();
  if (x && *x != *y) return *x < *y;
  return a < b;
}

std::string run_variant(const std::string& run_name, const std::string& pooling) {
  const size_t slash = run_name.rfind('/');
  return slash != std::string::npos && slash > 0 ? run_name.substr(0, slash) : pooling;
}

std::string with_experiment(const std::string& experiment, const std::string& name,
                            bool several_experiments) {
  return several_experiments ? experiment + ": " + name : name;
}

Pivot build_pivot(std::vector<PivotInput> results, PivotRows rows) {
  Pivot pivot;
  pivot.row_header = rows == PivotRows::Variant              ? "variant"
                     : rows == PivotRows::PoolingGranularity ? "pooling, granularity"
                                                             : "pooling";
  keep_newest_runs(results);
  std::set<std::string> experiments, splits;
  for (const PivotInput& r : results) {
    experiments.insert(r.experiment);
    splits.insert(r.split);
  }

  // Benchmarks: per-length groups where a dataset has them, else the runs' max_length when a
  // dataset was evaluated at several, else the dataset alone.
  auto dataset_label = [&](const PivotInput& r) {
    return splits.size() > 1 ? r.dataset + " (" + r.split + ")" : r.dataset;
  };
  std::map<std::string, int64_t> dataset_first_run;
  std::set<std::string> with_length_groups;
  std::map<std::string, std::set<std::string>> max_lengths;
  for (const PivotInput& r : results) {
    const std::string dataset = dataset_label(r);
    dataset_first_run.emplace(dataset, r.run);
    if (r.group_kind == "length") with_length_groups.insert(dataset);
    if (r.group_kind == "all") max_lengths[dataset].insert(r.max_length);
  }
  struct ColumnKey {
    int64_t first_run;
    std::string length, label;
  };
  std::map<std::string, ColumnKey> column_keys;
  auto column_of_result = [&](const PivotInput& r) -> std::string {
    const std::string dataset = dataset_label(r);
    std::string length;
    if (with_length_groups.count(dataset)) {
      if (r.group_kind != "length") return "";
      length = r.group_value;
    } else if (max_lengths[dataset].size() > 1) {
      length = r.max_length;
    }
    const std::string label = length.empty() ? dataset : dataset + "@" + length;
    column_keys.emplace(label, ColumnKey{dataset_first_run[dataset], length, label});
    return label;
  };
  auto row_of_result = [&](const PivotInput& r) {
    return row_label(r, rows, experiments.size() > 1);
  };

  struct Cell {
    double sum = 0;
    int count = 0;
    PivotCell source;
  };
  std::map<std::pair<std::string, std::string>, Cell> cells;
  for (const PivotInput& r : results) {
    const std::string column = column_of_result(r);
    if (column.empty()) continue;
    const std::string row = row_of_result(r);
    if (std::find(pivot.rows.begin(), pivot.rows.end(), row) == pivot.rows.end())
      pivot.rows.push_back(row);  // in the order of their first run
    Cell& cell = cells[{row, column}];
    cell.source.runs.push_back(r.run);
    cell.source.run_names.push_back(r.name);
    cell.source.dataset = r.dataset;
    cell.source.split = r.split;
    cell.source.group_kind = r.group_kind;
    cell.source.group_value = r.group_value;
    if (std::isnan(r.value)) continue;
    cell.sum += r.value;
    ++cell.count;
  }
  // The pooling modes list a pooling's variants together.
  if (rows != PivotRows::Variant) std::sort(pivot.rows.begin(), pivot.rows.end());
  std::vector<ColumnKey> ordered;
  for (const auto& [label, key] : column_keys) ordered.push_back(key);
  std::sort(ordered.begin(), ordered.end(), [](const ColumnKey& a, const ColumnKey& b) {
    if (a.first_run != b.first_run) return a.first_run < b.first_run;
    return number_aware_less(a.length, b.length);
  });
  for (const ColumnKey& key : ordered) pivot.columns.push_back(key.label);

  pivot.cells.assign(pivot.rows.size(), std::vector<PivotCell>(pivot.columns.size()));
  for (size_t i = 0; i < pivot.rows.size(); ++i) {
    for (size_t j = 0; j < pivot.columns.size(); ++j) {
      const auto cell = cells.find({pivot.rows[i], pivot.columns[j]});
      if (cell == cells.end()) continue;
      pivot.cells[i][j] = cell->second.source;
      if (cell->second.count > 0) pivot.cells[i][j].value = cell->second.sum / cell->second.count;
    }
  }
  return pivot;
}

ComparisonTable compare_pivot(const Pivot& pivot, const QueryScoreSource& scores,
                              const ComparisonOptions& options) {
  std::vector<std::vector<ComparisonCell>> cells(pivot.rows.size());
  for (size_t i = 0; i < pivot.rows.size(); ++i) {
    for (size_t j = 0; j < pivot.columns.size(); ++j) {
      const PivotCell& source = pivot.cells[i][j];
      ComparisonCell cell;
      cell.present = !source.runs.empty();
      cell.stored_mean = source.value;
      if (cell.present && source.runs.size() > 1) {
        cell.why_no_scores =
            "A cell that averages several runs shows their mean without an interval or tests";
      } else if (cell.present) {
        if (auto all = scores(source.runs[0], source.dataset, source.split)) {
          std::vector<QueryScore> group =
              select_query_group(*all, source.group_kind, source.group_value);
          if (!group.empty()) cell.scores = std::move(group);
        }
      }
      cells[i].push_back(std::move(cell));
    }
  }
  return compare_table(pivot.rows, pivot.columns, cells, options);
}

}  // namespace lmk
