#include "widgets/results_view.h"

#include <QHash>
#include <QHeaderView>
#include <QItemSelection>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QScrollBar>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>

#include "widgets/results_table.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {
namespace {

// The runs table's text columns (experiment, name, benchmark, host, error) stop here.
constexpr int kMaxTextWidth = 220;

}  // namespace

ResultsView::ResultsView(QWidget* parent) : StoreView(parent) {
  runs_model_ = new RunsTableModel(this);
  bar_ = new RunsFilterBar(this);
  add_exports(bar_->export_menu());
  runs_table_ = make_results_table(runs_model_, this);
  runs_table_->setSortingEnabled(true);
  runs_table_->horizontalHeader()->setSortIndicator(RunsTableModel::IdColumn, Qt::AscendingOrder);
  runs_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  pivot_ = new PivotPanel(this);
  diff_ = new ConfigDiffPanel(this);

  tabs_ = new QTabWidget(this);
  tabs_->addTab(runs_table_, tr("Runs"));
  tabs_->addTab(pivot_, tr("Pivot"));
  tabs_->addTab(diff_, tr("Config diff"));

  auto* content = new QWidget(this);
  auto* content_layout = new QVBoxLayout(content);
  content_layout->setContentsMargins(0, 0, 0, 0);
  content_layout->addWidget(bar_);
  content_layout->addWidget(tabs_, 1);

  message_ = new QLabel(this);
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  stack_ = new QStackedWidget(this);
  stack_->addWidget(message_);
  stack_->addWidget(content);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(stack_);

  connect_panels();

  show_message(
      tr("No results store open — File → Open a results.db, or design a study in the "
         "Designer tab"));
  start_diff();
}

// The Export menu: the runs table and the pivot as files, the selected runs as MTEB results.
void ResultsView::add_exports(QMenu* menu) {
  menu->addAction(tr("Runs table as CSV…"), this, [this] {
    ask_export_file(tr("Export the runs table"), QStringLiteral("runs.csv"),
                    [this](const QString& path) { export_runs_csv(path); });
  });
  menu->addAction(tr("Pivot as CSV…"), this, [this] {
    ask_export_file(tr("Export the pivot"), QStringLiteral("pivot.csv"),
                    [this](const QString& path) { export_pivot_csv(path); });
  });
  menu->addAction(tr("Pivot with intervals and tests as CSV…"), this, [this] {
    ask_export_file(tr("Export the pivot's intervals and tests"), QStringLiteral("pivot-tests.csv"),
                    [this](const QString& path) { export_pivot_tests_csv(path); });
  });
  menu->addAction(tr("Pivot as LaTeX…"), this, [this] {
    ask_export_file(
        tr("Export the pivot as LaTeX"), QStringLiteral("pivot.tex"),
        [this](const QString& path) { export_pivot_latex(path); }, tr("LaTeX (*.tex)"));
  });
  menu->addAction(tr("Pivot as Markdown…"), this, [this] {
    ask_export_file(
        tr("Export the pivot as Markdown"), QStringLiteral("pivot.md"),
        [this](const QString& path) { export_pivot_markdown(path); }, tr("Markdown (*.md)"));
  });
  menu->addAction(tr("Selected runs as MTEB results…"), this, &ResultsView::ask_export_mteb);
}

// What each panel's signals change, and the timer of the diff.
void ResultsView::connect_panels() {
  diff_timer_ = new QTimer(this);
  diff_timer_->setSingleShot(true);
  diff_timer_->setInterval(150);
  connect(bar_, &RunsFilterBar::filter_changed, this, &ResultsView::apply_filter);
  connect(bar_, &RunsFilterBar::metric_changed, this, [this] {
    reload_runs(true);
    start_pivot();
  });
  connect(bar_, &RunsFilterBar::long_format_changed, this, [this] { reload_runs(false); });
  connect(bar_, &RunsFilterBar::columns_changed, this, [this] { reload_runs(true); });
  connect(bar_, &RunsFilterBar::compare_clicked, this, &ResultsView::compare_selected);
  connect(pivot_, &PivotPanel::changed, this, &ResultsView::start_pivot);
  connect(runs_table_->selectionModel(), &QItemSelectionModel::selectionChanged, diff_timer_,
          qOverload<>(&QTimer::start));
  connect(diff_timer_, &QTimer::timeout, this, &ResultsView::start_diff);
  connect(runs_model_, &RunsTableModel::query_failed, this, &ResultsView::status_message);
  connect(runs_model_, &RunsTableModel::summaries_ready, this, [this] {
    widen_metric_columns();
    finish_loading(false);
  });
}

