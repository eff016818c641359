#include "widgets/job_monitor_view.h"

#include "widgets/plot_view.h"

#include <qcustomplot.h>
#include <QApplication>
#include <QCheckBox>
#include <QDateTime>
#include <QDesktopServices>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>

#include <set>

#include "widgets/job_launcher.h"
#include "widgets/plot_export.h"
#include "widgets/store_connection.h"

namespace lmk::widgets {

namespace {

constexpr int kRefreshMs = 2000;
// How often `lmk jobs` brings the store up to date while jobs are unfinished (Slurm jobs, and
// local ones whose queue died, change only when someone polls them).
constexpr qint64 kSyncMs = 15000;
const char* const kShowEndedKey = "jobs/show_ended";

// The progress column: a progress bar with the "12/40 (30%)" text on it.
class ProgressDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;

  void paint(QPainter* painter, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override {
    const double share = index.data(JobModel::kProgressRole).toDouble();
    if (share < 0) {
      QStyledItemDelegate::paint(painter, option, index);
      return;
    }
    QStyle* style = option.widget != nullptr ? option.widget->style() : QApplication::style();
    QStyleOptionViewItem background = option;
    initStyleOption(&background, index);
    background.text.clear();
    style->drawControl(QStyle::CE_ItemViewItem, &background, painter, option.widget);
    QStyleOptionProgressBar bar;
    bar.rect = option.rect.adjusted(2, 2, -2, -2);
    bar.minimum = 0;
    bar.maximum = 1000;
    bar.progress = qRound(share * 1000);
    bar.text = index.data().toString();
    bar.textVisible = true;
    bar.textAlignment = Qt::AlignCenter;
    bar.state = (option.state & ~QStyle::State_Selected) | QStyle::State_Horizontal;
    bar.palette = option.palette;
    bar.fontMetrics = option.fontMetrics;
    style->drawControl(QStyle::CE_ProgressBar, &bar, painter, option.widget);
  }
};

QString curve_label(const QString& key) {
  if (key == QLatin1String("loss")) return QObject::tr("loss");
  if (key == QLatin1String("lr")) return QObject::tr("learning rate");
  return QObject::tr("tokens / s");
}

}  // namespace

JobMonitorView::JobMonitorView(QWidget* parent) : StoreView(parent) {
  model_ = new JobModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(JobModel::kSortRole);
  launcher_ = new JobLauncher(this);

  QHBoxLayout* buttons = build_button_bar();
  build_table();
  build_curves();

  log_ = new QPlainTextEdit;
  log_->setObjectName(QStringLiteral("log_tail"));
  log_->setReadOnly(true);
  log_->setLineWrapMode(QPlainTextEdit::NoWrap);
  log_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  log_->setPlaceholderText(tr("The selected job's log"));

  auto* details = new QSplitter(Qt::Horizontal);
  details->addWidget(curve_pages_);
  details->addWidget(log_);
  details->setStretchFactor(0, 1);
  details->setStretchFactor(1, 1);
  auto* content = new QSplitter(Qt::Vertical);
  content->addWidget(table_);
  content->addWidget(details);
  content->setStretchFactor(0, 3);
  content->setStretchFactor(1, 2);

  empty_ = new QLabel;
  empty_->setObjectName(QStringLiteral("empty_state"));
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  pages_ = new QStackedWidget;
  pages_->addWidget(content);
  pages_->addWidget(empty_);

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(message_);
  layout->addWidget(pages_, 1);

  connect_controls();

  show_message(QString());
  load(true);  // the empty state of no store
}

// The bar over the table: Cancel, Requeue, Open log, Export and the two boxes, and the message
// line under it.
QHBoxLayout* JobMonitorView::build_button_bar() {
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setToolTip(
      tr("Stop the selected jobs (lmk cancel): training saves a checkpoint, "
         "which Requeue continues from"));
  requeue_ = new QPushButton(tr("Requeue"));
  requeue_->setToolTip(
      tr("Submit the study of the selected failed or killed job again "
         "(lmk submit): the steps not done run again"));
  open_log_ = new QPushButton(tr("Open log"));
  auto* export_button = new QToolButton;
  export_button->setText(tr("Export"));
  export_button->setPopupMode(QToolButton::InstantPopup);
  auto* export_menu = new QMenu(export_button);
  export_menu->addAction(tr("Table as CSV…"), this, &JobMonitorView::export_table);
  export_menu->addAction(tr("Curves as image…"), this, [this] {
    export_plot_with_dialog(curves_, this, QStringLiteral("run-%1-curves").arg(selected_run_));
  });
  export_button->setMenu(export_menu);
  show_ended_ = new QCheckBox(tr("Show jobs that are over"));
  show_ended_->setChecked(QSettings().value(QLatin1String(kShowEndedKey), true).toBool());
  show_events_ = new QCheckBox(tr("Progress events in the log"));
  show_events_->setToolTip(tr("The JSON lines jobs write for the store's progress fields"));
  message_ = new QLabel;
  message_->setObjectName(QStringLiteral("job_message"));
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setWordWrap(true);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(cancel_);
  buttons->addWidget(requeue_);
  buttons->addWidget(open_log_);
  buttons->addWidget(export_button);
  buttons->addSpacing(12);
  buttons->addWidget(show_ended_);
  buttons->addWidget(show_events_);
  buttons->addStretch(1);
  return buttons;
}

// The jobs table, sorted by run, its progress column drawn as bars.
void JobMonitorView::build_table() {
  table_ = new QTableView;
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(JobModel::kRun, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setItemDelegateForColumn(JobModel::kProgress, new ProgressDelegate(table_));
  table_->verticalHeader()->hide();
  table_->setWordWrap(false);
  QHeaderView* header = table_->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::Interactive);
  header->setSectionResizeMode(JobModel::kLatest, QHeaderView::Stretch);
  table_->setColumnWidth(JobModel::kRun, 50);
  table_->setColumnWidth(JobModel::kStep, 220);
  table_->setColumnWidth(JobModel::kStatus, 80);
  table_->setColumnWidth(JobModel::kAttempts, 65);
  table_->setColumnWidth(JobModel::kProgress, 150);
  table_->setColumnWidth(JobModel::kEta, 80);
  table_->setColumnWidth(JobModel::kExecutor, 65);
  table_->setColumnWidth(JobModel::kExternalId, 70);
  table_->setColumnWidth(JobModel::kUpdated, 70);
}

// The selected run's training curves, one axis rect per key of training_curve_keys().
void JobMonitorView::build_curves() {
  curves_ = new QCustomPlot;
  ignore_empty_resizes(curves_);
  curves_->plotLayout()->clear();
  auto* margins = new QCPMarginGroup(curves_);
  const QStringList& keys = training_curve_keys();
  const QColor colors[] = {QColor(0x1a, 0x5f, 0xb4), QColor(0xc6, 0x46, 0x00),
                           QColor(0x26, 0x80, 0x3a)};
  for (int i = 0; i < keys.size(); ++i) {
    auto* rect = new QCPAxisRect(curves_);
    curves_->plotLayout()->addElement(i, 0, rect);
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    QCPGraph* graph = curves_->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    graph->setName(keys[i]);
    graph->setPen(QPen(colors[i % 3], 1));
    rect->axis(QCPAxis::atLeft)->setLabel(curve_label(keys[i]));
    if (i + 1 == keys.size()) rect->axis(QCPAxis::atBottom)->setLabel(tr("step"));
  }
  no_curves_ = new QLabel;
  no_curves_->setAlignment(Qt::AlignCenter);
  no_curves_->setWordWrap(true);
  curve_pages_ = new QStackedWidget;
  curve_pages_->addWidget(no_curves_);
  curve_pages_->addWidget(curves_);
}

// The refresh timer, and what the table, the buttons, the boxes and the launcher change.
void JobMonitorView::connect_controls() {
  timer_ = new QTimer(this);
  timer_->setInterval(kRefreshMs);
  connect(timer_, &QTimer::timeout, this, [this] {
    if (isVisible() && !db_path_.isEmpty()) load(false);
  });
  timer_->start();

  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &JobMonitorView::selection_changed);
  connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this,
          &JobMonitorView::update_buttons);
  connect(cancel_, &QPushButton::clicked, this, &JobMonitorView::cancel_selected);
  connect(requeue_, &QPushButton::clicked, this, &JobMonitorView::requeue_selected);
  connect(open_log_, &QPushButton::clicked, this, &JobMonitorView::open_log);
  connect(show_ended_, &QCheckBox::toggled, this, [this](bool on) {
    QSettings().setValue(QLatin1String(kShowEndedKey), on);
    load(false);
  });
  connect(show_events_, &QCheckBox::toggled, this, [this] {
    log_->clear();
    if (selected_run_ != 0) load_details(false);
  });
  connect(launcher_, &JobLauncher::cancel_done, this, [this](bool ok, const QString& text) {
    show_message(text, !ok);
    load(false);
  });
  connect(launcher_, &JobLauncher::submitted, this, [this] {
    show_message(tr("Requeued: the steps not done are jobs again"));
    load(false);
  });
  connect(launcher_, &JobLauncher::failed, this,
          [this](const QString& text) { show_message(tr("Requeue failed: %1").arg(text), true); });
}

