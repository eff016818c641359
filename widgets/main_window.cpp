#include "widgets/main_window.h"

#include <qcustomplot.h>
#include <sqlite3.h>
#include <QAbstractTextDocumentLayout>
#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QGuiApplication>
#include <QKeySequence>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QProcess>
#include <QRegularExpression>
#include <QScreen>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTimer>
#include <QTreeWidget>
#include <QVBoxLayout>

#include <map>
#include <stdexcept>

#include "core/store/results_store.h"
#include "core/store/schema.h"
#include "widgets/attention_view.h"
#include "widgets/compare_view.h"
#include "widgets/curves_view.h"
#include "widgets/designer_view.h"
#include "widgets/explorer_view.h"
#include "widgets/job_monitor_view.h"
#include "widgets/length_view.h"
#include "widgets/needle_map_view.h"
#include "widgets/plot_export.h"
#include "widgets/plot_view.h"
#include "widgets/results_view.h"
#include "widgets/store_connection.h"
#include "widgets/store_view.h"
#include "widgets/training_view.h"

namespace lmk::widgets {
namespace {

constexpr int kMaxRecent = 8;
const char* const kRecentKey = "recent_stores";

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle(QStringLiteral("Landmark Workbench"));
  tabs_ = new QTabWidget(this);
  tabs_->setDocumentMode(true);
  setCentralWidget(tabs_);

  auto* designer = new DesignerView(this);
  auto* monitor = new JobMonitorView(this);
  auto* results = new ResultsView(this);
  results_ = results;
  auto* compare = new CompareView(this);
  explorer_ = new ExplorerView(this);
  views_ = {designer,
            monitor,
            results,
            new TrainingView(this),
            new AttentionView(this),
            explorer_,
            new LengthView(this),
            new CurvesView(this),
            new NeedleMapView(this),
            compare};

  for (StoreView* view : views_) {
    tabs_->addTab(view, view->title());
    connect(view, &StoreView::status_message, this,
            [this](const QString& text) { statusBar()->showMessage(text, 10000); });
  }

  // Two runs selected in the results browser: query by query in the comparison panel.
  connect(results, &ResultsView::compare_requested, this, [this, compare](qint64 a, qint64 b) {
    compare->set_runs(a, b);
    tabs_->setCurrentWidget(compare);
  });

  // A launched study records its jobs in its store: show that store, on the monitor.
  connect(designer, &DesignerView::launched, this, [this, monitor](const QString& db_path) {
    if (QFileInfo(db_path).absoluteFilePath() != db_path_) open_store(db_path);
    tabs_->setCurrentWidget(monitor);
  });

  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open results store…"), QKeySequence::Open, this, &MainWindow::choose_store);
  recent_menu_ = file->addMenu(tr("Open &recent"));
  file->addAction(tr("&Refresh"), QKeySequence::Refresh, this, [this] {
    stale_.clear();
    end_lost_runs();
    for (StoreView* view : views_) view->refresh();
  });
  file->addAction(tr("&Export current view…"), QKeySequence(tr("Ctrl+E")), this,
                  &MainWindow::export_current_view);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::closeAllWindows);
  QMenu* view_menu = menuBar()->addMenu(tr("&View"));
  // Ctrl+1 … Ctrl+9, then Ctrl+0 for the tenth view.
  for (int i = 0; i < static_cast<int>(views_.size()); ++i)
    view_menu->addAction(
        views_[i]->title(),
        i < 10 ? QKeySequence(QStringLiteral("Ctrl+%1").arg((i + 1) % 10)) : QKeySequence(), this,
        [this, i] { tabs_->setCurrentIndex(i); });
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&User guide"), QKeySequence::HelpContents, this, [this] {
    auto* view = qobject_cast<StoreView*>(tabs_->currentWidget());
    show_user_guide(view != nullptr ? view->title() : QString());
  });
  help->addAction(tr("&Keyboard shortcuts"), this,
                  [this] { show_text_dialog(tr("Keyboard shortcuts"), shortcuts_text(), false); });
  help->addAction(tr("&About Landmark Workbench"), this, [this] {
    QMessageBox::about(this, tr("About Landmark Workbench"), about_text());
  });
  update_recent_menu();

  // A run writing into the store changes the database or its WAL file: refresh the visible view
  // at most every 2 s (the job monitor also polls on its own).
  watcher_ = new QFileSystemWatcher(this);
  refresh_timer_ = new QTimer(this);
  refresh_timer_->setSingleShot(true);
  refresh_timer_->setInterval(2000);
  // Runs write continuously: refresh 2 s after the first change, not after 2 s of quiet.
  const auto changed = [this] {
    watch_store_files();
    // Every view is behind the store now: the visible one refreshes below, the others when shown.
    for (StoreView* view : views_) stale_.insert(view);
    if (!refresh_timer_->isActive()) refresh_timer_->start();
  };
  connect(watcher_, &QFileSystemWatcher::fileChanged, this, changed);
  connect(watcher_, &QFileSystemWatcher::directoryChanged, this, changed);
  connect(refresh_timer_, &QTimer::timeout, this, &MainWindow::refresh_visible_view);
  for (StoreView* view : views_)
    connect(view, &StoreView::loaded, this, [this, view] {
      if (view != refreshing_) return;
      refreshing_ = nullptr;
      if (refresh_due_ && !refresh_timer_->isActive()) refresh_timer_->start();
      refresh_due_ = false;
    });

  QSettings settings;
  // The user's last size and place, else most of the screen's available area (Qt's default
  // size from the widgets' hints cut the designer's fields off).
  if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray())) {
    if (const QScreen* screen = QGuiApplication::primaryScreen()) {
      const QRect available = screen->availableGeometry();
      resize(available.width() * 9 / 10, available.height() * 9 / 10);
      move(available.center() - rect().center());
    }
  }
  tabs_->setCurrentIndex(settings.value(QStringLiteral("window/tab"), 0).toInt());
  connect(tabs_, &QTabWidget::currentChanged, this, [this](int index) {
    QSettings().setValue(QStringLiteral("window/tab"), index);
    // A view the store changed under while it was hidden reads it again when shown.
    auto* view = qobject_cast<StoreView*>(tabs_->widget(index));
    if (view != nullptr && stale_.contains(view)) refresh_visible_view();  // it un-stales it
  });
  statusBar()->showMessage(tr("No results store open — File → Open, or design a study"));
}

