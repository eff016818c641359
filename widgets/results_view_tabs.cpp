// ResultsView's pivot and config-diff tabs (widgets/results_view.h): each read off the GUI thread
// and shown by its panel (PivotPanel, ConfigDiffPanel).
#include "widgets/results_view.h"

#include "widgets/store_connection.h"

namespace lmk::widgets {

void ResultsView::start_pivot() {
  if (db_path_.isEmpty() || summary_.run_count == 0) return;
  const int generation = ++pivot_generation_;
  const RunFilter filter = bar_->filter();
  const QString metric = bar_->metric();
  const PivotRows rows = pivot_->rows();
  pivot_->describe(metric);
  const QString baseline = pivot_->baseline();
  const bool chosen = pivot_->baseline_chosen();
  load_in_background<PivotTable>(
      this, db_path_,
      [filter, metric, rows, baseline, chosen](const ResultsStore& db) {
        PivotTable table = compute_pivot(db, filter, metric, rows, baseline);
        // Until the user picks one, the baseline is the CLS row (the paper's comparison).
        if (!chosen && table.baseline.isEmpty()) {
          for (const QString& row : table.rows) {
            if (row == QLatin1String("cls") || row.startsWith(QLatin1String("cls "))) {
              table = compute_pivot(db, filter, metric, rows, row);
              break;
            }
          }
        }
        return table;
      },
      [this, generation](PivotTable table, const QString& error) {
        if (generation != pivot_generation_) return;
        if (!error.isEmpty()) emit status_message(error);
        pivot_->show_table(std::move(table));
        emit pivot_ready();
        finish_loading(true);
      });
}

void ResultsView::start_diff() {
  const int generation = ++diff_generation_;
  QList<qlonglong> ids = selected_run_ids();
  const int selected = ids.size();
  if (ids.size() > ConfigDiffPanel::kMaxRuns) ids = ids.mid(0, ConfigDiffPanel::kMaxRuns);
  if (ids.size() < 2 || db_path_.isEmpty()) {
    diff_->show_hint();
    return;
  }
  diff_->show_pending(ids.size());
  load_in_background<ConfigDiff>(
      this, db_path_, [ids](const ResultsStore& db) { return compute_config_diff(db, ids); },
      [this, generation, selected](ConfigDiff diff, const QString& error) {
        if (generation != diff_generation_) return;
        if (!error.isEmpty()) emit status_message(error);
        diff_->show_diff(std::move(diff), selected);
        emit diff_ready();
      });
}

void ResultsView::set_pivot_rows(PivotRows rows) {
  if (rows == pivot_->rows())
    start_pivot();
  else
    pivot_->set_rows(rows);
}

void ResultsView::set_pivot_baseline(const QString& row) {
  pivot_->set_baseline(row);
  start_pivot();
}

}  // namespace lmk::widgets
