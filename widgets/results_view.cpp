#include "widgets/results_view.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QFont>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHash>
#include <QHeaderView>
#include <QItemSelection>
#include <QItemSelectionModel>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QScrollBar>
#include <QSettings>
#include <QSignalBlocker>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

#include "widgets/plot_export.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {
namespace {

const char* const kParamColumnsKey = "results/param_columns";
// Columns sized to their contents stop here (paths); the full text is in the tooltip.
constexpr int kMaxColumnWidth = 480;
// The runs table's text columns (experiment, name, benchmark, host, error) stop here.
constexpr int kMaxTextWidth = 220;

QStringList default_param_columns() {
  return {QStringLiteral("pooling"), QStringLiteral("granularity"), QStringLiteral("max_length")};
}

}  // namespace

ResultsView::ResultsView(QWidget* parent) : StoreView(parent) {
  runs_model_ = new RunsTableModel(this);
  pivot_model_ = new PivotModel(this);
  diff_model_ = new ConfigDiffModel(this);
  param_columns_ = QSettings().value(kParamColumnsKey, default_param_columns()).toStringList();

  QHBoxLayout* bar = build_filter_bar();
  // Runs.
  runs_table_ = make_table(runs_model_);
  runs_table_->setSortingEnabled(true);
  runs_table_->horizontalHeader()->setSortIndicator(RunsTableModel::IdColumn, Qt::AscendingOrder);
  runs_table_->setSelectionBehavior(QAbstractItemView::SelectRows);

  QWidget* pivot_page = build_pivot_page();
  QWidget* diff_page = build_diff_page();

  tabs_ = new QTabWidget(this);
  tabs_->addTab(runs_table_, tr("Runs"));
  tabs_->addTab(pivot_page, tr("Pivot"));
  tabs_->addTab(diff_page, tr("Config diff"));

  auto* content = new QWidget(this);
  auto* content_layout = new QVBoxLayout(content);
  content_layout->setContentsMargins(0, 0, 0, 0);
  content_layout->addLayout(bar);
  content_layout->addWidget(tabs_, 1);

  message_ = new QLabel(this);
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  stack_ = new QStackedWidget(this);
  stack_->addWidget(message_);
  stack_->addWidget(content);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(stack_);

  connect_controls();

  show_message(
      tr("No results store open — File → Open a results.db, or design a study in the "
         "Designer tab"));
  start_diff();
}

// The bar over the tables: the filter (applies to the runs table and the pivot), the metric,
// the "Long" box and the Columns, Compare and Export buttons.
QHBoxLayout* ResultsView::build_filter_bar() {
  filter_edit_ = new QLineEdit(this);
  filter_edit_->setClearButtonEnabled(true);
  filter_edit_->setPlaceholderText(
      tr("Filter: pooling=lmk max_length>=1024 name=*corpus* status=running, or text in "
         "names — any run param works (the store has no tags; params are the attributes)"));
  filter_edit_->setToolTip(
      tr("Terms are AND-ed: key=value, key!=value, key<number (also <=, >, >=), or free text "
         "matching the run or experiment name.\nKeys: any column by the name it shows (id, "
         "experiment, name, kind, status, started, duration, host, device, error; benchmark and "
         "split: a run with a result there) or any run param (train.pooling, max_length, …; * "
         "matches any characters, e.g. *pooling).\nValues: * matches any characters; put values "
         "with spaces in \"quotes\"."));
  experiment_combo_ = new QComboBox(this);
  experiment_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  status_combo_ = new QComboBox(this);
  status_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  status_combo_->addItem(tr("Any status"), QString());
  for (const char* status : {"SCHEDULED", "RUNNING", "FINISHED", "FAILED", "KILLED"})
    status_combo_->addItem(QString::fromLatin1(status), QString::fromLatin1(status));
  metric_combo_ = new QComboBox(this);
  metric_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  metric_combo_->setToolTip(tr("The metric of the benchmark columns and the pivot"));
  auto* columns_button = new QToolButton(this);
  columns_button->setText(tr("Columns"));
  columns_button->setToolTip(tr("Run params shown as columns"));
  columns_button->setPopupMode(QToolButton::InstantPopup);
  column_menu_ = new QMenu(columns_button);
  columns_button->setMenu(column_menu_);
  QToolButton* export_button = build_export_button();
  QToolButton* compare_button = build_compare_button();

  count_label_ = new QLabel(this);
  auto* bar = new QHBoxLayout;
  bar->addWidget(filter_edit_, 1);
  bar->addWidget(experiment_combo_);
  bar->addWidget(status_combo_);
  bar->addWidget(new QLabel(tr("Metric:"), this));
  bar->addWidget(metric_combo_);
  bar->addWidget(count_label_);
  long_format_check_ = new QCheckBox(tr("Long"), this);
  long_format_check_->setToolTip(
      tr("One row per run and benchmark, one score column (else a column per benchmark)"));
  long_format_check_->setChecked(QSettings().value(QStringLiteral("results/long"), true).toBool());
  connect(long_format_check_, &QCheckBox::toggled, this, [this](bool on) {
    QSettings().setValue(QStringLiteral("results/long"), on);
    reload_runs(false);
  });
  bar->addWidget(long_format_check_);
  bar->addWidget(columns_button);
  bar->addWidget(compare_button);
  bar->addWidget(export_button);
  return bar;
}

