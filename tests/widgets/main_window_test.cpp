// The workbench window over a real store (the micro study built by the core): every view
// loads, --screenshot renders each of them, bad files leave the views empty with a reason, and
// the recent-files list lives in QSettings.
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QElapsedTimer>
#include <QFile>
#include <QGuiApplication>
#include <QImage>
#include <QMenuBar>
#include <QProcess>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QtTest>

#include "core/store/results_store.h"
#include "core/store/schema.h"
#include "core/util/runtime.h"
#include "tests/widgets/fixture_store.h"
#include "widgets/main_window.h"
#include "widgets/pivot_model.h"
#include "widgets/plot_view.h"
#include "widgets/results_view.h"
#include "widgets/store_connection.h"
#include "widgets/store_view.h"

using lmk::widgets::MainWindow;
using lmk::widgets::StoreView;

class MainWindowTest : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
  }

  void every_view_loads_the_study_store() {
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    QVERIFY(window.views().size() >= 8);
    std::vector<std::unique_ptr<QSignalSpy>> spies;
    for (StoreView* view : window.views())
      spies.push_back(std::make_unique<QSignalSpy>(view, &StoreView::loaded));
    window.open_store(LMK_WORKBENCH_STUDY_DB);
    QCOMPARE(window.db_path(), QFileInfo(LMK_WORKBENCH_STUDY_DB).absoluteFilePath());
    for (size_t i = 0; i < spies.size(); ++i) {
      QVERIFY2(spies[i]->count() > 0 || spies[i]->wait(30000),
               qPrintable(window.views()[i]->title()));
      QCOMPARE(window.views()[i]->db_path(), window.db_path());
    }
    const QStringList recent = QSettings().value("recent_stores").toStringList();
    QCOMPARE(recent.value(0), window.db_path());
  }

  // First start (no saved geometry): most of the screen's available area, inside it; then the
  // user's own size comes back.
  void the_first_window_fits_the_screen_and_the_next_is_the_users() {
    QSettings().remove("window/geometry");
    const QRect available = QGuiApplication::primaryScreen()->availableGeometry();
    {
      MainWindow window;
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      // 9/10 of the available area, or the window's minimum where that is larger (this test's
      // offscreen screen is 800 px wide, narrower than the widest view's controls).
      const QSize minimum = window.minimumSizeHint();
      const QString sizes = QString("%1x%2, minimum %3x%4, available %5x%6")
                                .arg(window.width())
                                .arg(window.height())
                                .arg(minimum.width())
                                .arg(minimum.height())
                                .arg(available.width())
                                .arg(available.height());
      QVERIFY2(
          std::abs(window.width() - std::max(minimum.width(), available.width() * 9 / 10)) <= 1,
          qPrintable(sizes));
      QVERIFY2(
          std::abs(window.height() - std::max(minimum.height(), available.height() * 9 / 10)) <= 1,
          qPrintable(sizes));
      window.resize(available.width() / 2, available.height() / 2);
      window.close();  // saves the geometry
    }
    MainWindow again;
    again.show();
    QCOMPARE(again.size(),
             QSize(std::max(again.minimumSizeHint().width(), available.width() / 2),
                   std::max(again.minimumSizeHint().height(), available.height() / 2)));
    QSettings().remove("window/geometry");
  }

  // The first window on a 1600 x 1000 screen is 1440 x 900: the designer's whole form shows
  // there, no field cut off and no scrollbar (it had both: one grid row per box across the
  // columns, five benchmark boxes in a row).
  void the_designer_fits_the_first_window_of_a_laptop_screen() {
    MainWindow window;
    window.resize(1440, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    window.tabs()->setCurrentIndex(0);
    QCoreApplication::processEvents();
    QCOMPARE(window.size(), QSize(1440, 900));
    auto* scroll = window.views()[0]->findChild<QScrollArea*>();
    QVERIFY(scroll != nullptr);
    QVERIFY2(
        !scroll->horizontalScrollBar()->isVisible() && !scroll->verticalScrollBar()->isVisible(),
        qPrintable(QString("form %1x%2 in %3x%4")
                       .arg(scroll->widget()->minimumSizeHint().width())
                       .arg(scroll->widget()->minimumSizeHint().height())
                       .arg(scroll->viewport()->width())
                       .arg(scroll->viewport()->height())));
  }

  // Help: the user guide, every shortcut of the menus, and the versions of what it runs on.
  void help_shows_the_guide_the_shortcuts_and_the_versions() {
    MainWindow window;
    window.open_store(LMK_WORKBENCH_STUDY_DB);
    QStringList menus;
    for (QAction* action : window.menuBar()->actions()) menus << action->text();
    QVERIFY2(menus.contains("&Help"), qPrintable(menus.join(", ")));
    QVERIFY2(window.user_guide_markdown().startsWith("# "),
             qPrintable(window.user_guide_markdown().left(80)));
    QVERIFY(window.user_guide_markdown().contains("lmk-workbench"));
    const QString shortcuts = window.shortcuts_text();
    for (const char* key : {"Ctrl+O", "Ctrl+E", "Ctrl+1", "Ctrl+9", "Ctrl+0", "F1"})
      QVERIFY2(shortcuts.contains(key), qPrintable(key + QString(" in:\n") + shortcuts));
    const QString about = window.about_text();
    for (const QString& part :
         {QString::fromLatin1(qVersion()), QString("QCustomPlot 2."), QString("SQLite 3."),
          QString("lmk 0.1.0"), QString("schema %1").arg(lmk::store_schema::current_version())})
      QVERIFY2(about.contains(part), qPrintable(part + " in: " + about));
  }

  // Ctrl+E: the current view in every format the plot export offers, plot view or not.
  void export_writes_the_current_view_as_png_pdf_or_svg() {
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    QSignalSpy loaded(window.views()[8], &StoreView::loaded);  // the needle map
    window.open_store(LMK_WORKBENCH_STUDY_DB);
    window.tabs()->setCurrentIndex(8);
    QVERIFY(loaded.count() > 0 || loaded.wait(30000));
    QTemporaryDir dir;
    for (int tab : {0, 8})
      for (const char* suffix : {"png", "pdf", "svg"}) {
        window.tabs()->setCurrentIndex(tab);
        const QString path = dir.filePath(QString("view-%1.%2").arg(tab).arg(suffix));
        window.export_view_to(path);
        QVERIFY2(QFileInfo(path).size() > 1000, qPrintable(path));
      }
    QVERIFY_THROWS_EXCEPTION(std::exception, window.export_view_to(dir.filePath("view.gif")));
    window.show_results();
    QCOMPARE(window.tabs()->currentWidget(), static_cast<QWidget*>(window.views()[2]));
  }

  // A run writing into the store every 0.3 s: the visible view refreshes while it writes, not
  // only once the writes stop (a refresh waiting for 2 s of quiet would never come here), and a
  // slow load on a busy machine is not replaced by the next change before it shows its data.
  void the_visible_view_refreshes_while_a_run_writes() {
    QTemporaryDir dir;
    const QString path = dir.filePath("results.db");
    lmk::widgets::testing::copy_fixture_store(path);
    MainWindow window;
    window.show();
    window.open_store(path);
    StoreView* view = window.views()[2];  // Results
    window.tabs()->setCurrentWidget(view);
    QSignalSpy loaded(view, &StoreView::loaded);
    QVERIFY(loaded.wait(30000));
    loaded.clear();

    QElapsedTimer clock;
    int writes = 0;
    {
      QSqlDatabase writer = QSqlDatabase::addDatabase("QSQLITE", "writer");
      writer.setDatabaseName(path);
      QVERIFY(writer.open());
      QSqlQuery(writer).exec("PRAGMA journal_mode = WAL");
      clock.start();
      while (clock.elapsed() < 60000 && loaded.isEmpty()) {
        QSqlQuery insert(writer);
        QVERIFY(insert.exec(QString("INSERT INTO metrics (run_id, key, step, value) "
                                    "SELECT MIN(id), 'probe', %1, 1.0 FROM runs")
                                .arg(writes++)));
        QTest::qWait(300);
      }
      writer.close();
    }
    QSqlDatabase::removeDatabase("writer");
    QVERIFY2(!loaded.isEmpty(), qPrintable(QString("no refresh during %1 writes").arg(writes)));
  }

  // A view hidden while the store changed reads it again when it is shown: after a launch the
  // Training view showed "No training runs" until F5 while the Jobs view drew the curves.
  void a_hidden_view_reads_the_changed_store_when_shown() {
    QTemporaryDir dir;
    const QString path = dir.filePath("results.db");
    lmk::widgets::testing::copy_fixture_store(path);
    lmk::widgets::testing::exec_in_store(
        path, {"CREATE TABLE held AS SELECT * FROM metrics WHERE key = 'loss'",
               "DELETE FROM metrics WHERE key = 'loss'"});
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    auto* training = qobject_cast<lmk::widgets::PlotView*>(window.views()[3]);
    QVERIFY(training != nullptr && training->title() == "Training");
    StoreView* jobs = window.views()[1];
    window.tabs()->setCurrentWidget(jobs);
    QSignalSpy training_loaded(training, &StoreView::loaded);
    window.open_store(path);
    QVERIFY(training_loaded.count() > 0 || training_loaded.wait(30000));
    QVERIFY2(!training->message().isEmpty(), "no losses logged yet: no curves");

    // The runs log their losses (as a launched study's do) while the Jobs view is shown.
    QSignalSpy jobs_loaded(jobs, &StoreView::loaded);
    lmk::widgets::testing::exec_in_store(path, {"INSERT INTO metrics SELECT * FROM held"});
    QVERIFY(jobs_loaded.wait(30000));  // the watcher's refresh of the visible view
    training_loaded.clear();
    window.tabs()->setCurrentWidget(training);  // no F5
    QVERIFY(training_loaded.wait(30000));
    QVERIFY2(training->message().isEmpty(), qPrintable(training->message()));
  }

  // A run of this host whose process ended without recording how (SIGKILL) is shown FAILED
  // when the store is opened, as lmk results shows it, not RUNNING for ever.
  void a_run_whose_process_died_is_shown_failed() {
    QTemporaryDir dir;
    const QString path = dir.filePath("results.db");
    lmk::widgets::testing::copy_fixture_store(path);
    { const lmk::ResultsStore upgraded(path.toStdString()); }  // the schema with runs.pid
    // This process's pid with another start time: a process that reused the pid is not it.
    lmk::widgets::testing::exec_in_store(
        path, {QString("UPDATE runs SET status = 'RUNNING', host = '%1', pid = %2, "
                       "process_start = 'not this one' WHERE id = 1")
                   .arg(QString::fromStdString(lmk::host_name()))
                   .arg(QCoreApplication::applicationPid())});
    MainWindow window;
    window.open_store(path);
    const lmk::ResultsStore store(path.toStdString(), lmk::ResultsStore::OpenMode::Existing);
    const lmk::RunRecord run = store.get_run(1);
    QCOMPARE(run.status, lmk::RunStatus::Failed);
    QVERIFY2(QString::fromStdString(run.error_text).contains("ended without recording how"),
             run.error_text.c_str());
  }

  // F1 opens the user guide at the current view's section, with the guide's contents beside it.
  void the_user_guide_opens_at_the_current_views_section() {
    MainWindow window;
    window.resize(1200, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    for (int tab : {3, 0}) {
      window.tabs()->setCurrentIndex(tab);
      const QString title = window.views()[tab]->title();
      window.activateWindow();
      QVERIFY(QTest::qWaitForWindowActive(&window));
      QTest::keyClick(&window, Qt::Key_F1);
      QDialog* guide = nullptr;
      QTRY_VERIFY((guide = window.findChild<QDialog*>("user_guide")) != nullptr);
      auto* contents = guide->findChild<QTreeWidget*>("guide_contents");
      auto* text = guide->findChild<QTextBrowser*>("guide_text");
      QVERIFY(contents != nullptr && text != nullptr);
      // Every heading of the guide is in the contents.
      int headings = 0;
      for (const QString& line : window.user_guide_markdown().split('\n'))
        headings += line.startsWith('#');
      int items = 0;
      for (QTreeWidgetItemIterator it(contents); *it; ++it) ++items;
      QCOMPARE(items, headings);
      // The first line shown is the view's own heading.
      QTRY_COMPARE(text->cursorForPosition(QPoint(2, 2)).block().text(), title);
      QCOMPARE(contents->currentItem()->text(0), title);
      guide->close();
      delete guide;
    }
  }

  // The first window on a 1600 x 1000 screen (1440 x 900) and a window filling a 1366 x 768
  // screen: every view fits — no horizontal scrolling in the designer or the explorer's side
  // panel, the runs table's score and every pivot column in sight, lists not cut off.
  void every_view_fits_a_laptop_window() {
    for (const QSize size : {QSize(1440, 900), QSize(1366, 768)}) {
      MainWindow window;
      window.resize(size);
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      std::vector<std::unique_ptr<QSignalSpy>> spies;
      for (StoreView* view : window.views())
        spies.push_back(std::make_unique<QSignalSpy>(view, &StoreView::loaded));
      window.open_store(LMK_WORKBENCH_STUDY_DB);
      for (auto& spy : spies) QVERIFY(spy->count() > 0 || spy->wait(30000));
      QCOMPARE(window.size(), size);
      const QString at = QString("%1x%2").arg(size.width()).arg(size.height());
      for (int tab = 0; tab < static_cast<int>(window.views().size()); ++tab) {
        window.tabs()->setCurrentIndex(tab);
        QCoreApplication::processEvents();
        StoreView* view = window.views()[tab];
        const QString where = at + " " + view->title();
        QVERIFY2(view->minimumSizeHint().width() <= view->width(),
                 qPrintable(where + QString(": needs %1 px").arg(view->minimumSizeHint().width())));
        for (QScrollArea* scroll : view->findChildren<QScrollArea*>()) {
          if (!scroll->isVisible() || scroll->inherits("QAbstractItemView")) continue;
          QVERIFY2(!scroll->horizontalScrollBar()->isVisible(),
                   qPrintable(where + ": scrolls sideways (" + scroll->objectName() + ")"));
        }
        for (QComboBox* combo : view->findChildren<QComboBox*>()) {
          if (!combo->isVisible() ||
              combo->sizeAdjustPolicy() == QComboBox::AdjustToMinimumContentsLengthWithIcon)
            continue;
          QVERIFY2(combo->width() >= combo->sizeHint().width(),
                   qPrintable(where + ": list " + combo->objectName() + " cut (" +
                              combo->currentText() + ")"));
        }
      }
      // The results: the runs table's last column (the score) and the pivot's every column.
      window.show_results();
      auto* results = qobject_cast<lmk::widgets::ResultsView*>(window.views()[2]);
      QVERIFY(results != nullptr);
      int tables = 0;
      for (int page : {0, 1}) {
        results->tabs()->setCurrentIndex(page);
        if (page == 1) QTRY_VERIFY_WITH_TIMEOUT(results->pivot_model()->columnCount() > 1, 30000);
        QCoreApplication::processEvents();
        for (QTableView* table : results->findChildren<QTableView*>()) {
          if (!table->isVisible() || table->model() == nullptr) continue;
          const int last = table->model()->columnCount() - 1;
          if (last < 1) continue;
          ++tables;
          QVERIFY2(
              table->columnViewportPosition(last) + table->columnWidth(last) <=
                  table->viewport()->width(),
              qPrintable(QString("%1 %2: the last column (%3) ends at %4 of %5 px")
                             .arg(at, results->tabs()->tabText(page),
                                  table->model()->headerData(last, Qt::Horizontal).toString())
                             .arg(table->columnViewportPosition(last) + table->columnWidth(last))
                             .arg(table->viewport()->width())));
        }
      }
      QCOMPARE(tables, 2);
    }
  }

  void a_file_that_is_not_a_store_leaves_the_views_empty_and_says_why() {
    QTemporaryDir dir;
    const QString path = dir.filePath("notes.db");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not a database\n");
    file.close();
    MainWindow window;
    window.open_store(path);
    QVERIFY(window.db_path().isEmpty());
    QVERIFY2(window.statusBar()->currentMessage().contains("notes.db"),
             qPrintable(window.statusBar()->currentMessage()));
    for (StoreView* view : window.views()) QVERIFY(view->db_path().isEmpty());
    QVERIFY_THROWS_EXCEPTION(lmk::widgets::StoreError, lmk::widgets::store_connection(path));
  }

  // A store of an older schema is upgraded as lmk upgrades it: a version-4 store's whole-set
  // scores (the mean of the parts' means) become the mean over all the queries, which the views
  // then show as lmk does.
  void an_older_store_is_upgraded_on_open() {
    QTemporaryDir dir;
    const QString path = dir.filePath("v4.db");
    lmk::widgets::testing::copy_fixture_store(path);
    double pooled = 0;
    qint64 run = 0;
    {
      QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "v4");
      db.setDatabaseName(path);
      QVERIFY(db.open());
      QSqlQuery q(db);
      QVERIFY(
          q.exec("SELECT q.run_id, AVG(m.value) FROM eval_queries q JOIN query_metrics m ON "
                 "m.query = q.id WHERE q.dataset = 'passkey' AND m.metric = 'ndcg_at_1' "
                 "GROUP BY q.run_id ORDER BY q.run_id LIMIT 1"));
      QVERIFY(q.next());
      run = q.value(0).toLongLong();
      pooled = q.value(1).toDouble();
      QVERIFY(q.exec(QString("UPDATE eval_results SET value = 0.123 WHERE run_id = %1 AND "
                             "dataset = 'passkey' AND metric = 'ndcg_at_1' AND group_kind = 'all'")
                         .arg(run)));
      QCOMPARE(q.numRowsAffected(), 1);
      // A version-4 file has none of what versions 5 and 6 added: the process columns go.
      QVERIFY(
          q.exec("SELECT name FROM pragma_table_info('runs') WHERE name IN ('pid', "
                 "'process_start')"));
      QStringList added;
      while (q.next()) added << q.value(0).toString();
      for (const QString& column : added)
        QVERIFY2(q.exec("ALTER TABLE runs DROP COLUMN " + column), qPrintable(column));
      QVERIFY(q.exec("PRAGMA user_version = 4"));
      db.close();
    }
    QSqlDatabase::removeDatabase("v4");
    lmk::widgets::store_connection(path);  // the workbench's reader opens (and upgrades) it
    QSqlDatabase db = QSqlDatabase::addDatabase("QSQLITE", "v4-read");
    db.setDatabaseName(path);
    QVERIFY(db.open());
    QSqlQuery q(db);
    QVERIFY(q.exec("PRAGMA user_version"));
    QVERIFY(q.next());
    QCOMPARE(q.value(0).toInt(), lmk::store_schema::current_version());
    QVERIFY(q.exec(QString("SELECT value FROM eval_results WHERE run_id = %1 AND dataset = "
                           "'passkey' AND metric = 'ndcg_at_1' AND group_kind = 'all'")
                       .arg(run)));
    QVERIFY(q.next());
    QVERIFY(std::abs(q.value(0).toDouble() - pooled) < 1e-12);
    q = QSqlQuery();
    db.close();
    db = QSqlDatabase();
    QSqlDatabase::removeDatabase("v4-read");
  }

  // The command README's screenshots come from: one PNG per view, of the requested size.
  void screenshot_mode_renders_every_view_offscreen() {
    QTemporaryDir dir;
    QProcess workbench;
    workbench.start(
        QString(LMK_BINARY_DIR) + "/app/lmk-workbench",
        {"--db", LMK_WORKBENCH_STUDY_DB, "--screenshot", dir.path(), "--size", "1000x700"});
    QVERIFY(workbench.waitForFinished(120000));
    QCOMPARE(workbench.exitCode(), 0);
    const QStringList files =
        QString::fromUtf8(workbench.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
    QVERIFY(files.size() >= 8);
    QVERIFY2(files.filter("compare.png").size() == 1, qPrintable(files.join(", ")));
    QVERIFY2(files.filter("needle-map.png").size() == 1, qPrintable(files.join(", ")));
    for (const QString& path : files) {
      QImage image(path);
      QVERIFY2(!image.isNull(), qPrintable(path));
      QCOMPARE(image.size(), QSize(1000, 700));
      // Not a blank window: a rendered view has many colours.
      QSet<QRgb> colours;
      for (int y = 0; y < image.height(); y += 7)
        for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
      QVERIFY2(colours.size() > 8, qPrintable(path));
    }
  }

  // lmk-workbench --explore FILE --screenshot DIR, no store: the explorer shows the file (the
  // README's explorer picture); views without a store do not hold the screenshots up (the Results
  // view hung when hidden with no store open).
  void screenshot_mode_shows_explorer_files_without_a_store() {
    QTemporaryDir dir;
    const QString model = lmk::widgets::testing::fixture_model(QStringLiteral("lmk-32"));
    QVERIFY(!model.isEmpty());
    const QString file = dir.filePath("doc.lmkattn");
    QProcess lmk;
    lmk.start(lmk::widgets::lmk_program(),
              {"attention", "--model", model, "--explore", file, "--text",
               "The explorer shows where every landmark looks. Two sentences, one query.",
               "--query", "one query"});
    QVERIFY(lmk.waitForFinished(120000));
    QVERIFY2(lmk.exitCode() == 0, lmk.readAllStandardError().constData());
    QProcess workbench;
    workbench.start(
        QString(LMK_BINARY_DIR) + "/app/lmk-workbench",
        {"--explore", file, "--screenshot", dir.filePath("shots"), "--size", "1000x700"});
    QVERIFY(workbench.waitForFinished(60000));
    QCOMPARE(workbench.exitCode(), 0);
    const QStringList files =
        QString::fromUtf8(workbench.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
    const QStringList explorer = files.filter("explorer.png");
    QCOMPARE(explorer.size(), 1);
    const QImage image(explorer.front());
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 5)
      for (int x = 0; x < image.width(); x += 5) colours.insert(image.pixel(x, y));
    QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));

    workbench.start(QString(LMK_BINARY_DIR) + "/app/lmk-workbench",
                    {"--explore", dir.filePath("missing.lmkattn"), "--screenshot", dir.path()});
    QVERIFY(workbench.waitForFinished(60000));
    QCOMPARE(workbench.exitCode(), 2);
    QVERIFY(QString::fromUtf8(workbench.readAllStandardError()).contains("missing.lmkattn"));
  }

  // Without a display: no QT_QPA_PLATFORM, no DISPLAY, no WAYLAND_DISPLAY. --help and
  // --version need none; --screenshot goes offscreen by itself.
  void help_version_and_screenshots_need_no_display() {
    QProcessEnvironment headless = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
      headless.remove(QString::fromLatin1(name));
    QProcess workbench;
    workbench.setProcessEnvironment(headless);
    workbench.start(QString(LMK_BINARY_DIR) + "/app/lmk-workbench", {"--help"});
    QVERIFY(workbench.waitForFinished(30000));
    QCOMPARE(workbench.exitStatus(), QProcess::NormalExit);
    QCOMPARE(workbench.exitCode(), 0);
    QVERIFY(QString::fromUtf8(workbench.readAllStandardOutput()).contains("--screenshot"));
    workbench.start(QString(LMK_BINARY_DIR) + "/app/lmk-workbench", {"--version"});
    QVERIFY(workbench.waitForFinished(30000));
    QCOMPARE(workbench.exitCode(), 0);
    QVERIFY(QString::fromUtf8(workbench.readAllStandardOutput()).contains("0.1.0"));
    QTemporaryDir dir;
    workbench.start(QString(LMK_BINARY_DIR) + "/app/lmk-workbench",
                    {"--db", LMK_WORKBENCH_STUDY_DB, "--screenshot", dir.path()});
    QVERIFY(workbench.waitForFinished(120000));
    QCOMPARE(workbench.exitStatus(), QProcess::NormalExit);
    QVERIFY2(workbench.exitCode() == 0, workbench.readAllStandardError().constData());
    const QString printed = QString::fromUtf8(workbench.readAllStandardError());
    QVERIFY(QString::fromUtf8(workbench.readAllStandardOutput()).contains("results.png"));
    // Rendering offscreen draws on no invalid device.
    QVERIFY2(!printed.contains("QPainter"), qPrintable(printed));
    // A plain start with no display says so and exits 2 (Qt's xcb plugin would abort).
    workbench.start(QString(LMK_BINARY_DIR) + "/app/lmk-workbench", QStringList());
    QVERIFY(workbench.waitForFinished(30000));
    QCOMPARE(workbench.exitStatus(), QProcess::NormalExit);
    QCOMPARE(workbench.exitCode(), 2);
    const QString said = QString::fromUtf8(workbench.readAllStandardError());
    QVERIFY2(said.contains("no display") && said.contains("QT_QPA_PLATFORM=offscreen"),
             qPrintable(said));
  }

  // Under a real X server (Xvfb: xcb, as on a desktop) the screenshots drew on null pixmaps now
  // and then: QCustomPlot replotted at 0 × 0 before the views were laid out ("QPainter::begin:
  // Paint device returned engine == 0", six times, in about one start in three).
  void screenshots_under_a_real_x_server_draw_on_no_null_device() {
    if (QStandardPaths::findExecutable("xvfb-run").isEmpty())
      QSKIP("no xvfb-run (scripts/setup installs Debian's xvfb)");
    for (int run = 0; run < 3; ++run) {
      QTemporaryDir dir;
      QProcess workbench;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert("QT_QPA_PLATFORM", "xcb");
      workbench.setProcessEnvironment(env);
      workbench.start("xvfb-run", {"-a", "-s", "-screen 0 1600x1000x24",
                                   QString(LMK_BINARY_DIR) + "/app/lmk-workbench", "--db",
                                   LMK_WORKBENCH_STUDY_DB, "--screenshot", dir.path()});
      QVERIFY(workbench.waitForFinished(180000));
      const QString printed = QString::fromUtf8(workbench.readAllStandardError());
      QVERIFY2(workbench.exitCode() == 0, qPrintable(printed));
      QVERIFY2(!printed.contains("QPainter"), qPrintable(printed));
      QVERIFY(QString::fromUtf8(workbench.readAllStandardOutput()).contains("compare.png"));
    }
  }

  // On the desktop a missing store opens the window, which says so; it does not exit.
  void a_missing_store_on_the_desktop_opens_the_window_and_says_so() {
    QTemporaryDir dir;
    QProcess workbench;
    workbench.start(QString(LMK_BINARY_DIR) + "/app/lmk-workbench",
                    {"--db", dir.filePath("missing.db")});
    QVERIFY(workbench.waitForStarted(10000));
    QString said;
    QElapsedTimer waited;
    waited.start();
    while (!said.contains("missing.db") && waited.elapsed() < 30000) {
      workbench.waitForReadyRead(500);
      said += QString::fromUtf8(workbench.readAllStandardError());
    }
    QVERIFY2(said.contains("missing.db: no such results store"), qPrintable(said));
    QVERIFY2(!workbench.waitForFinished(2000), qPrintable(said));  // the window stays open
    QCOMPARE(workbench.state(), QProcess::Running);
    workbench.kill();
    workbench.waitForFinished(10000);
    MainWindow window;  // what that window shows
    window.open_store(dir.filePath("missing.db"));
    QVERIFY(window.db_path().isEmpty());
    QVERIFY2(window.statusBar()->currentMessage().contains("missing.db: no such results store"),
             qPrintable(window.statusBar()->currentMessage()));
  }

  void screenshot_mode_rejects_a_missing_store_with_exit_code_2() {
    QTemporaryDir dir;
    QProcess workbench;
    workbench.start(QString(LMK_BINARY_DIR) + "/app/lmk-workbench",
                    {"--db", dir.filePath("missing.db"), "--screenshot", dir.path()});
    QVERIFY(workbench.waitForFinished(60000));
    QCOMPARE(workbench.exitCode(), 2);
    QVERIFY(QString::fromUtf8(workbench.readAllStandardError()).contains("missing.db"));
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
