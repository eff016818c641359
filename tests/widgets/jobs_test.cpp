// The job monitor and the launcher against the real job layer: a micro study designed in the
// designer and launched through the local executor appears in the monitor, which follows its
// jobs to FINISHED (statuses, progress and log tail compared with the store and the log files);
// Cancel on a running job ends it KILLED, Requeue submits its study again; stores without jobs
// show the empty state.

#include <qcustomplot.h>
#include <QCheckBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLineEdit>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <set>

#include "core/store/results_store.h"
#include "core/store/schema.h"
#include "tests/widgets/fixture_store.h"
#include "tests/widgets/form_input.h"
#include "widgets/designer_view.h"
#include "widgets/job_launcher.h"
#include "widgets/job_model.h"
#include "widgets/job_monitor_view.h"
#include "widgets/store_connection.h"

using lmk::widgets::DesignerView;
using lmk::widgets::JobModel;
using lmk::widgets::JobMonitorView;
using lmk::widgets::JobRow;
using lmk::widgets::testing::child;
using lmk::widgets::testing::type_into;

namespace {

// What the store says about a job, read with plain SQL (not the monitor's code).
struct StoredJob {
  QString step, status;
  qint64 done = -1, total = -1;
  QString log_path;
  bool ended = false;
};

std::map<qint64, StoredJob> stored_jobs(const QString& db_path) {
  std::map<qint64, StoredJob> jobs;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("check"));
    db.setDatabaseName(db_path);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
    if (db.open()) {
      QSqlQuery query(db);
      query.exec(QStringLiteral(
          "SELECT j.run_id, j.step, r.status, j.progress_done, j.progress_total, j.log_path, "
          "j.ended FROM jobs j JOIN runs r ON r.id = j.run_id"));
      while (query.next())
        jobs[query.value(0).toLongLong()] = {
            query.value(1).toString(),   query.value(2).toString(), query.value(3).toLongLong(),
            query.value(4).toLongLong(), query.value(5).toString(), query.value(6).toInt() != 0};
    }
  }
  QSqlDatabase::removeDatabase(QStringLiteral("check"));
  return jobs;
}

qint64 stored_metric_count(const QString& db_path, qint64 run, const QString& key) {
  qint64 count = -1;
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("count"));
    db.setDatabaseName(db_path);
    if (db.open()) {
      QSqlQuery query(db);
      query.prepare(QStringLiteral(
          "SELECT COUNT(*) FROM metrics WHERE run_id = ? AND key = ? AND value IS NOT NULL"));
      query.addBindValue(run);
      query.addBindValue(key);
      if (query.exec() && query.next()) count = query.value(0).toLongLong();
    }
  }
  QSqlDatabase::removeDatabase(QStringLiteral("count"));
  return count;
}

// The last non-empty line of a log (a progress bar's \r segments are lines) that is not a
// JSON progress event (the monitor leaves those out by default).
QString last_log_line(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  const QStringList lines =
      QString::fromUtf8(file.readAll())
          .split(QRegularExpression(QStringLiteral("[\r\n]")), Qt::SkipEmptyParts);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (!it->trimmed().isEmpty() && !it->trimmed().startsWith(QLatin1String("{\""))) return *it;
  return {};
}

// What the monitor's table shows in a column for a run.
QString shown(const JobMonitorView& monitor, qint64 run, int column) {
  const JobModel* model = monitor.model();
  for (int row = 0; row < model->rowCount(); ++row)
    if (model->index(row, 0).data(JobModel::kRunIdRole).toLongLong() == run)
      return model->index(row, column).data().toString();
  return QStringLiteral("(not shown)");
}

bool all_ended(const std::map<qint64, StoredJob>& jobs) {
  for (const auto& [run, job] : jobs)
    if (job.status == QLatin1String("SCHEDULED") || job.status == QLatin1String("RUNNING"))
      return false;
  return true;
}

}  // namespace

class JobsTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QVERIFY(dir_.isValid());
  }
  // A failed check leaves the queue it launched running (setsid, detached): a 200 000-step
  // pretraining would outlive the test. Cancel what is not over and wait for it to end.
  void cleanupTestCase() { stop_unfinished_jobs(); }

  void a_queue_says_how_it_ended();
  void curves_continue_per_key();
  void model_keeps_the_selection_when_a_row_goes();
  void stores_without_jobs_show_the_empty_state();
  void launched_micro_study_appears_and_finishes();
  void cancel_kills_a_running_job_and_requeue_submits_it_again();

 private:
  // Waits until the launched study's local queue has ended (the next launch needs its folder).
  void wait_for_queue(QSignalSpy& ended, int count, int timeout_ms);
  void stop_unfinished_jobs();

  QTemporaryDir dir_;
  QString config_, db_;
  std::unique_ptr<DesignerView> designer_;
  std::unique_ptr<QSignalSpy> queue_ended_;
};

// A local queue's log: lmk submit's lines on stderr, then the jobs and study tables on stdout.
// Its end is said by the errors, else by the summary, never by the tables' footnote.
void JobsTest::a_queue_says_how_it_ended() {
  using lmk::widgets::JobLauncher;
  const QString tables = QStringLiteral(
      "run  step      status\n12   pretrain  KILLED\n\npooling  passages@128\ncls      0.41 ± "
      "0.05\n(fine-tuned at 128 tokens, pretrained at 256; documents@L: windows of at least L "
      "tokens)\n");
  const QString summary = QStringLiteral(
      "lmk submit: 9 jobs did not finish (lmk jobs --db /s/results.db --all shows why)");
  QCOMPARE(JobLauncher::queue_end_text(QStringLiteral("lmk submit: 10 jobs (0 queued before)\n") +
                                       summary + QStringLiteral("\n") + tables),
           summary);
  QCOMPARE(JobLauncher::queue_end_text(
               QStringLiteral("lmk: error: study.dir: cannot create '/x'\n") + tables),
           QStringLiteral("study.dir: cannot create '/x'"));
  QCOMPARE(JobLauncher::queue_end_text(QStringLiteral("lmk submit: 3 jobs\nall done\n")),
           QStringLiteral("all done"));
}

void JobsTest::wait_for_queue(QSignalSpy& ended, int count, int timeout_ms) {
  QTRY_VERIFY_WITH_TIMEOUT(ended.count() >= count, timeout_ms);
}

void JobsTest::stop_unfinished_jobs() {
  if (db_.isEmpty() || !QFileInfo::exists(db_)) return;
  QStringList ids;
  for (const auto& [run, job] : stored_jobs(db_))
    if (!job.ended) ids << QString::number(run);
  if (ids.isEmpty()) return;
  QProcess cancel;
  cancel.start(lmk::widgets::lmk_program(),
               QStringList{QStringLiteral("cancel")} << ids << QStringLiteral("--db") << db_);
  if (!cancel.waitForFinished(30000)) cancel.kill();
  QElapsedTimer clock;
  clock.start();
  auto ended = [&] {
    for (const auto& [run, job] : stored_jobs(db_))
      if (!job.ended) return false;
    return true;
  };
  while (!ended() && clock.elapsed() < 60000) QTest::qWait(500);
  if (!ended()) qWarning("jobs of %s still not ended after lmk cancel", qPrintable(db_));
}