// The Export menu: the runs table and the pivot as files, the selected runs as MTEB results.
QToolButton* ResultsView::build_export_button() {
  auto* export_button = new QToolButton(this);
  export_button->setText(tr("Export"));
  export_button->setPopupMode(QToolButton::InstantPopup);
  auto* export_menu = new QMenu(export_button);
  export_menu->addAction(tr("Runs table as CSV…"), this, [this] {
    ask_export_file(tr("Export the runs table"), QStringLiteral("runs.csv"),
                    [this](const QString& path) { export_runs_csv(path); });
  });
  export_menu->addAction(tr("Pivot as CSV…"), this, [this] {
    ask_export_file(tr("Export the pivot"), QStringLiteral("pivot.csv"),
                    [this](const QString& path) { export_pivot_csv(path); });
  });
  export_menu->addAction(tr("Pivot with intervals and tests as CSV…"), this, [this] {
    ask_export_file(tr("Export the pivot's intervals and tests"), QStringLiteral("pivot-tests.csv"),
                    [this](const QString& path) { export_pivot_tests_csv(path); });
  });
  export_menu->addAction(tr("Pivot as LaTeX…"), this, [this] {
    ask_export_file(
        tr("Export the pivot as LaTeX"), QStringLiteral("pivot.tex"),
        [this](const QString& path) { export_pivot_latex(path); }, tr("LaTeX (*.tex)"));
  });
  export_menu->addAction(tr("Pivot as Markdown…"), this, [this] {
    ask_export_file(
        tr("Export the pivot as Markdown"), QStringLiteral("pivot.md"),
        [this](const QString& path) { export_pivot_markdown(path); }, tr("Markdown (*.md)"));
  });
  export_menu->addAction(tr("Selected runs as MTEB results…"), this, &ResultsView::ask_export_mteb);
  export_button->setMenu(export_menu);
  return export_button;
}

// "Compare": the two selected runs query by query (the comparison panel shows them).
QToolButton* ResultsView::build_compare_button() {
  auto* compare_button = new QToolButton(this);
  compare_button->setText(tr("Compare"));
  compare_button->setToolTip(
      tr("The two selected runs query by query: scatter, differences, paired test"));
  connect(compare_button, &QToolButton::clicked, this, [this] {
    const QList<qlonglong> ids = selected_run_ids();
    if (ids.size() != 2) {
      QMessageBox::information(this, tr("Compare"),
                               tr("Select two evaluation runs in the Runs tab first."));
      return;
    }
    emit compare_requested(ids[0], ids[1]);
  });
  return compare_button;
}

QWidget* ResultsView::build_pivot_page() {
  // Pivot: a dense table of numbers, in a slightly smaller font so that a study's columns (with
  // their names over lines, PivotModel::headerData) fit a laptop's screen.
  pivot_table_ = make_table(pivot_model_);
  {
    QFont compact = pivot_table_->font();
    compact.setPointSizeF(compact.pointSizeF() * 0.9);
    pivot_table_->setFont(compact);
    pivot_table_->verticalHeader()->setDefaultSectionSize(QFontMetrics(compact).height() + 6);
  }
  pivot_rows_combo_ = new QComboBox(this);
  pivot_rows_combo_->addItem(tr("Variant (run name)"), static_cast<int>(PivotRows::Variant));
  pivot_rows_combo_->addItem(tr("Pooling and granularity"),
                             static_cast<int>(PivotRows::PoolingGranularity));
  pivot_rows_combo_->addItem(tr("Pooling"), static_cast<int>(PivotRows::Pooling));
  pivot_baseline_combo_ = new QComboBox(this);
  pivot_baseline_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  pivot_baseline_combo_->setToolTip(
      tr("Rows significantly above / below this one are marked ▲ / ▼ (paired tests over the "
         "queries, Holm–Bonferroni over the table)"));
  pivot_note_ = new QLabel(this);
  pivot_note_->setWordWrap(true);
  pivot_legend_ = new QLabel(this);
  pivot_legend_->setWordWrap(true);
  pivot_legend_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* pivot_page = new QWidget(this);
  auto* pivot_bar = new QHBoxLayout;
  pivot_bar->addWidget(new QLabel(tr("Rows:"), pivot_page));
  pivot_bar->addWidget(pivot_rows_combo_);
  pivot_bar->addWidget(new QLabel(tr("Baseline:"), pivot_page));
  pivot_bar->addWidget(pivot_baseline_combo_);
  pivot_bar->addWidget(pivot_note_, 1);
  auto* pivot_layout = new QVBoxLayout(pivot_page);
  pivot_layout->setContentsMargins(0, 0, 0, 0);
  pivot_layout->addLayout(pivot_bar);
  pivot_layout->addWidget(pivot_table_, 1);
  pivot_layout->addWidget(pivot_legend_);
  return pivot_page;
}

