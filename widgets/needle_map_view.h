#pragma once

// The length × depth map (RULER's picture; the direct test of "CLS favours early positions"):
// for a dataset whose queries sit in length parts with evidence depths (passkey, needle, the
// windows of a study's documents), one panel per evaluation run side by side — CLS first, then
// LMK — each a grid of document length (rows) × evidence depth (columns, rounded to 0.1), the
// colour the mean metric of the cell's queries on one scale for every panel, and the cell's
// number of queries written in it. Hovering a cell shows its mean, interval and N.

#include <QString>
#include <QVector>

#include "widgets/plot_data.h"
#include "widgets/plot_view.h"

class QComboBox;
class QCPAxisRect;
class QCPColorMap;
class QCPColorScale;
class QCPItemText;
class QCPRange;
class QMouseEvent;

namespace lmk::widgets {

class NeedleMapView : public PlotView {
  Q_OBJECT
 public:
  // At most this many runs side by side (the first by pooling: CLS, LMK, then the others).
  static constexpr int kMaxPanels = 8;

  explicit NeedleMapView(QWidget* parent = nullptr);

  QString title() const override { return tr("Needle map"); }
  void set_store(const QString& db_path) override;

  // The controls' choices; each emits loaded() once the new maps are shown.
  void set_dataset(const QString& dataset);
  void set_metric(const QString& metric);

  QString dataset() const;
  QString metric() const;
  // The runs drawn, left to right, and what each panel's grid holds.
  const QVector<MapRun>& runs() const { return shown_; }
  // The colour-map value of panel `panel` at length row `row`, depth column `column` (NaN where
  // no query fell), its N as written in the cell, and the colour range (the same for all).
  double cell_value(int panel, int row, int column) const;
  QString cell_text(int panel, int row, int column) const;
  QCPItemText* cell_label(int panel, int row, int column) const {
    return panels_[panel].counts[row][column];
  }
  QCPColorScale* color_scale() const { return color_scale_; }
  QCPRange color_range(int panel) const;
  QCPColorMap* color_map(int panel) const { return panels_[panel].map; }
  // The depth of each column, left to right: the depths of the runs shown on their regular grid
  // (a depth none has is an empty column), or the depths themselves where they fit no grid.
  const QVector<double>& depths() const { return depths_; }
  // Where column `column` and row `row` sit on the panels' axes (cells, N labels and ticks alike).
  static double column_coordinate(int column) { return column; }
  // The hover text of a cell (empty outside the grid).
  QString describe(int panel, int row, int column) const;

 protected:
  QString export_name() const override;
  void clear_data() override;

 private:
  struct Panel {
    QCPAxisRect* rect = nullptr;
    QCPColorMap* map = nullptr;
    QVector<QVector<QCPItemText*>> counts;  // [row][column]
  };

  void fill_controls(const QString& dataset, const QString& metric);
  void load_runs();
  void redraw();
  void show_tooltip(QMouseEvent* event);

  QComboBox* dataset_ = nullptr;
  QComboBox* metric_ = nullptr;
  QCPColorScale* color_scale_ = nullptr;
  QVector<MapSource> sources_;
  QVector<MapRun> runs_;   // every run of the dataset
  QVector<MapRun> shown_;  // the first kMaxPanels
  QVector<Panel> panels_;
  QVector<double> depths_;  // the columns' depths (depths())
  QStringList lengths_;     // the rows: every length any shown run has, shortest on top
};

}  // namespace lmk::widgets