void MainWindow::open_store(const QString& db_path) {
  db_path_ = QFileInfo(db_path).absoluteFilePath();
  try {
    store_connection(db_path_);
  } catch (const StoreError& e) {
    statusBar()->showMessage(QString::fromUtf8(e.what()));
    // Not modal: a bad file named on the command line must not stop screenshots or tests.
    auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot open results store"),
                                QString::fromUtf8(e.what()), QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    db_path_.clear();
  }
  stale_.clear();
  end_lost_runs();
  for (StoreView* view : views_) view->set_store(db_path_);
  if (!watcher_->files().isEmpty()) watcher_->removePaths(watcher_->files());
  if (!watcher_->directories().isEmpty()) watcher_->removePaths(watcher_->directories());
  if (db_path_.isEmpty()) return;
  watch_store_files();
  setWindowTitle(QStringLiteral("%1 — Landmark Workbench").arg(QFileInfo(db_path_).fileName()));
  statusBar()->showMessage(db_path_, 5000);

  QSettings settings;
  QStringList recent = settings.value(kRecentKey).toStringList();
  recent.removeAll(db_path_);
  recent.prepend(db_path_);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue(kRecentKey, recent);
  update_recent_menu();
}

void MainWindow::end_lost_runs() {
  if (db_path_.isEmpty()) return;
  // Runs of this host whose process died without recording how are shown FAILED, saying so, as
  // lmk results and lmk jobs show them (ResultsStore::end_lost_runs), not RUNNING for ever.
  try {
    ResultsStore store(QFile::encodeName(db_path_).toStdString(), ResultsStore::OpenMode::Existing);
    if (const size_t ended = store.end_lost_runs())
      statusBar()->showMessage(
          tr("%n run(s) whose process ended without recording how are now FAILED", "", ended),
          10000);
  } catch (const std::exception&) {
    // A store this window cannot write is still shown as it is.
  }
}

void MainWindow::watch_store_files() {
  if (db_path_.isEmpty()) return;
  // The -wal file comes and goes (SQLite removes it when the last connection closes), and a
  // watcher forgets a file that was removed: the folder tells when it is back.
  const QStringList watched = watcher_->files() + watcher_->directories();
  for (const QString& path :
       {db_path_, db_path_ + QStringLiteral("-wal"), QFileInfo(db_path_).absolutePath()})
    if (!watched.contains(path) && QFileInfo::exists(path)) watcher_->addPath(path);
}

void MainWindow::refresh_visible_view() {
  auto* view = qobject_cast<StoreView*>(tabs_->currentWidget());
  if (view == nullptr) return;
  if (refreshing_ != nullptr) {
    refresh_due_ = true;
    return;
  }
  refreshing_ = view;
  stale_.remove(view);
  view->refresh();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  QSettings().setValue(QStringLiteral("window/geometry"), saveGeometry());
  QMainWindow::closeEvent(event);
}

