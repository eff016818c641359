// ResultsView's pivot and config-diff tabs (widgets/results_view.h): each read off the GUI thread.
#include "widgets/results_view.h"

#include <QComboBox>
#include <QLabel>
#include <QSignalBlocker>
#include <QTableView>

#include <algorithm>

#include "widgets/store_connection.h"

namespace lmk::widgets {
namespace {

// The diff shows this many runs at most (a table with a column per run).
constexpr int kMaxDiffRuns = 50;

}  // namespace

void ResultsView::start_pivot() {
  if (db_path_.isEmpty() || summary_.run_count == 0) return;
  const int generation = ++pivot_generation_;
  const RunFilter filter = current_filter();
  const QString metric = metric_combo_->currentText();
  const auto rows = static_cast<PivotRows>(pivot_rows_combo_->currentData().toInt());
  pivot_note_->setText(
      metric.isEmpty()
          ? tr("No evaluation results in this store yet")
          : tr("%1 of the eval runs the filter selects: mean ± half its 95 % interval over the "
               "queries; ▲ / ▼ against the baseline; * and bold: the best in the column, "
               "significantly above every other row (else \"(tie)\": the highest, tied); hover a "
               "cell "
               "for its N, "
               "interval and runs")
                .arg(metric));
  const QString baseline = pivot_baseline_;
  const bool chosen = pivot_baseline_chosen_;
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
        {
          const QSignalBlocker block(pivot_baseline_combo_);
          pivot_baseline_combo_->clear();
          pivot_baseline_combo_->addItem(tr("(none)"), QString());
          for (const QString& row : table.rows) pivot_baseline_combo_->addItem(row, row);
          pivot_baseline_combo_->setCurrentIndex(
              std::max(0, pivot_baseline_combo_->findData(table.baseline)));
        }
        const int columns = pivot_model_->columnCount();
        if (pivot_model_->set_table(std::move(table)) && pivot_model_->columnCount() != columns)
          pivot_table_->resizeColumnsToContents();
        pivot_legend_->setText(pivot_model_->legend());
        emit pivot_ready();
        finish_loading(true);
      });
}

void ResultsView::start_diff() {
  const int generation = ++diff_generation_;
  QList<qlonglong> ids = selected_run_ids();
  const int selected = ids.size();
  if (ids.size() > kMaxDiffRuns) ids = ids.mid(0, kMaxDiffRuns);
  if (ids.size() < 2 || db_path_.isEmpty()) {
    diff_model_->set_diff(ConfigDiff());
    diff_note_->setText(
        tr("Select two or more runs in the Runs tab (Ctrl- or Shift-click) to compare their "
           "configs; differing values are highlighted"));
    return;
  }
  diff_note_->setText(tr("Comparing %1 runs…").arg(ids.size()));
  load_in_background<ConfigDiff>(
      this, db_path_, [ids](const ResultsStore& db) { return compute_config_diff(db, ids); },
      [this, generation, selected](ConfigDiff diff, const QString& error) {
        if (generation != diff_generation_) return;
        if (!error.isEmpty()) emit status_message(error);
        int differing = 0;
        for (bool differs : diff.differs) differing += differs ? 1 : 0;
        QString note = tr("%1 runs: %2 of %3 keys differ (highlighted)")
                           .arg(diff.run_ids.size())
                           .arg(differing)
                           .arg(diff.keys.size());
        if (selected > diff.run_ids.size())
          note += tr("; the first %1 of the %2 selected runs").arg(kMaxDiffRuns).arg(selected);
        diff_note_->setText(note);
        diff_model_->set_diff(std::move(diff));
        diff_table_->resizeColumnsToContents();
        emit diff_ready();
      });
}

void ResultsView::set_pivot_rows(PivotRows rows) {
  const int index = pivot_rows_combo_->findData(static_cast<int>(rows));
  if (index == pivot_rows_combo_->currentIndex())
    start_pivot();
  else
    pivot_rows_combo_->setCurrentIndex(index);
}

void ResultsView::set_pivot_baseline(const QString& row) {
  pivot_baseline_ = row;
  pivot_baseline_chosen_ = true;
  start_pivot();
}

}  // namespace lmk::widgets