void JobsTest::curves_continue_per_key() {
  // loss and lr are logged by separate commits: a read between them sees loss at step 3 but lr
  // only at 2. The next read must still bring lr's step 3.
  const QString path = dir_.filePath(QStringLiteral("curves.db"));
  {
    // A real store with run 1; its metrics rows written one by one, as separate commits are.
    lmk::ResultsStore store(path.toStdString());
    QCOMPARE(store.create_run(store.get_or_create_experiment("curves"), {"train", "train"}), 1);
  }
  {
    QSqlDatabase db =
        QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("curves"));
    db.setDatabaseName(path);
    QVERIFY(db.open());
    QSqlQuery query(db);
    auto add = [&](const char* key, int step) {
      QVERIFY(query.exec(QStringLiteral("INSERT INTO metrics (run_id, key, step, value) "
                                        "VALUES (1, '%1', %2, %3)")
                             .arg(QLatin1String(key))
                             .arg(step)
                             .arg(step * 0.5)));
    };
    for (int step = 1; step <= 3; ++step) add("loss", step);
    for (int step = 1; step <= 2; ++step) add("lr", step);
    lmk::widgets::RunCurves first =
        lmk::widgets::load_run_curves(lmk::widgets::store_connection(path), 1);
    QCOMPARE(first.series.size(), 2);
    lmk::widgets::CurveSteps after;
    for (const lmk::widgets::CurveSeries& series : first.series)
      after[series.key] = series.last_step;
    QCOMPARE(after.value(QStringLiteral("loss")), 3);
    QCOMPARE(after.value(QStringLiteral("lr")), 2);
    add("lr", 3);
    add("loss", 4);
    add("lr", 4);
    const lmk::widgets::RunCurves next =
        lmk::widgets::load_run_curves(lmk::widgets::store_connection(path), 1, after);
    QCOMPARE(next.series.size(), 2);
    for (const lmk::widgets::CurveSeries& series : next.series) {
      const QVector<double> expected =
          series.key == QLatin1String("lr") ? QVector<double>{3, 4} : QVector<double>{4};
      QCOMPARE(series.steps, expected);
    }
    // Cut down to about max_points, the last point kept.
    for (int step = 5; step <= 1000; ++step) add("loss", step);
    const lmk::widgets::RunCurves thin =
        lmk::widgets::load_run_curves(lmk::widgets::store_connection(path), 1, {}, 100);
    QCOMPARE(thin.series.first().key, QStringLiteral("loss"));
    QVERIFY(thin.series.first().steps.size() <= 101);
    QCOMPARE(thin.series.first().steps.last(), 1000.0);
    db.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("curves"));
}