void JobMonitorView::set_store(const QString& db_path) {
  db_path_ = db_path;
  want_loaded_ = true;
  load(true);
}

void JobMonitorView::refresh() {
  want_loaded_ = true;
  if (loading_) return;  // the load in flight emits loaded()
  load(false);
}

void JobMonitorView::showEvent(QShowEvent* event) {
  StoreView::showEvent(event);
  if (!db_path_.isEmpty() && !loading_) load(false);
}

void JobMonitorView::load(bool clear) {
  if (clear) {
    ++generation_;
    ++details_generation_;
    loading_ = false;
    curves_loading_ = false;
    log_loading_ = false;
    auto_select_ = true;
    selected_run_ = 0;
    model_->set_rows({});
    log_->clear();
    no_curves_->setText(tr("Select a job to see its training curves"));
    curve_pages_->setCurrentWidget(no_curves_);
  }
  if (db_path_.isEmpty()) {
    empty_->setText(
        tr("No results store is open.\nOpen one (File → Open), or design a study in "
           "the Designer tab and launch it: its jobs show here."));
    pages_->setCurrentWidget(empty_);
    finish_loaded();
    return;
  }
  if (loading_) return;
  loading_ = true;
  const int generation = generation_;
  const bool include_ended = show_ended_->isChecked();
  load_in_background<JobSnapshot>(
      this, db_path_,
      [include_ended](const ResultsStore& db) { return load_jobs(db, include_ended); },
      [this, generation](JobSnapshot snapshot, QString error) {
        if (generation != generation_) return;
        loading_ = false;
        show_snapshot(snapshot, error);
        finish_loaded();
      });
}

