#pragma once

// The results browser (issue 7, view 3): a filter bar (RunsFilterBar) over three tabs — the runs ×
// benchmarks table (lazy, sorted and filtered in SQL), the pivot in the paper's layout
// (PivotPanel: intervals, marks against a baseline row, the significant best per column) and the
// config diff of the selected runs (ConfigDiffPanel). Exports the tables as CSV and the selected
// runs as MTEB results; Ctrl+C copies a table's selection as tab-separated text. The view reads
// the store off the GUI thread and hands each panel what it shows; the pivot's and the diff's
// reads are in results_view_tabs.cpp, the exports in results_view_export.cpp.

#include <QList>
#include <QString>
#include <QStringList>

#include <functional>

#include "widgets/config_diff_panel.h"
#include "widgets/pivot_panel.h"
#include "widgets/results_model.h"
#include "widgets/runs_filter_bar.h"
#include "widgets/store_view.h"

class QLabel;
class QMenu;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QTimer;

namespace lmk::widgets {

class ResultsView : public StoreView {
  Q_OBJECT
 public:
  explicit ResultsView(QWidget* parent = nullptr);

  QString title() const override;
  void set_store(const QString& db_path) override;
  // Reads the store again keeping the filter, sort, metric, selection and scroll position.
  void refresh() override;

  // Sets the filter bar's text and applies it at once (see RunFilter for the syntax).
  void set_filter_text(const QString& text);
  // Shows `metric` in the benchmark columns and the pivot, when the store has it.
  void set_metric(const QString& metric);
  // The runs table's layout (the "Long" box): a row per run and benchmark, or a column per
  // benchmark; remembered in the settings.
  void set_long_format(bool long_format);
  void set_pivot_rows(PivotRows rows);
  // The pivot row marked against (empty: none); the CLS row until one is chosen.
  void set_pivot_baseline(const QString& row);
  // Selects the runs with these ids (fetching rows until they are found); the diff follows.
  void select_runs(const QList<qlonglong>& ids);
  QList<qlonglong> selected_run_ids() const;

  // The exports behind the Export menu, without its dialogs; they throw std::runtime_error.
  void export_runs_csv(const QString& path);
  void export_pivot_csv(const QString& path);
  // The pivot's cells and tests as lmk compare --format csv writes them.
  void export_pivot_tests_csv(const QString& path);
  // The pivot as lmk compare / lmk export write it: a LaTeX table (booktabs, the significant best
  // bold, the legend as caption) or a Markdown one with the legend under it.
  void export_pivot_latex(const QString& path);
  void export_pivot_markdown(const QString& path);
  // Writes the selected runs' results as MTEB files under `dir`, off the GUI thread; emits
  // mteb_exported when done.
  void export_mteb(const QString& dir);

  RunsTableModel* runs_model() const { return runs_model_; }
  PivotModel* pivot_model() const { return pivot_->model(); }
  ConfigDiffModel* diff_model() const { return diff_->model(); }
  QTableView* runs_table() const { return runs_table_; }
  QTabWidget* tabs() const { return tabs_; }
  // The message shown instead of the tables (no store, no runs, an unreadable store); empty while
  // the tables show.
  QString empty_state() const;

 protected:
  // A hidden view finishes fetching. (This was for the Qt SQL model, whose half-fetched query held
  // a WAL snapshot and stopped checkpoints; the core's pages hold none. Kept: it costs about a
  // second at 10 000 runs, less than the Qt SQL model took, and the view's tests assert it.)
  void hideEvent(QHideEvent* event) override;

 signals:
  // The pivot of the current filter, metric and rows is shown.
  void pivot_ready();
  // The config diff of the current selection is shown.
  void diff_ready();
  void mteb_exported(const QStringList& files, const QString& error);
  // "Compare" with two runs selected: the comparison panel should show them.
  void compare_requested(qint64 a, qint64 b);

 private:
  // The constructor's parts: the Export menu's actions, what each panel's signals change.
  void add_exports(QMenu* menu);
  void connect_panels();

  void load(bool keep_state);
  void apply_filter();
  void reload_runs(bool keep_scroll);
  void compare_selected();
  void start_pivot();
  void start_count();
  void start_diff();
  void select_rows(const QList<qlonglong>& ids, bool fetch);
  void show_message(const QString& text);
  // Emits loaded() when this load is complete (`pivot_shown`: the pivot just arrived, or will
  // not come).
  void finish_loading(bool pivot_shown);
  // The metric columns wide enough for their intervals, once computed.
  void widen_metric_columns();
  // After a reload: the text columns capped (when `resized` to their contents), the run's
  // details shown after the scores.
  void fit_run_columns(bool resized);
  // Asks for a file (of `filter`'s kind; CSV when empty) and writes it with `write`.
  void ask_export_file(const QString& caption, const QString& suggested_name,
                       const std::function<void(const QString&)>& write,
                       const QString& filter = QString());
  void ask_export_mteb();

  StoreSummary summary_;
  // loaded() is due once the pivot of this load is shown and the runs table's intervals are in.
  bool loading_ = false;
  bool pivot_due_ = false;
  int load_generation_ = 0;
  int pivot_generation_ = 0;
  int diff_generation_ = 0;
  int count_generation_ = 0;
  QStringList shown_headers_;  // columns are sized to their contents when these change

  QStackedWidget* stack_ = nullptr;
  QLabel* message_ = nullptr;
  RunsFilterBar* bar_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QTableView* runs_table_ = nullptr;
  PivotPanel* pivot_ = nullptr;
  ConfigDiffPanel* diff_ = nullptr;
  QTimer* diff_timer_ = nullptr;
  RunsTableModel* runs_model_ = nullptr;
};

}  // namespace lmk::widgets