void JobsTest::model_keeps_the_selection_when_a_row_goes() {
  JobModel model;
  auto rows_of = [](std::initializer_list<qint64> ids) {
    QVector<JobRow> rows;
    for (qint64 id : ids) {
      JobRow row;
      row.run_id = id;
      row.status = QStringLiteral("RUNNING");
      rows << row;
    }
    return rows;
  };
  model.set_rows(rows_of({1, 2, 3, 4}));
  QItemSelectionModel selection(&model);
  QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
  selection.setCurrentIndex(model.index(2, 0),
                            QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  // Run 2 ended (it is no longer shown), run 5 and 0 came.
  model.set_rows(rows_of({0, 1, 3, 4, 5}));
  QCOMPARE(reset.count(), 0);
  QCOMPARE(model.rowCount(), 5);
  for (int row = 0; row < model.rowCount(); ++row)
    QCOMPARE(model.index(row, 0).data(JobModel::kRunIdRole).toLongLong(),
             QVector<qint64>({0, 1, 3, 4, 5})[row]);
  QCOMPARE(selection.currentIndex().data(JobModel::kRunIdRole).toLongLong(), 3);
  QCOMPARE(selection.selectedRows().size(), 1);
  QCOMPARE(model.find(5)->run_id, 5);
  QVERIFY(model.find(2) == nullptr);
}

void JobsTest::stores_without_jobs_show_the_empty_state() {
  // A store of lmk study (the micro study of the workbench's fixture): runs, no jobs.
  const QString fixture = QStringLiteral(LMK_WORKBENCH_STUDY_DB);
  if (!QFileInfo::exists(fixture)) QSKIP("no fixture store (ctest -R workbench_fixture_study)");
  const QString copy = dir_.filePath(QStringLiteral("no-jobs.db"));
  lmk::widgets::testing::copy_fixture_store(copy);
  JobMonitorView monitor;
  monitor.show();
  QSignalSpy loaded(&monitor, &JobMonitorView::loaded);
  monitor.set_store(copy);
  QTRY_VERIFY_WITH_TIMEOUT(loaded.count() >= 1, 10000);
  QVERIFY2(monitor.empty_text().contains(QStringLiteral("no jobs"), Qt::CaseInsensitive),
           qPrintable(monitor.empty_text()));
  QCOMPARE(monitor.model()->rowCount(), 0);

  // A store of an lmk from before jobs (schema version 2: no jobs table at all), which the
  // workbench upgrades on open as lmk does.
  const QString old_store = dir_.filePath(QStringLiteral("v2.db"));
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("v2"));
    db.setDatabaseName(old_store);
    QVERIFY(db.open());
    QSqlQuery query(db);
    for (const auto& migration : lmk::store_schema::migrations()) {
      if (migration.version > 2) continue;
      for (const QString& statement : QString(migration.sql).split(';', Qt::SkipEmptyParts))
        if (!statement.trimmed().isEmpty()) QVERIFY2(query.exec(statement), qPrintable(statement));
    }
    QVERIFY(query.exec(
        QStringLiteral("PRAGMA application_id = %1").arg(lmk::store_schema::kApplicationId)));
    QVERIFY(query.exec(QStringLiteral("PRAGMA user_version = 2")));
    db.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("v2"));
  monitor.set_store(old_store);
  QTRY_VERIFY_WITH_TIMEOUT(loaded.count() >= 2, 10000);
  QVERIFY2(monitor.empty_text().contains(QStringLiteral("No jobs yet")),
           qPrintable(monitor.empty_text()));
  QCOMPARE(monitor.model()->rowCount(), 0);

  // No store: the empty state says how to get one.
  monitor.set_store(QString());
  QTRY_VERIFY_WITH_TIMEOUT(loaded.count() >= 3, 10000);
  QVERIFY(monitor.empty_text().contains(QStringLiteral("Designer")));
}