// "Compare": the two selected runs query by query (the comparison panel shows them).
void ResultsView::compare_selected() {
  const QList<qlonglong> ids = selected_run_ids();
  if (ids.size() != 2) {
    QMessageBox::information(this, tr("Compare"),
                             tr("Select two evaluation runs in the Runs tab first."));
    return;
  }
  emit compare_requested(ids[0], ids[1]);
}

QString ResultsView::title() const {
  return tr("Results");
}

void ResultsView::set_store(const QString& db_path) {
  db_path_ = db_path;
  summary_ = StoreSummary();
  shown_headers_.clear();
  runs_model_->reload(QString());
  pivot_->model()->set_table(PivotTable());
  diff_->model()->set_diff(ConfigDiff());
  load(false);
}

void ResultsView::refresh() {
  load(true);
}

void ResultsView::hideEvent(QHideEvent* event) {
  runs_model_->fetch_all();
  StoreView::hideEvent(event);
}

void ResultsView::load(bool keep_state) {
  const int generation = ++load_generation_;
  loading_ = true;
  pivot_due_ = true;
  if (db_path_.isEmpty()) {
    show_message(
        tr("No results store open — File → Open a results.db, or design a study in the "
           "Designer tab"));
    finish_loading(true);
    return;
  }
  load_in_background<StoreSummary>(
      this, db_path_, read_store_summary,
      [this, generation, keep_state](StoreSummary summary, const QString& error) {
        if (generation != load_generation_) return;  // a newer load replaced this one
        if (!error.isEmpty()) {
          show_message(tr("Cannot read the results store:\n%1").arg(error));
          emit status_message(error);
          finish_loading(true);
          return;
        }
        summary_ = std::move(summary);
        if (summary_.run_count == 0) {
          runs_model_->reload(QString());
          pivot_->model()->set_table(PivotTable());
          show_message(tr("No runs yet — design a study in the Designer tab"));
          finish_loading(true);
          return;
        }
        stack_->setCurrentIndex(1);
        message_->clear();
        bar_->set_summary(summary_);
        reload_runs(keep_state);
        start_pivot();
      });
}

void ResultsView::finish_loading(bool pivot_shown) {
  if (pivot_shown) pivot_due_ = false;
  if (!loading_ || pivot_due_ || runs_model_->summaries_pending()) return;
  loading_ = false;
  emit loaded();
}

void ResultsView::fit_run_columns(bool resized) {
  QHeaderView* header = runs_table_->horizontalHeader();
  // Names and paths elide past kMaxTextWidth (the whole text is in the tooltip).
  for (int column = 0; column < runs_model_->columnCount() && resized; ++column)
    if (runs_model_->column_kind(column) == RunsTableModel::ColumnKind::Text &&
        runs_table_->columnWidth(column) > kMaxTextWidth)
      runs_table_->setColumnWidth(column, kMaxTextWidth);
  // The run's details (when, how long, where, why it failed) after the params and the scores,
  // so the scores show without scrolling on a laptop's screen; the model keeps its order.
  const std::initializer_list<int> details = {
      RunsTableModel::StartedColumn, RunsTableModel::DurationColumn, RunsTableModel::HostColumn,
      RunsTableModel::DeviceColumn, RunsTableModel::ErrorColumn};
  if (header->count() <= RunsTableModel::ErrorColumn ||
      header->visualIndex(RunsTableModel::StartedColumn) ==
          header->count() - static_cast<int>(details.size()))
    return;
  for (int column : details) header->moveSection(header->visualIndex(column), header->count() - 1);
}

void ResultsView::widen_metric_columns() {
  for (int column = 0; column < runs_model_->columnCount(); ++column) {
    if (runs_model_->column_kind(column) != RunsTableModel::ColumnKind::Metric) continue;
    const int width = runs_table_->columnWidth(column);  // never narrower than the user made it
    runs_table_->resizeColumnToContents(column);
    if (runs_table_->columnWidth(column) < width) runs_table_->setColumnWidth(column, width);
  }
}

void ResultsView::show_message(const QString& text) {
  message_->setText(text);
  stack_->setCurrentIndex(0);
}

