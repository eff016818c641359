#pragma once

// The workbench's window: one tab per view (designer, jobs, results, attention, explorer, lengths,
// curves, needle map, compare),
// File menu (open a store, recent stores, export the current view), settings in QSettings.

#include <QMainWindow>
#include <QSet>
#include <QString>
#include <QStringList>
#include <vector>

class QMenu;
class QTabWidget;
class QFileSystemWatcher;
class QTimer;

namespace lmk::widgets {

class ExplorerView;
class StoreView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);

  // Shows the store at `db_path` in every view and remembers it among the recent files; an
  // unreadable store leaves the views empty and says why in the status bar.
  void open_store(const QString& db_path);
  const QString& db_path() const { return db_path_; }

  // The views, in tab order.
  const std::vector<StoreView*>& views() const { return views_; }
  QTabWidget* tabs() const { return tabs_; }
  ExplorerView* explorer() const { return explorer_; }

  // Renders every view to DIR/NN-title.png once its data is loaded (lmk-workbench --screenshot);
  // returns the files written. Throws std::runtime_error when a file cannot be written.
  QStringList save_screenshots(const QString& dir, int timeout_ms = 60000);

  // Shows the Results view (lmk-workbench --db opens on it).
  void show_results();
  // Writes the current view to `path` (.png, .pdf or .svg: a plot view's plot as the plot's
  // Export… does, any other view as drawn); File → Export current view (Ctrl+E) asks for the path.
  // Throws std::runtime_error naming the path when it cannot.
  void export_view_to(const QString& path);
  // Help → Keyboard shortcuts: every menu action with a shortcut, "shortcut\taction" lines.
  QString shortcuts_text() const;
  // Help → About: the workbench's version and those of Qt, QCustomPlot, SQLite, the store schema
  // and the lmk beside it.
  QString about_text() const;
  // Help → User guide: docs/USER-GUIDE.md of the source tree this was built from (Markdown), or
  // why it cannot be found.
  QString user_guide_markdown() const;
  // Help → User guide (F1): the guide beside its contents (every heading; a click goes there)
  // and a search line, opened at the section titled `section` (the current view's title: the
  // guide has a "### Designer", "### Results", ... for each), else at the workbench's chapter.
  void show_user_guide(const QString& section);

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  // Watches the store, its -wal file and its folder for changes by running jobs.
  void watch_store_files();
  // Ends the open store's runs of this host whose process died without recording how
  // (on opening the store and on F5).
  void end_lost_runs();
  // Refreshes the visible view, unless a refresh this window started is still loading: then once
  // that one has shown its data (a refresh that replaced a slow load every 2 s would show nothing
  // for as long as a run writes).
  void refresh_visible_view();
  void choose_store();
  void update_recent_menu();
  void export_current_view();
  void show_text_dialog(const QString& title, const QString& text, bool markdown);

  QString db_path_;
  QTabWidget* tabs_ = nullptr;
  StoreView* results_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  std::vector<StoreView*> views_;
  ExplorerView* explorer_ = nullptr;
  // The store file grows while runs write: views refresh when it changes (WAL included).
  QFileSystemWatcher* watcher_ = nullptr;
  QTimer* refresh_timer_ = nullptr;
  StoreView* refreshing_ = nullptr;  // the view whose watcher refresh has not emitted loaded()
  bool refresh_due_ = false;         // the store changed while that refresh was loading
  QSet<StoreView*> stale_;           // views the store changed under since they last read it
};

}  // namespace lmk::widgets