QWidget* ResultsView::build_diff_page() {
  // Config diff.
  diff_table_ = make_table(diff_model_);
  all_keys_check_ = new QCheckBox(tr("Show all keys"), this);
  diff_note_ = new QLabel(this);
  auto* diff_page = new QWidget(this);
  auto* diff_bar = new QHBoxLayout;
  diff_bar->addWidget(all_keys_check_);
  diff_bar->addWidget(diff_note_, 1);
  auto* diff_layout = new QVBoxLayout(diff_page);
  diff_layout->setContentsMargins(0, 0, 0, 0);
  diff_layout->addLayout(diff_bar);
  diff_layout->addWidget(diff_table_, 1);
  return diff_page;
}

// The timers of the filter and the diff, and what each control changes.
void ResultsView::connect_controls() {
  filter_timer_ = new QTimer(this);
  filter_timer_->setSingleShot(true);
  filter_timer_->setInterval(300);
  diff_timer_ = new QTimer(this);
  diff_timer_->setSingleShot(true);
  diff_timer_->setInterval(150);
  connect(filter_edit_, &QLineEdit::textEdited, filter_timer_, qOverload<>(&QTimer::start));
  connect(filter_edit_, &QLineEdit::returnPressed, this, &ResultsView::apply_filter);
  connect(filter_timer_, &QTimer::timeout, this, &ResultsView::apply_filter);
  connect(experiment_combo_, &QComboBox::currentIndexChanged, this, &ResultsView::apply_filter);
  connect(status_combo_, &QComboBox::currentIndexChanged, this, &ResultsView::apply_filter);
  connect(metric_combo_, &QComboBox::currentIndexChanged, this, [this] {
    reload_runs(true);
    start_pivot();
  });
  connect(pivot_rows_combo_, &QComboBox::currentIndexChanged, this, &ResultsView::start_pivot);
  connect(pivot_baseline_combo_, &QComboBox::activated, this, [this] {
    pivot_baseline_ = pivot_baseline_combo_->currentData().toString();
    pivot_baseline_chosen_ = true;
    start_pivot();
  });
  connect(all_keys_check_, &QCheckBox::toggled, diff_model_, &ConfigDiffModel::set_show_all);
  connect(runs_table_->selectionModel(), &QItemSelectionModel::selectionChanged, diff_timer_,
          qOverload<>(&QTimer::start));
  connect(diff_timer_, &QTimer::timeout, this, &ResultsView::start_diff);
  connect(runs_model_, &RunsTableModel::query_failed, this, &ResultsView::status_message);
  connect(runs_model_, &RunsTableModel::summaries_ready, this, [this] {
    widen_metric_columns();
    finish_loading(false);
  });
}

QString ResultsView::title() const {
  return tr("Results");
}

QTableView* ResultsView::make_table(QAbstractItemModel* model) {
  auto* table = new QTableView(this);
  table->setModel(model);
  table->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table->setAlternatingRowColors(true);
  table->setWordWrap(false);
  table->verticalHeader()->setDefaultSectionSize(table->fontMetrics().height() + 6);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setHighlightSections(false);
  table->horizontalHeader()->setMaximumSectionSize(kMaxColumnWidth);
  // Ctrl+C and the context menu copy the selection as tab-separated text.
  auto* copy = new QAction(tr("Copy"), table);
  copy->setShortcut(QKeySequence::Copy);
  copy->setShortcutContext(Qt::WidgetShortcut);
  connect(copy, &QAction::triggered, table, [table] {
    const QString text = table_as_tsv(*table->model(), table->selectionModel()->selectedIndexes());
    if (!text.isEmpty()) QApplication::clipboard()->setText(text);
  });
  table->addAction(copy);
  table->setContextMenuPolicy(Qt::ActionsContextMenu);
  return table;
}

