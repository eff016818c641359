#pragma once

// The attention-position heatmap (the paper's Figure 1): x = token position (the stored bins,
// relative to the document), y = one row per evaluation run and length group, colour = the share
// of the pooling token's attention on those positions. Two panels side by side — CLS on the left,
// another pooling (LMK by default) on the right — under one colour scale. Hovering a cell shows
// its run, bin and exact share.

#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>

#include "widgets/plot_data.h"
#include "widgets/plot_view.h"

class QComboBox;
class QCPAxisRect;
class QCPColorMap;
class QCPColorScale;
class QCPItemText;
class QCPTextElement;
class QMouseEvent;
class QCPRange;

namespace lmk::widgets {

class AttentionView : public PlotView {
  Q_OBJECT
 public:
  explicit AttentionView(QWidget* parent = nullptr);

  QString title() const override { return tr("Attention"); }
  void set_store(const QString& db_path) override;

  // The controls' choices. Those that read the store (dataset, layer / head) emit loaded() once
  // the new rows are shown; the others redraw at once.
  void set_dataset(const QString& dataset);
  void set_layer_head(int layer, int head);
  void set_length_group(const QString& length_group);  // empty: every length group
  void set_pooling(int panel, const QString& pooling);
  void set_log_x(bool log_x);
  // The colour scale: logarithmic (the default: CLS's first bin holds most of the share, and on
  // a linear scale every other row was one colour) or linear.
  void set_log_color(bool log_color);
  bool log_color() const;
  // What the layer / head list says of a layer: "global", "local, window W", or empty when the
  // models' folders cannot be read.
  QString layer_kind(int layer) const { return layer_kinds_.value(layer); }
  // The text of the layer / head list's current item.
  QString layer_head_text() const;

  QString dataset() const;
  // What panel 0 (left) and 1 (right) show.
  QString pooling(int panel) const;
  int row_count(int panel) const;
  const AttentionRow& row(int panel, int row) const;
  QStringList row_labels(int panel) const;
  // The colour map's cells along x: the stored bins on a linear axis; on a log axis, log-spaced
  // cells that each show the stored bin their centre falls in (the stored bins are the data).
  int cell_count(int panel) const;
  double cell_center(int panel, int cell) const;
  // The share the colour map holds for `row`, `cell` (on the log scale a share of 0 is held as
  // the scale's lower end, the lowest colour).
  double cell_value(int panel, int row, int cell) const;
  QCPRange color_range(int panel) const;
  QCPColorScale* color_scale() const { return color_scale_; }
  // The hover text at position `x` of `row` (empty outside the rows and bins).
  QString describe(int panel, double x, int row) const;

 protected:
  QString export_name() const override;
  void clear_data() override;

 private:
  struct Panel {
    QComboBox* pooling = nullptr;
    QCPAxisRect* rect = nullptr;
    QCPColorMap* map = nullptr;
    QCPTextElement* title = nullptr;
    QCPItemText* note = nullptr;
    QVector<int> rows;  // indices into rows_, top to bottom
  };

  void build_plot();
  void fill_choice_controls(const QString& dataset, int layer, int head);
  void fill_pooling_controls();
  void load_rows();
  void redraw();
  void show_tooltip(QMouseEvent* event);

  QComboBox* dataset_ = nullptr;
  QComboBox* layer_head_ = nullptr;
  QComboBox* length_group_ = nullptr;
  QComboBox* x_scale_ = nullptr;
  QComboBox* color_scale_type_ = nullptr;
  QCPColorScale* color_scale_ = nullptr;
  QMap<int, QString> layer_kinds_;  // of the dataset shown
  QString layer_kinds_dataset_;     // the dataset layer_kinds_ were read for
  Panel panels_[2];
  QVector<AttentionChoice> choices_;
  QVector<AttentionRow> rows_;
  QVector<double> centers_;  // x of each colour-map cell
};

}  // namespace lmk::widgets