void JobsTest::launched_micro_study_appears_and_finishes() {
  // The micro profile of the first study, made smaller in the designer: one source, one pooling,
  // one benchmark, no attention profiles; into a folder and store of its own.
  designer_ = std::make_unique<DesignerView>();
  DesignerView& designer = *designer_;
  designer.show();
  designer.set_profile(QStringLiteral("micro"));
  QVERIFY(designer.open_file(QStringLiteral(LMK_SOURCE_DIR "/experiments/pooling-vs-length.toml")));
  for (const char* name :
       {"finetune.poolings.cls", "finetune.poolings.mean", "finetune.poolings.variable",
        "eval.benchmarks.documents", "eval.benchmarks.code", "eval.benchmarks.passkey",
        "eval.benchmarks.needle"})
    child<QCheckBox>(designer, QString::fromLatin1(name))->click();
  type_into(child<QLineEdit>(designer, QStringLiteral("study.corpus")), QStringLiteral("manpages"));
  type_into(child<QLineEdit>(designer, QStringLiteral("eval.attention_docs")), QStringLiteral("0"));
  type_into(child<QLineEdit>(designer, QStringLiteral("study.dir")),
            dir_.filePath(QStringLiteral("study")));
  db_ = dir_.filePath(QStringLiteral("results.db"));
  type_into(child<QLineEdit>(designer, QStringLiteral("study.db")), db_);
  config_ = dir_.filePath(QStringLiteral("micro.toml"));
  QVERIFY(designer.save_as(config_));

  QSignalSpy launched(&designer, &DesignerView::launched);
  queue_ended_ =
      std::make_unique<QSignalSpy>(designer.launcher(), &lmk::widgets::JobLauncher::queue_ended);
  designer.launch(lmk::ExecutorKind::Local);
  QTRY_VERIFY2_WITH_TIMEOUT(launched.count() == 1, qPrintable(designer.launch_text()), 60000);
  QCOMPARE(launched.first().first().toString(), db_);

  JobMonitorView monitor;
  monitor.resize(1200, 800);
  monitor.show();
  monitor.set_store(db_);
  // Follow it to the end, noting what the monitor showed on the way.
  std::set<QString> statuses_seen;
  QElapsedTimer clock;
  clock.start();
  while (clock.elapsed() < 240000) {
    QTest::qWait(200);
    for (const JobRow& row : monitor.model()->rows()) statuses_seen.insert(row.status);
    if (queue_ended_->count() >= 1 && all_ended(stored_jobs(db_))) break;
  }
  QVERIFY2(queue_ended_->count() >= 1, qPrintable(designer.launch_text()));
  QCOMPARE(queue_ended_->first().at(1).toInt(), 0);
  QVERIFY(statuses_seen.count(QStringLiteral("RUNNING")) == 1);

  // The monitor's last refresh shows what the store holds: every job, FINISHED, its progress.
  const std::map<qint64, StoredJob> jobs = stored_jobs(db_);
  QVERIFY(jobs.size() >= 8);
  QTRY_VERIFY_WITH_TIMEOUT(
      monitor.model()->rowCount() == static_cast<int>(jobs.size()) &&
          shown(monitor, jobs.rbegin()->first, JobModel::kStatus) == QLatin1String("FINISHED"),
      10000);
  qint64 pretrain = 0;
  for (const auto& [run, job] : jobs) {
    QCOMPARE(job.status, QStringLiteral("FINISHED"));
    // The monitor polls every 2 s: a job's last progress may land after its status.
    QTRY_COMPARE_WITH_TIMEOUT(shown(monitor, run, JobModel::kStatus), job.status, 6000);
    QCOMPARE(shown(monitor, run, JobModel::kStep), job.step);
    const QString progress = job.total > 0 ? QStringLiteral("%1/%2 (%3%)")
                                                 .arg(job.done)
                                                 .arg(job.total)
                                                 .arg(static_cast<int>(100 * job.done / job.total))
                                           : QString();
    QTRY_COMPARE_WITH_TIMEOUT(shown(monitor, run, JobModel::kProgress), progress, 6000);
    if (job.step == QLatin1String("pretrain")) pretrain = run;
  }
  QVERIFY(pretrain != 0);

  // The selected job's log tail and training curves.
  QVERIFY(monitor.select_run(pretrain));
  const QString log_end = last_log_line(jobs.at(pretrain).log_path);
  QVERIFY(!log_end.isEmpty());
  QTRY_VERIFY_WITH_TIMEOUT(monitor.log_text().endsWith(log_end), 10000);
  const qint64 losses = stored_metric_count(db_, pretrain, QStringLiteral("loss"));
  QVERIFY(losses > 0);
  QTRY_COMPARE_WITH_TIMEOUT(monitor.curves()->graph(0)->dataCount(), static_cast<int>(losses),
                            10000);
}

