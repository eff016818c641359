#pragma once

// What the three plot views share: a row of controls above one QCustomPlot, an "Export…"
// button, a message in place of the plot when there is nothing to show, and background loads
// of which only the newest is shown.

#include <QString>

#include <functional>

#include "widgets/store_connection.h"
#include "widgets/store_view.h"

class QCustomPlot;
class QHBoxLayout;
class QLabel;
class QStackedWidget;

namespace lmk::widgets {

class PlotView : public StoreView {
  Q_OBJECT
 public:
  explicit PlotView(QWidget* parent = nullptr);

  // Writes the plot as shown to `path` (.png, .pdf or .svg); throws std::runtime_error, also
  // while a message stands in for the plot.
  void export_to(const QString& path, int width = 0, int height = 0);
  // The text shown instead of the plot; empty while the plot is shown.
  QString message() const;
  QCustomPlot* plot() const { return plot_; }

 protected:
  // The row the subclass adds its controls to (the Export… button stays at its end).
  QHBoxLayout* controls() const { return controls_; }
  // Shows `text` instead of the plot (an empty store, an error, nothing for these choices).
  void show_message(const QString& text);
  // Shows the plot (after the subclass drew it).
  void show_plot();
  // The file name the Export… dialog suggests.
  virtual QString export_name() const = 0;

  // Runs `work` off the GUI thread on db_path(); then, unless a newer load started meanwhile,
  // `show(result)` (or the error as the message) and loaded().
  template <typename Result>
  void load(std::function<Result(const QSqlDatabase&)> work,
            std::function<void(const Result&)> show) {
    const int generation = ++generation_;
    load_in_background<Result>(this, db_path_, std::move(work),
                               [this, generation, show](Result result, QString error) {
                                 if (generation != generation_) return;
                                 if (error.isEmpty()) {
                                   show(result);
                                 } else {
                                   show_message(tr("Cannot read the store: %1").arg(error));
                                   emit status_message(error);
                                 }
                                 emit loaded();
                               });
  }
  // For a set_store() that reads nothing (no store): drops pending loads, emits loaded() from
  // the event loop like a load would.
  void finish_without_loading();

 private:
  QHBoxLayout* controls_ = nullptr;
  QStackedWidget* pages_ = nullptr;
  QLabel* message_ = nullptr;
  QWidget* export_button_ = nullptr;
  QCustomPlot* plot_ = nullptr;
  int generation_ = 0;
};

}  // namespace lmk::widgets