void MainWindow::choose_store() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Open results store"), QFileInfo(db_path_).absolutePath(),
      tr("Results stores (*.db *.sqlite);;All files (*)"));
  if (!path.isEmpty()) open_store(path);
}

void MainWindow::update_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value(kRecentKey).toStringList();
  for (const QString& path : recent)
    recent_menu_->addAction(path, this, [this, path] { open_store(path); });
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::show_results() {
  tabs_->setCurrentWidget(results_);
}

void MainWindow::export_view_to(const QString& path) {
  if (auto* plot = qobject_cast<PlotView*>(tabs_->currentWidget())) {
    plot->export_to(path);
  } else {
    export_widget(tabs_->currentWidget(), path);
  }
}

void MainWindow::export_current_view() {
  QString name = static_cast<StoreView*>(tabs_->currentWidget())->title().toLower();
  name.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export view"), name + QStringLiteral(".png"), plot_file_filters());
  if (path.isEmpty()) return;
  try {
    export_view_to(path);
    statusBar()->showMessage(tr("Wrote %1").arg(path), 10000);
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("Export failed"), QString::fromUtf8(e.what()));
  }
}

QString MainWindow::shortcuts_text() const {
  QStringList lines;
  for (QAction* menu : menuBar()->actions()) {
    if (!menu->menu()) continue;
    for (QAction* action : menu->menu()->actions()) {
      if (action->shortcut().isEmpty()) continue;
      QString what = action->text();
      what.remove(QLatin1Char('&'));
      lines << QStringLiteral("%1\t%2 → %3")
                   .arg(action->shortcut().toString(QKeySequence::NativeText),
                        menu->text().remove(QLatin1Char('&')), what);
    }
  }
  lines << tr("Ctrl+C\tA table: copy the selected cells (tab-separated, with their headers)");
  return lines.join(QLatin1Char('\n'));
}

QString MainWindow::about_text() const {
  // The lmk beside the workbench answers --version in milliseconds (it starts no LibTorch).
  QProcess lmk;
  lmk.start(lmk_program(), {QStringLiteral("--version")});
  QString lmk_version = tr("lmk: not found (%1)").arg(lmk_program());
  if (lmk.waitForFinished(5000) && lmk.exitCode() == 0)
    lmk_version = QString::fromUtf8(lmk.readAllStandardOutput()).trimmed();
  return tr("<b>Landmark Workbench</b> %1<br>Landmark pooling studies for text embeddings "
            "(Doshi et al., arXiv 2601.21525).<br><br>"
            "Qt %2 (built with %3)<br>QCustomPlot %4<br>SQLite %5<br>Results store schema %6<br>"
            "%7<br><br>Store: %8")
      .arg(QCoreApplication::applicationVersion(), QString::fromLatin1(qVersion()),
           QStringLiteral(QT_VERSION_STR), QStringLiteral(QCUSTOMPLOT_VERSION_STR),
           QString::fromLatin1(sqlite3_libversion()))
      .arg(store_schema::current_version())
      .arg(lmk_version.toHtmlEscaped(),
           db_path_.isEmpty() ? tr("none open") : db_path_.toHtmlEscaped());
}

QString MainWindow::user_guide_markdown() const {
  for (const QString& path : {QDir(QCoreApplication::applicationDirPath())
                                  .filePath(QStringLiteral("../share/doc/lmk/USER-GUIDE.md")),
                              QStringLiteral(LMK_SOURCE_DIR "/docs/USER-GUIDE.md")}) {
    QFile file(path);
    if (file.open(QIODevice::ReadOnly)) return QString::fromUtf8(file.readAll());
  }
  return tr("The user guide (docs/USER-GUIDE.md) is not beside this workbench nor in the "
            "source tree it was built from (%1).")
      .arg(QStringLiteral(LMK_SOURCE_DIR));
}

