#pragma once

// What the three plot views share: a row of controls above one QCustomPlot, an "Export…"
// button, a message in place of the plot when there is nothing to show, and background loads
// of which only the newest is shown.

#include <QColor>
#include <QSharedPointer>
#include <QString>

#include <functional>

#include "widgets/store_connection.h"
#include "widgets/store_view.h"

class QCPAxis;
class QCPAxisTicker;
class QCPColorGradient;
class QComboBox;
class QCustomPlot;
class QHBoxLayout;
class QVBoxLayout;
class QLabel;
class QSplitter;
class QStackedWidget;

namespace lmk::widgets {

// The colour of the index-th line or dataset of a plot (matplotlib's tab10, repeating).
QColor series_color(int index);

// Viridis (matplotlib's default) for colour maps: perceptually uniform, readable in grey, and
// its top is yellow — with gpThermal's white top the largest values looked like missing data.
// QCustomPlot 2.1 has no such preset. NaN cells are transparent.
QCPColorGradient viridis();

// Makes a click on a legend item hide or show its series: every plottable of the plot with the
// item's name (a line with its band and points), the item greyed while hidden. The hidden names
// survive a redraw: PlotView::show_plot() applies them to the new plottables.
void make_legend_clickable(QCustomPlot* plot);
// The series names hidden from the legend of `plot`.
QStringList hidden_series(const QCustomPlot* plot);
// Hides the plottables named in hidden_series(plot) and greys their legend items.
void apply_hidden_series(QCustomPlot* plot);

// Redraws `plot` once it has a size: a replot at 0 × 0 (a view not laid out yet, a hidden page)
// paints into null pixmaps, and Qt prints "QPainter::begin: Paint device returned engine == 0"
// for each of its buffers. A plot that gets its size later redraws itself (its resizeEvent).
void replot_when_sized(QCustomPlot* plot);
// Makes `plot` ignore being resized to nothing: QCustomPlot replots in its resizeEvent, and a
// plot in a page never laid out gets a 0 × 0 resize when the window is grabbed (the
// screenshots), which painted into null pixmaps. Every plot the workbench makes goes through it.
void ignore_empty_resizes(QCustomPlot* plot);

// A logarithmic axis (base 10) that shows all of [low, high] (0 < low <= high) with labels:
// the range becomes whole decades around the data (a value on a power of ten a little inside),
// and every power of ten in it is labelled, so at least two labels show.
void set_log_axis(QCPAxis* axis, double low, double high);
// A ticker for a log scale whose range stays [low, high] (a colour bar, whose colours span the
// data): a label at every power of ten inside, and at 2 and 5 times them while fewer than three
// labels would show (a range within one decade still gets several).
QSharedPointer<QCPAxisTicker> log_ticker(double low, double high);

// Makes `combo`'s popup wide enough for its longest item, kept so as items come and go, and its
// tooltip the chosen item (add_control does this for every list of a plot view).
void fit_list_to_items(QComboBox* combo);

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
  // Appends a control to the row above the plot, after a label when `label` is not empty (the
  // Export… button stays at the row's end).
  void add_control(const QString& label, QWidget* widget);
  // Adds a widget under the plot (a table beside what the plot shows); not part of exports.
  void add_below(QWidget* widget, int stretch = 0);
  // Adds a widget left of the plot, the two split by a handle (a list of what to draw); not
  // part of exports.
  void add_beside(QWidget* widget);
  // Shows `text` instead of the plot (an empty store, an error, nothing for these choices).
  void show_message(const QString& text);
  // Shows the plot (after the subclass drew it).
  void show_plot();
  // The file name the Export… dialog suggests.
  virtual QString export_name() const = 0;

  // What a load reads: a store's choices and data (set_store), or the data of the controls'
  // choices (a control change). A control change never drops a store load: a store load drops
  // the control loads started before it ends, as their controls belong to the store before.
  enum class LoadKind { Store, Data };

  // Runs `work` off the GUI thread on db_path(); then, unless a newer load of its kind (or a
  // newer store load) started meanwhile, `show(result)` — or on an error clear_data() and the
  // error as the message — and loaded().
  template <typename Result>
  void load(LoadKind kind, std::function<Result(const ResultsStore&)> work,
            std::function<void(const Result&)> show) {
    if (kind == LoadKind::Store) ++store_generation_;
    const int store_generation = store_generation_;
    const int data_generation = ++data_generation_;
    load_in_background<Result>(
        this, db_path_, std::move(work),
        [this, kind, store_generation, data_generation, show](Result result, QString error) {
          if (store_generation != store_generation_) return;
          if (kind == LoadKind::Data && data_generation != data_generation_) return;
          ++data_generation_;
          if (error.isEmpty()) {
            show(result);
          } else {
            clear_data();
            show_message(tr("Cannot read the store: %1").arg(error));
            emit status_message(error);
          }
          emit loaded();
        });
  }
  // Forgets what the last store held and empties the controls (a store that cannot be read,
  // no store), so that no control change draws it again.
  virtual void clear_data() = 0;
  // For a set_store() that reads nothing (no store): clear_data(), drops pending loads, emits
  // loaded() from the event loop like a load would.
  void finish_without_loading();

 private:
  QHBoxLayout* controls_ = nullptr;
  QVBoxLayout* layout_ = nullptr;
  QStackedWidget* pages_ = nullptr;
  QSplitter* body_ = nullptr;  // what add_beside() adds, then the pages
  QLabel* message_ = nullptr;
  QWidget* export_button_ = nullptr;
  QCustomPlot* plot_ = nullptr;
  int store_generation_ = 0;
  int data_generation_ = 0;
};

}  // namespace lmk::widgets
