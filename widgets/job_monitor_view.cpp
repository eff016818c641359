#include "widgets/job_monitor_view.h"

#include <QApplication>
#include <QDateTime>
#include <QDesktopServices>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QPlainTextEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTimer>
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

}  // namespace

JobMonitorView::JobMonitorView(QWidget* parent) : StoreView(parent) {
  model_ = new JobModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(JobModel::kSortRole);
  launcher_ = new JobLauncher(this);

  actions_ = new JobActionsBar;
  actions_->export_menu()->addAction(tr("Table as CSV…"), this, &JobMonitorView::export_table);
  actions_->export_menu()->addAction(tr("Curves as image…"), this, [this] {
    export_plot_with_dialog(curves_->plot(), this,
                            QStringLiteral("run-%1-curves").arg(selected_run_));
  });
  // The message line under the bar: what the last cancel / requeue did.
  message_ = new QLabel;
  message_->setObjectName(QStringLiteral("job_message"));
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setWordWrap(true);
  build_table();
  curves_ = new TrainingCurvesPanel;
  log_ = new LogTail;

  auto* details = new QSplitter(Qt::Horizontal);
  details->addWidget(curves_);
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
  layout->addWidget(actions_);
  layout->addWidget(message_);
  layout->addWidget(pages_, 1);

  connect_controls();

  show_message(QString());
  load(true);  // the empty state of no store
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
  connect(actions_, &JobActionsBar::cancel_clicked, this, &JobMonitorView::cancel_selected);
  connect(actions_, &JobActionsBar::requeue_clicked, this, &JobMonitorView::requeue_selected);
  connect(actions_, &JobActionsBar::open_log_clicked, this, &JobMonitorView::open_log);
  connect(actions_, &JobActionsBar::show_ended_changed, this, [this] { load(false); });
  connect(actions_, &JobActionsBar::show_events_changed, this, [this] {
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
    curves_->show_text(tr("Select a job to see its training curves"));
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
  const bool include_ended = actions_->show_ended();
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
    if (!actions_->show_ended())
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
    curves_loading_ = false;
    log_loading_ = false;
    curves_->clear();
    log_->clear();
  }
  if (run == 0) {
    curves_->show_text(tr("Select a job to see its training curves"));
    return;
  }
  const int generation = details_generation_;
  if (!curves_loading_) {
    curves_loading_ = true;
    ++details_pending_;
    const CurveSteps after = curves_->steps();
    load_in_background<RunCurves>(
        this, db_path_,
        [run, after](const ResultsStore& db) { return load_run_curves(db, run, after); },
        [this, generation](RunCurves curves, QString error) {
          --details_pending_;
          if (generation == details_generation_) {
            curves_loading_ = false;
            if (error.isEmpty())
              show_curves(curves);
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
      log_->follow(text.isEmpty() ? tr("(%1: no log yet)").arg(path) : text);
    }
    finish_loaded();
  });
  const bool events = actions_->show_events();
  watcher->setFuture(QtConcurrent::run(
      store_thread_pool(), [path, events] { return read_log_tail(path, 200, events); }));
}

void JobMonitorView::show_curves(const RunCurves& curves) {
  if (curves_->add(curves)) return;
  const JobRow* row = model_->find(selected_run_);
  curves_->show_text(tr("Run %1 (%2) has logged no training curves%3.")
                         .arg(selected_run_)
                         .arg(row != nullptr ? row->kind : QString())
                         .arg(row != nullptr && (row->kind == QLatin1String("train") ||
                                                 row->kind == QLatin1String("pretrain"))
                                  ? tr(" yet")
                                  : QString()));
}

void JobMonitorView::update_buttons() {
  bool cancellable = false;
  for (const QModelIndex& index : table_->selectionModel()->selectedRows()) {
    const JobRow* row = model_->find(index.data(JobModel::kRunIdRole).toLongLong());
    cancellable = cancellable || (row != nullptr && row->cancellable());
  }
  const JobRow* current = model_->find(selected_run_);
  actions_->enable(cancellable, current != nullptr && current->requeueable() && !launcher_->busy(),
                   current != nullptr && QFileInfo::exists(current->log_path));
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