void JobsTest::cancel_kills_a_running_job_and_requeue_submits_it_again() {
  if (!designer_ || queue_ended_ == nullptr) QSKIP("needs the launched study");
  DesignerView& designer = *designer_;
  const std::map<qint64, StoredJob> before = stored_jobs(db_);
  // Far more pretraining: the pretraining job runs long enough to be cancelled (the data steps
  // before it are reused).
  type_into(child<QLineEdit>(designer, QStringLiteral("pretrain.steps")), QStringLiteral("200000"));
  QVERIFY(designer.save());
  QSignalSpy launched(&designer, &DesignerView::launched);
  designer.launch(lmk::ExecutorKind::Local);
  QTRY_VERIFY2_WITH_TIMEOUT(launched.count() == 1, qPrintable(designer.launch_text()), 60000);

  JobMonitorView monitor;
  monitor.show();
  monitor.set_store(db_);
  auto running_pretrain = [&]() -> qint64 {
    for (const JobRow& row : monitor.model()->rows())
      if (!before.count(row.run_id) && row.step == QLatin1String("pretrain") &&
          row.status == QLatin1String("RUNNING") && row.progress_done > 0)
        return row.run_id;
    return 0;
  };
  QTRY_VERIFY_WITH_TIMEOUT(running_pretrain() != 0, 60000);
  const qint64 run = running_pretrain();
  // A running job shows its progress as the store has it (the pretraining runs for minutes, so
  // a refresh of the monitor lands while it runs); the store moves on between the monitor's
  // read and this one, so the shown step is at most the stored one.
  auto progress_matches = [&] {
    const StoredJob job = stored_jobs(db_).at(run);
    static const QRegularExpression format(QStringLiteral("^(\\d+)/(\\d+) \\((\\d+)%\\)$"));
    const QRegularExpressionMatch match = format.match(shown(monitor, run, JobModel::kProgress));
    if (!match.hasMatch() || job.total <= 0) return false;
    const qint64 done = match.captured(1).toLongLong();
    return done > 0 && done <= job.done && match.captured(2).toLongLong() == job.total &&
           match.captured(3).toInt() == static_cast<int>(100 * done / job.total);
  };
  QTRY_VERIFY_WITH_TIMEOUT(progress_matches(), 10000);
  QVERIFY(monitor.select_run(run));
  monitor.cancel_selected();
  QTRY_COMPARE_WITH_TIMEOUT(stored_jobs(db_).at(run).status, QStringLiteral("KILLED"), 60000);
  QTRY_COMPARE_WITH_TIMEOUT(shown(monitor, run, JobModel::kStatus), QStringLiteral("KILLED"),
                            10000);
  QVERIFY2(!monitor.message_text().isEmpty(), "the monitor says what the cancel did");
  wait_for_queue(*queue_ended_, 2, 60000);
  // How the queue ended is lmk submit's summary, not the last line of the tables it prints.
  const QString why = queue_ended_->at(1).at(2).toString();
  QVERIFY2(why.contains(QStringLiteral("did not finish")), qPrintable(why));
  QVERIFY2(designer_->launch_text().contains(QStringLiteral("did not finish")),
           qPrintable(designer_->launch_text()));
  // What waited for the pretraining did not run.
  for (const auto& [id, job] : stored_jobs(db_))
    if (!before.count(id) && id != run) QCOMPARE(job.status, QStringLiteral("FAILED"));

  // Requeue: the study is submitted again from the job's run; its pretraining is a job again.
  QVERIFY(monitor.select_run(run));
  const std::map<qint64, StoredJob> after_cancel = stored_jobs(db_);
  QSignalSpy requeue_ended(monitor.launcher(), &lmk::widgets::JobLauncher::queue_ended);
  monitor.requeue_selected();
  auto requeued = [&]() -> qint64 {
    for (const auto& [id, job] : stored_jobs(db_))
      if (!after_cancel.count(id) && job.step == QLatin1String("pretrain") &&
          (job.status == QLatin1String("SCHEDULED") || job.status == QLatin1String("RUNNING")))
        return id;
    return 0;
  };
  QTRY_VERIFY2_WITH_TIMEOUT(requeued() != 0, qPrintable(monitor.message_text()), 60000);
  const qint64 again = requeued();
  QTRY_VERIFY_WITH_TIMEOUT(monitor.select_run(again), 10000);
  QTRY_VERIFY_WITH_TIMEOUT(monitor.model()->find(again)->cancellable(), 10000);
  monitor.cancel_selected();
  QTRY_COMPARE_WITH_TIMEOUT(stored_jobs(db_).at(again).status, QStringLiteral("KILLED"), 60000);
  QTRY_VERIFY_WITH_TIMEOUT(all_ended(stored_jobs(db_)), 60000);
  wait_for_queue(requeue_ended, 1, 60000);
}

QTEST_MAIN(JobsTest)
#include "jobs_test.moc"
