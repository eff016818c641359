#pragma once

// The job monitor (issue 7, view 2): the store's jobs with status, progress bar, ETA and latest
// line, refreshed every 2 s off the GUI thread; for the selected run its live loss / lr /
// tokens-per-second curves and the tail of its log; Cancel, Requeue and Open log. Jobs are
// started and stopped through the lmk CLI (JobLauncher); the monitor only reads the store. Its
// panels (widgets/job_panels.h) own their controls: the actions bar, the curves, the log tail.

#include <QList>
#include <QString>

#include "widgets/job_model.h"
#include "widgets/job_panels.h"
#include "widgets/store_view.h"

class QCustomPlot;
class QLabel;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;
class QTimer;

namespace lmk::widgets {

class JobLauncher;

class JobMonitorView : public StoreView {
  Q_OBJECT
 public:
  explicit JobMonitorView(QWidget* parent = nullptr);

  QString title() const override { return tr("Jobs"); }
  void set_store(const QString& db_path) override;
  // Reads the store again, keeping the selection.
  void refresh() override;

  // The selected run (0: none), and selecting one (it must be shown).
  qint64 selected_run() const { return selected_run_; }
  bool select_run(qint64 run_id);
  // Cancels the selected jobs that can be; requeues the selected FAILED / KILLED job's study.
  void cancel_selected();
  void requeue_selected();

  // What is shown, for tests and screenshots.
  const JobModel* model() const { return model_; }
  QTableView* table() const { return table_; }
  QCustomPlot* curves() const { return curves_->plot(); }
  QString log_text() const;
  // The text shown instead of the table ("" while the table is shown).
  QString empty_text() const;
  // The line under the buttons (what the last cancel / requeue did).
  QString message_text() const;
  JobLauncher* launcher() const { return launcher_; }

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  // The constructor's parts, in the order the widgets are made.
  void build_table();
  void connect_controls();

  void load(bool clear);
  void show_snapshot(const JobSnapshot& snapshot, const QString& error);
  void selection_changed();
  void load_details(bool from_start);
  void show_curves(const RunCurves& curves);
  void update_buttons();
  void show_message(const QString& text, bool error = false);
  void finish_loaded();
  void open_log();
  void export_table();

  JobModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;
  QTableView* table_ = nullptr;
  QStackedWidget* pages_ = nullptr;
  QLabel* empty_ = nullptr;
  JobActionsBar* actions_ = nullptr;
  TrainingCurvesPanel* curves_ = nullptr;
  LogTail* log_ = nullptr;
  QLabel* message_ = nullptr;
  QTimer* timer_ = nullptr;
  JobLauncher* launcher_ = nullptr;

  int generation_ = 0;        // set_store() drops the loads of the store before
  bool loading_ = false;      // a table load runs (a tick then skips)
  bool want_loaded_ = false;  // loaded() is due once the table and details are shown
  int details_pending_ = 0;
  int details_generation_ = 0;  // a new selection drops the detail loads of the one before
  bool curves_loading_ = false, log_loading_ = false;
  bool auto_select_ = true;  // the first load selects a job worth looking at
  qint64 selected_run_ = 0;
  QString selected_status_;
  qint64 last_sync_ms_ = 0;
};

}  // namespace lmk::widgets