void JobMonitorView::show_snapshot(const JobSnapshot& snapshot, const QString& error) {
  if (!error.isEmpty()) {
    empty_->setText(tr("Cannot read the store:\n%1").arg(error));
    pages_->setCurrentWidget(empty_);
    emit status_message(error);
    return;
  }
  const qint64 keep = selected_run_;
  const QString status_before = selected_status_;
  model_->set_rows(snapshot.rows);
  if (snapshot.rows.isEmpty()) {
    // (A store of an lmk from before jobs has the jobs table too: it is upgraded on open.)
    if (!show_ended_->isChecked())
      empty_->setText(tr("No unfinished jobs.\nTick “Show jobs that are over” to see the others."));
    else
      empty_->setText(
          tr("No jobs yet.\nDesign a study in the Designer tab and launch it: its "
             "jobs show here."));
    pages_->setCurrentWidget(empty_);
  } else {
    pages_->setCurrentWidget(pages_->widget(0));
  }
  if (keep != 0 && selected_run_ != keep && model_->find(keep) != nullptr) select_run(keep);
  if (auto_select_ && selected_run_ == 0 && !snapshot.rows.isEmpty()) {
    auto_select_ = false;
    // Something worth looking at: a job that runs, else the last training.
    qint64 pick = 0;
    for (const JobRow& row : snapshot.rows)
      if (row.status == QLatin1String("RUNNING")) {
        pick = row.run_id;
        break;
      }
    for (auto it = snapshot.rows.rbegin(); pick == 0 && it != snapshot.rows.rend(); ++it)
      if (it->kind == QLatin1String("train") || it->kind == QLatin1String("pretrain"))
        pick = it->run_id;
    if (pick != 0) select_run(pick);
  }
  if (const JobRow* row = model_->find(selected_run_)) {
    // A run that moves on, or just ended, has more to show.
    if (row->status == QLatin1String("RUNNING") || row->status != status_before)
      load_details(false);
    selected_status_ = row->status;
  }
  update_buttons();

  bool unfinished = false;
  for (const JobRow& row : snapshot.rows) unfinished = unfinished || (row.has_job && !row.ended);
  const qint64 now = QDateTime::currentMSecsSinceEpoch();
  if (unfinished && now - last_sync_ms_ > kSyncMs) {
    last_sync_ms_ = now;
    launcher_->sync_jobs(db_path_);
  }
}

