#pragma once

// The job monitor's panels (widgets/job_monitor_view.h), each owning its controls:
// - JobActionsBar: Cancel, Requeue, Open log, Export and the two boxes over the table; it says
//   what was clicked and the monitor decides;
// - TrainingCurvesPanel: the selected run's loss / learning rate / tokens-per-second curves, or
//   a line saying why there are none; it keeps the last step shown per curve, so a refresh reads
//   only the points after it;
// - LogTail: the selected job's log tail, following the end unless scrolled up.

#include <QPlainTextEdit>
#include <QStackedWidget>
#include <QString>
#include <QWidget>

#include "widgets/job_model.h"

class QCheckBox;
class QCustomPlot;
class QLabel;
class QMenu;
class QPushButton;

namespace lmk::widgets {

class JobActionsBar : public QWidget {
  Q_OBJECT
 public:
  explicit JobActionsBar(QWidget* parent = nullptr);

  // Whether the jobs that are over are listed (remembered in the settings).
  bool show_ended() const;
  // Whether the log tail keeps the JSON progress events.
  bool show_events() const;
  void enable(bool cancel, bool requeue, bool open_log);
  // The Export button's menu, for the monitor's exports.
  QMenu* export_menu() const { return export_menu_; }

 signals:
  void cancel_clicked();
  void requeue_clicked();
  void open_log_clicked();
  void show_ended_changed();
  void show_events_changed();

 private:
  QPushButton* cancel_ = nullptr;
  QPushButton* requeue_ = nullptr;
  QPushButton* open_log_ = nullptr;
  QMenu* export_menu_ = nullptr;
  QCheckBox* show_ended_ = nullptr;
  QCheckBox* show_events_ = nullptr;
};

class TrainingCurvesPanel : public QStackedWidget {
  Q_OBJECT
 public:
  explicit TrainingCurvesPanel(QWidget* parent = nullptr);

  QCustomPlot* plot() const { return plot_; }
  // Per curve, the last step shown (load_run_curves reads the points after it).
  const CurveSteps& steps() const { return steps_; }
  // Removes every point (a new run is shown).
  void clear();
  // Shows `text` instead of the curves.
  void show_text(const QString& text);
  // Adds a read's points to the curves; false (and nothing shown) when no curve has any.
  bool add(const RunCurves& curves);

 private:
  QCustomPlot* plot_ = nullptr;
  QLabel* text_ = nullptr;
  CurveSteps steps_;
};

class LogTail : public QPlainTextEdit {
  Q_OBJECT
 public:
  explicit LogTail(QWidget* parent = nullptr);
  // Shows `text`, staying at the end when it was there, else where the reader scrolled to.
  void follow(const QString& text);
};

}  // namespace lmk::widgets