void ResultsView::set_store(const QString& db_path) {
  db_path_ = db_path;
  summary_ = StoreSummary();
  shown_headers_.clear();
  runs_model_->reload(QString());
  pivot_model_->set_table(PivotTable());
  diff_model_->set_diff(ConfigDiff());
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
          pivot_model_->set_table(PivotTable());
          show_message(tr("No runs yet — design a study in the Designer tab"));
          finish_loading(true);
          return;
        }
        stack_->setCurrentIndex(1);
        message_->clear();
        apply_summary();
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

// Fills the combos and the column menu from the store, keeping what was chosen.
void ResultsView::apply_summary() {
  {
    const QSignalBlocker block(experiment_combo_);
    const qlonglong current = experiment_combo_->currentData().isValid()
                                  ? experiment_combo_->currentData().toLongLong()
                                  : -1;
    experiment_combo_->clear();
    experiment_combo_->addItem(tr("All experiments"), qlonglong(-1));
    for (const auto& experiment : summary_.experiments)
      experiment_combo_->addItem(experiment.second, experiment.first);
    experiment_combo_->setCurrentIndex(std::max(0, experiment_combo_->findData(current)));
  }
  {
    const QSignalBlocker block(metric_combo_);
    const QString current = metric_combo_->currentText();
    metric_combo_->clear();
    metric_combo_->addItems(summary_.metrics);
    int index = metric_combo_->findText(current);
    if (index < 0) index = metric_combo_->findText(QString::fromLatin1(kDefaultMetric));
    metric_combo_->setCurrentIndex(std::max(0, index));
    metric_combo_->setEnabled(!summary_.metrics.isEmpty());
  }
  update_column_menu();
}

void ResultsView::update_column_menu() {
  column_menu_->clear();
  for (const QString& key : summary_.param_keys) {
    QAction* action = column_menu_->addAction(key);
    action->setCheckable(true);
    action->setChecked(param_columns_.contains(key));
    connect(action, &QAction::toggled, this, [this, key](bool shown) {
      param_columns_.removeAll(key);
      if (shown) param_columns_ << key;
      QSettings().setValue(kParamColumnsKey, param_columns_);
      reload_runs(true);
    });
  }
  column_menu_->setEnabled(!summary_.param_keys.isEmpty());
}

RunFilter ResultsView::current_filter() const {
  RunFilter filter;
  filter.text = filter_edit_->text();
  filter.status = status_combo_->currentData().toString();
  filter.experiment_id = experiment_combo_->currentData().isValid()
                             ? experiment_combo_->currentData().toLongLong()
                             : -1;
  return filter;
}

void ResultsView::apply_filter() {
  filter_timer_->stop();
  if (summary_.run_count == 0) return;
  reload_runs(false);
  start_pivot();
}

void ResultsView::set_long_format(bool long_format) {
  long_format_check_->setChecked(long_format);
}

// Queries the runs table again, keeping the selection; with keep_scroll (a refresh, another
// metric or column) also the rows fetched so far and the scroll position.

void ResultsView::reload_runs(bool keep_scroll) {
  if (db_path_.isEmpty() || summary_.run_count == 0) return;
  const QList<qlonglong> selected = selected_run_ids();
  const int scroll = runs_table_->verticalScrollBar()->value();
  const int fetched = runs_model_->rowCount();

  QStringList params;
  for (const QString& key : param_columns_)
    if (summary_.param_keys.contains(key)) params << key;
  runs_model_->set_columns(params, summary_.benchmarks, metric_combo_->currentText());
  runs_model_->set_long_format(long_format_check_->isChecked());
  const QString filter_error = runs_model_->set_filter(current_filter());
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
  const RunFilter filter = current_filter();
  const qlonglong total = summary_.run_count;
  load_in_background<qlonglong>(
      this, db_path_, [filter](const ResultsStore& db) { return count_runs(db, filter); },
      [this, generation, total](qlonglong count, const QString& error) {
        if (generation != count_generation_) return;
        if (!error.isEmpty()) {
          count_label_->clear();
          return;
        }
        count_label_->setText(count == total ? tr("%1 runs").arg(count)
                                             : tr("%1 of %2 runs").arg(count).arg(total));
      });
}

void ResultsView::set_filter_text(const QString& text) {
  filter_edit_->setText(text);
  apply_filter();
}

void ResultsView::set_metric(const QString& metric) {
  const int index = metric_combo_->findText(metric);
  if (index >= 0) metric_combo_->setCurrentIndex(index);
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