bool JobMonitorView::select_run(qint64 run_id) {
  for (int row = 0; row < model_->rowCount(); ++row) {
    const QModelIndex source = model_->index(row, 0);
    if (source.data(JobModel::kRunIdRole).toLongLong() != run_id) continue;
    const QModelIndex index = proxy_->mapFromSource(source);
    table_->selectionModel()->setCurrentIndex(
        index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    table_->scrollTo(index);
    return true;
  }
  return false;
}

void JobMonitorView::selection_changed() {
  const QModelIndex current = table_->selectionModel()->currentIndex();
  const qint64 run = current.isValid() ? current.data(JobModel::kRunIdRole).toLongLong() : 0;
  if (run == selected_run_) return;
  selected_run_ = run;
  const JobRow* row = model_->find(run);
  selected_status_ = row != nullptr ? row->status : QString();
  load_details(true);
  update_buttons();
}

void JobMonitorView::load_details(bool from_start) {
  const qint64 run = selected_run_;
  if (from_start) {
    ++details_generation_;
    curves_steps_.clear();
    curves_loading_ = false;
    log_loading_ = false;
    for (int i = 0; i < curves_->graphCount(); ++i) curves_->graph(i)->data()->clear();
    log_->clear();
  }
  if (run == 0) {
    no_curves_->setText(tr("Select a job to see its training curves"));
    curve_pages_->setCurrentWidget(no_curves_);
    return;
  }
  const int generation = details_generation_;
  if (!curves_loading_) {
    curves_loading_ = true;
    ++details_pending_;
    const CurveSteps after = curves_steps_;
    load_in_background<RunCurves>(
        this, db_path_,
        [run, after](const ResultsStore& db) { return load_run_curves(db, run, after); },
        [this, generation, from_start](RunCurves curves, QString error) {
          --details_pending_;
          if (generation == details_generation_) {
            curves_loading_ = false;
            if (error.isEmpty())
              show_curves(curves, from_start);
            else
              emit status_message(error);
          }
          finish_loaded();
        });
  }
  const JobRow* row = model_->find(run);
  const QString path = row != nullptr ? row->log_path : QString();
  if (path.isEmpty()) {
    log_->setPlainText(tr("(run %1 is not a job: it has no log here)").arg(run));
    return;
  }
  if (log_loading_) return;
  log_loading_ = true;
  ++details_pending_;
  auto* watcher = new QFutureWatcher<QString>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation, path] {
    const QString text = watcher->result();
    watcher->deleteLater();
    --details_pending_;
    if (generation == details_generation_) {
      log_loading_ = false;
      if (text != log_->toPlainText()) {
        QScrollBar* bar = log_->verticalScrollBar();
        const bool at_end = bar->value() >= bar->maximum() - 2;
        const int position = bar->value();
        log_->setPlainText(text.isEmpty() ? tr("(%1: no log yet)").arg(path) : text);
        bar->setValue(at_end ? bar->maximum() : position);
      }
    }
    finish_loaded();
  });
  const bool events = show_events_->isChecked();
  watcher->setFuture(QtConcurrent::run(
      store_thread_pool(), [path, events] { return read_log_tail(path, 200, events); }));
}

void JobMonitorView::show_curves(const RunCurves& curves, bool from_start) {
  (void)from_start;
  const QStringList& keys = training_curve_keys();
  for (const CurveSeries& series : curves.series) {
    const int index = static_cast<int>(keys.indexOf(series.key));
    if (index >= 0) curves_->graph(index)->addData(series.steps, series.values, true);
  }
  for (const CurveSeries& series : curves.series) curves_steps_[series.key] = series.last_step;
  bool any = false;
  for (int i = 0; i < curves_->graphCount(); ++i) {
    QCPGraph* graph = curves_->graph(i);
    any = any || !graph->data()->isEmpty();
    graph->rescaleAxes();
  }
  if (!any) {
    const JobRow* row = model_->find(selected_run_);
    no_curves_->setText(tr("Run %1 (%2) has logged no training curves%3.")
                            .arg(selected_run_)
                            .arg(row != nullptr ? row->kind : QString())
                            .arg(row != nullptr && (row->kind == QLatin1String("train") ||
                                                    row->kind == QLatin1String("pretrain"))
                                     ? tr(" yet")
                                     : QString()));
    curve_pages_->setCurrentWidget(no_curves_);
    return;
  }
  curve_pages_->setCurrentWidget(curves_);
  if (curves_->width() > 0 && curves_->height() > 0) curves_->replot(QCustomPlot::rpQueuedReplot);
}

