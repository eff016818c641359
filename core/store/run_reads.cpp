// Reads across runs (core/store/results_store.h): what the workbench's plots of several runs
// read, each run named by its experiment, name, pooling and evaluated length.
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

}  // namespace lmk
