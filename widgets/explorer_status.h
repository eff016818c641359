#pragma once

// The attention explorer's status row: a computation's progress bar, the message line (errors in
// red, else what was computed or opened) and the notices about what is shown (a cut document).

#include <QString>
#include <QWidget>

class QLabel;
class QProgressBar;

namespace lmk::widgets {

class ExplorerStatusRow : public QWidget {
  Q_OBJECT
 public:
  explicit ExplorerStatusRow(QWidget* parent = nullptr);

  // A computation starts (the bar moves without a total) or ends (the bar goes).
  void start();
  void stop();
  // `done` of `total` (a computation's layers).
  void show_progress(qint64 done, qint64 total);
  QString message() const;
  // The message line; `error`: in red.
  void show_message(const QString& text, bool error = false);
  // The message line's text alone, as it is styled.
  void set_message_text(const QString& text);
  QString notice() const;
  void show_notice(const QString& text);

 private:
  QProgressBar* progress_ = nullptr;
  QLabel* message_ = nullptr;
  QLabel* notice_ = nullptr;
};

}  // namespace lmk::widgets