void JobMonitorView::update_buttons() {
  bool cancellable = false;
  for (const QModelIndex& index : table_->selectionModel()->selectedRows()) {
    const JobRow* row = model_->find(index.data(JobModel::kRunIdRole).toLongLong());
    cancellable = cancellable || (row != nullptr && row->cancellable());
  }
  const JobRow* current = model_->find(selected_run_);
  cancel_->setEnabled(cancellable);
  requeue_->setEnabled(current != nullptr && current->requeueable() && !launcher_->busy());
  open_log_->setEnabled(current != nullptr && QFileInfo::exists(current->log_path));
}

void JobMonitorView::cancel_selected() {
  QList<qint64> runs;
  for (const QModelIndex& index : table_->selectionModel()->selectedRows()) {
    const JobRow* row = model_->find(index.data(JobModel::kRunIdRole).toLongLong());
    if (row != nullptr && row->cancellable()) runs << row->run_id;
  }
  if (runs.isEmpty()) {
    show_message(tr("Nothing to cancel: select a scheduled or running job"));
    return;
  }
  std::sort(runs.begin(), runs.end());
  QStringList ids;
  for (qint64 run : runs) ids << QString::number(run);
  show_message(tr("Cancelling run %1 …").arg(ids.join(QStringLiteral(", "))));
  launcher_->cancel(runs, db_path_);
}

void JobMonitorView::requeue_selected() {
  const JobRow* row = model_->find(selected_run_);
  if (row == nullptr || !row->requeueable()) {
    show_message(tr("Nothing to requeue: select a failed or killed job"));
    return;
  }
  const qint64 run = row->run_id;
  const QString db = db_path_;
  show_message(tr("Requeueing the study of run %1 …").arg(run));
  load_in_background<RequeueTarget>(
      this, db, [run](const ResultsStore& store) { return load_requeue_target(store, run); },
      [this, db](RequeueTarget target, QString error) {
        if (error.isEmpty()) error = target.error;
        if (!error.isEmpty()) {
          show_message(tr("Cannot requeue: %1").arg(error), true);
          return;
        }
        SubmitRequest request;
        request.config = target.config;
        request.profile = target.profile;
        try {
          request.executor = parse_executor(target.executor.toStdString(), "the job's executor");
        } catch (const std::exception& e) {
          show_message(tr("Cannot requeue: %1").arg(QString::fromUtf8(e.what())), true);
          return;
        }
        request.dir = target.study_dir;
        request.db = db;
        launcher_->submit(request);
        update_buttons();
      });
}

void JobMonitorView::open_log() {
  const JobRow* row = model_->find(selected_run_);
  if (row != nullptr && !row->log_path.isEmpty())
    QDesktopServices::openUrl(QUrl::fromLocalFile(row->log_path));
}

void JobMonitorView::export_table() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export jobs"),
                                                    QStringLiteral("jobs.csv"), tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  try {
    export_table_csv(*proxy_, path);
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Export failed"), QString::fromUtf8(e.what()));
  }
}

void JobMonitorView::show_message(const QString& text, bool error) {
  message_->setText(text);
  message_->setVisible(!text.isEmpty());
  message_->setStyleSheet(error ? QStringLiteral("color: #c01c28") : QString());
  if (!text.isEmpty()) emit status_message(text);
}

void JobMonitorView::finish_loaded() {
  if (!want_loaded_ || loading_ || details_pending_ > 0) return;
  want_loaded_ = false;
  // Queued: a caller of refresh() connects to loaded() and then waits for it.
  QTimer::singleShot(0, this, [this] { emit loaded(); });
}

QString JobMonitorView::log_text() const {
  return log_->toPlainText();
}

QString JobMonitorView::empty_text() const {
  return pages_->currentWidget() == empty_ ? empty_->text() : QString();
}

QString JobMonitorView::message_text() const {
  return message_->text();
}

}  // namespace lmk::widgets