QString ResultsView::empty_state() const {
  return stack_->currentIndex() == 0 ? message_->text() : QString();
}

void ResultsView::apply_filter() {
  if (summary_.run_count == 0) return;
  reload_runs(false);
  start_pivot();
}

void ResultsView::set_long_format(bool long_format) {
  bar_->set_long_format(long_format);
}

// Queries the runs table again, keeping the selection; with keep_scroll (a refresh, another
// metric or column) also the rows fetched so far and the scroll position.

void ResultsView::reload_runs(bool keep_scroll) {
  if (db_path_.isEmpty() || summary_.run_count == 0) return;
  const QList<qlonglong> selected = selected_run_ids();
  const int scroll = runs_table_->verticalScrollBar()->value();
  const int fetched = runs_model_->rowCount();

  QStringList params;
  for (const QString& key : bar_->param_columns())
    if (summary_.param_keys.contains(key)) params << key;
  runs_model_->set_columns(params, summary_.benchmarks, bar_->metric());
  runs_model_->set_long_format(bar_->long_format());
  const QString filter_error = runs_model_->set_filter(bar_->filter());
  if (!runs_model_->reload(db_path_)) return;  // query_failed went to the status bar
  if (!filter_error.isEmpty()) emit status_message(tr("Filter term ignored: %1").arg(filter_error));

  // The header repeats the model's order; blocked, so it does not ask the model to sort again.
  {
    const QSignalBlocker block(runs_table_->horizontalHeader());
    runs_table_->horizontalHeader()->setSortIndicator(runs_model_->sort_column(),
                                                      runs_model_->sort_order());
  }
  QStringList headers;
  for (int i = 0; i < runs_model_->columnCount(); ++i)
    headers << runs_model_->headerData(i, Qt::Horizontal).toString();
  const bool resized = headers != shown_headers_;
  if (resized) {
    shown_headers_ = headers;
    runs_table_->resizeColumnsToContents();
  }
  fit_run_columns(resized);
  if (keep_scroll) {
    while (runs_model_->rowCount() < fetched && runs_model_->canFetchMore())
      runs_model_->fetchMore();
  }
  if (!isVisible()) runs_model_->fetch_all();  // as hideEvent does
  widen_metric_columns();
  select_rows(selected, false);
  if (keep_scroll) runs_table_->verticalScrollBar()->setValue(scroll);
  start_count();
}

// The number of runs the filter selects, counted off the GUI thread (the table fetches lazily).
void ResultsView::start_count() {
  const int generation = ++count_generation_;
  const RunFilter filter = bar_->filter();
  const qlonglong total = summary_.run_count;
  load_in_background<qlonglong>(
      this, db_path_, [filter](const ResultsStore& db) { return count_runs(db, filter); },
      [this, generation, total](qlonglong count, const QString& error) {
        if (generation != count_generation_) return;
        bar_->show_count(error.isEmpty() ? count : -1, total);
      });
}

void ResultsView::set_filter_text(const QString& text) {
  bar_->set_filter_text(text);
  apply_filter();
}

void ResultsView::set_metric(const QString& metric) {
  bar_->set_metric(metric);
}

void ResultsView::select_runs(const QList<qlonglong>& ids) {
  select_rows(ids, true);
}

// Selects the rows of `ids`; with `fetch`, fetching more rows until every id is found.
void ResultsView::select_rows(const QList<qlonglong>& ids, bool fetch) {
  QHash<qlonglong, int> row_of;
  auto index_rows = [&] {
    for (int row = row_of.size(); row < runs_model_->rowCount(); ++row)
      row_of.insert(runs_model_->run_id(row), row);
  };
  index_rows();
  QItemSelection selection;
  const int last_column = runs_model_->columnCount() - 1;
  for (qlonglong id : ids) {
    while (fetch && !row_of.contains(id) && runs_model_->canFetchMore()) {
      runs_model_->fetchMore();
      index_rows();
    }
    const auto row = row_of.find(id);
    if (row != row_of.end())
      selection.select(runs_model_->index(*row, 0), runs_model_->index(*row, last_column));
  }
  runs_table_->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
}

QList<qlonglong> ResultsView::selected_run_ids() const {
  QList<qlonglong> ids;
  for (const QModelIndex& index : runs_table_->selectionModel()->selectedRows())
    ids << runs_model_->run_id(index.row());
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace lmk::widgets
