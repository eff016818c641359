#pragma once

// What every workbench view (a tab of MainWindow) offers: show a results store, reload it, and
// say when what it shows is complete (screenshots and tests wait for loaded()).

#include <QString>
#include <QWidget>

namespace lmk::widgets {

class StoreView : public QWidget {
  Q_OBJECT
 public:
  using QWidget::QWidget;

  // The tab's title.
  virtual QString title() const = 0;
  // Shows the store at `db_path` (empty: no store): clears what is shown, then loads off the GUI
  // thread and emits loaded() once the data is on screen (also after an error or an empty store).
  virtual void set_store(const QString& db_path) = 0;
  // Reads the current store again (the store may have grown), keeping selections where it can.
  virtual void refresh() { set_store(db_path_); }

  const QString& db_path() const { return db_path_; }

 signals:
  // The data of the last set_store()/refresh() is shown.
  void loaded();
  // A line for the main window's status bar (errors included).
  void status_message(const QString& text);

 protected:
  QString db_path_;
};

}  // namespace lmk::widgets