void MainWindow::show_user_guide(const QString& section) {
  auto* dialog = new QDialog(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setObjectName(QStringLiteral("user_guide"));
  dialog->setWindowTitle(tr("User guide"));
  auto* browser = new QTextBrowser;
  browser->setObjectName(QStringLiteral("guide_text"));
  browser->setOpenExternalLinks(true);
  browser->setMarkdown(user_guide_markdown());
  auto* contents = new QTreeWidget;
  contents->setObjectName(QStringLiteral("guide_contents"));
  contents->setHeaderHidden(true);
  auto* search = new QLineEdit;
  search->setObjectName(QStringLiteral("guide_search"));
  search->setPlaceholderText(tr("Search (Enter: next match)"));
  search->setClearButtonEnabled(true);

  // The contents: every heading, nested by level; each item holds its block's position.
  QTextDocument* document = browser->document();
  std::map<int, QTreeWidgetItem*> open;  // heading level -> the latest item of that level
  QTreeWidgetItem* start = nullptr;
  QTreeWidgetItem* workbench = nullptr;
  for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
    const int level = block.blockFormat().headingLevel();
    if (level <= 0) continue;
    open.erase(open.lower_bound(level), open.end());  // this level and deeper ones close
    QTreeWidgetItem* parent = open.empty() ? nullptr : open.rbegin()->second;
    auto* item = parent != nullptr ? new QTreeWidgetItem(parent) : new QTreeWidgetItem(contents);
    item->setText(0, block.text());
    item->setData(0, Qt::UserRole, block.position());
    open[level] = item;
    if (workbench == nullptr && block.text().startsWith(QLatin1String("The workbench")))
      workbench = item;
    if (start == nullptr && !section.isEmpty() && level >= 3 && block.text().startsWith(section))
      start = item;
  }
  contents->expandToDepth(0);
  // Shows a block at the top of the text.
  auto go_to = [browser, document](int position) {
    const QTextBlock block = document->findBlock(position);
    browser->setTextCursor(QTextCursor(block));
    browser->verticalScrollBar()->setValue(
        static_cast<int>(document->documentLayout()->blockBoundingRect(block).top()));
  };
  connect(contents, &QTreeWidget::currentItemChanged, dialog, [go_to](QTreeWidgetItem* item) {
    if (item != nullptr) go_to(item->data(0, Qt::UserRole).toInt());
  });
  connect(search, &QLineEdit::returnPressed, dialog, [browser, search] {
    if (search->text().isEmpty()) return;
    if (!browser->find(search->text())) {  // from the top again
      browser->moveCursor(QTextCursor::Start);
      browser->find(search->text());
    }
  });

  auto* left = new QWidget;
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(search);
  left_layout->addWidget(contents, 1);
  auto* splitter = new QSplitter;
  splitter->addWidget(left);
  splitter->addWidget(browser);
  splitter->setStretchFactor(1, 3);
  auto* layout = new QVBoxLayout(dialog);
  layout->addWidget(splitter, 1);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
  connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  layout->addWidget(buttons);
  dialog->resize(std::min(1100, width() * 4 / 5), height() * 4 / 5);
  dialog->open();
  // Once laid out: the section of the current view, else the workbench's chapter.
  QTreeWidgetItem* first = start != nullptr ? start : workbench;
  if (first != nullptr)
    QTimer::singleShot(0, contents, [contents, first] { contents->setCurrentItem(first); });
}

void MainWindow::show_text_dialog(const QString& title, const QString& text, bool markdown) {
  auto* dialog = new QDialog(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setWindowTitle(title);
  auto* layout = new QVBoxLayout(dialog);
  auto* browser = new QTextBrowser(dialog);
  browser->setOpenExternalLinks(true);
  if (markdown)
    browser->setMarkdown(text);
  else
    browser->setPlainText(text);
  layout->addWidget(browser);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
  connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  layout->addWidget(buttons);
  dialog->resize(std::min(900, width() * 4 / 5), height() * 4 / 5);
  dialog->open();
}

QStringList MainWindow::save_screenshots(const QString& dir, int timeout_ms) {
  if (!QDir().mkpath(dir)) throw std::runtime_error("cannot create " + dir.toStdString());
  QStringList written;
  for (int i = 0; i < static_cast<int>(views_.size()); ++i) {
    StoreView* view = views_[i];
    tabs_->setCurrentIndex(i);
    QEventLoop wait;
    QTimer timeout;
    timeout.setSingleShot(true);
    // A view may emit loaded() inside refresh() (nothing to read): quit() before exec() would
    // be lost, and the wait would last the whole timeout.
    bool loaded = false;
    const auto connection = connect(view, &StoreView::loaded, &wait, [&] {
      loaded = true;
      wait.quit();
    });
    connect(&timeout, &QTimer::timeout, &wait, &QEventLoop::quit);
    timeout.start(timeout_ms);
    view->refresh();
    if (!loaded) wait.exec();
    disconnect(connection);
    QApplication::processEvents();
    QString name = view->title().toLower();
    name.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
    const QString path =
        QDir(dir).filePath(QStringLiteral("%1-%2.png").arg(i + 1, 2, 10, QChar('0')).arg(name));
    if (!grab().save(path)) throw std::runtime_error("cannot write " + path.toStdString());
    written << path;
  }
  return written;
}

}  // namespace lmk::widgets
