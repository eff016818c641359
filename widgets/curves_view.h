#pragma once

// Extrapolation curves: a metric against the evaluation length (log2 axis) and against the
// position of the evidence in the document, one line per pooling configuration, side by side.
// Where the runs have per-query results each line has its 95 % confidence band, a point backed
// by fewer queries than the "min N" setting is drawn hollow, and hovering a point names its
// value, interval and N.

#include <QPointF>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QVector>

#include "widgets/plot_data.h"
#include "widgets/plot_view.h"

class QComboBox;
class QCPAxis;
class QCPAxisRect;
class QCPGraph;
class QCPItemText;
class QCPLayer;
class QCPTextElement;
class QMouseEvent;
class QSpinBox;

namespace lmk::widgets {

class CurvesView : public PlotView {
  Q_OBJECT
 public:
  enum class Panel { Length, Position };

  explicit CurvesView(QWidget* parent = nullptr);

  QString title() const override { return tr("Curves"); }
  void set_store(const QString& db_path) override;

  // The controls' choices. Dataset and metric read the store and emit loaded() once shown; the
  // position plot's length redraws at once.
  void set_dataset(const QString& dataset, const QString& split = QString());
  void set_metric(const QString& metric);
  void set_position_length(qint64 length);  // 0: every length together
  // Points backed by fewer queries than this are hollow (a setting kept in QSettings).
  void set_min_queries(int n);
  int min_queries() const;

  QString dataset() const;
  QString split() const;
  QString metric() const;
  qint64 position_length() const;
  // The curves drawn in `panel`, by name, and each one's (x, y) as the plot holds them.
  QStringList curve_names(Panel panel) const;
  QVector<QPointF> curve(Panel panel, const QString& name) const;
  // Where the line of a curve is broken (the x of each gap): a bin of the panel between two of
  // its points that it has no point in; with `role` "high" or "low", where its band is.
  QVector<double> gaps(Panel panel, const QString& name,
                       const QString& role = QStringLiteral("line")) const;
  // The layer the curve's band is drawn on, and its line's (bands under lines).
  QCPLayer* band_layer(Panel panel, const QString& name) const;
  QCPLayer* line_layer(Panel panel, const QString& name) const;
  QCPAxis* x_axis(Panel panel) const;
  // The band of a curve as drawn: (low, high) per point of curve(panel, name); empty without one.
  QVector<QPair<double, double>> band(Panel panel, const QString& name) const;
  // The points of a curve drawn hollow (fewer queries than min_queries()).
  QVector<QPointF> hollow_points(Panel panel, const QString& name) const;
  // The hover text of the index-th point of a curve.
  QString point_text(Panel panel, const QString& name, int index) const;
  // The note under the plot (what the bands and hollow points mean).
  QString note() const;
  // The resamples of the drawn intervals (read_eval_points chooses them).
  int resamples() const { return resamples_; }

 protected:
  QString export_name() const override;
  void clear_data() override;

 private:
  void fill_metric_control(const QStringList& metrics, const QString& metric);
  void load_points();
  void redraw();
  void draw_panel(Panel panel, const QVector<Curve>& curves);
  // The graph of a role ("line", "low", "high", "points", "few") of a curve in a panel.
  QCPGraph* graph_of(Panel panel, const QString& name, const QString& role) const;
  void show_tooltip(QMouseEvent* event);

  QComboBox* dataset_ = nullptr;
  QComboBox* metric_ = nullptr;
  QComboBox* position_length_ = nullptr;
  QSpinBox* min_queries_ = nullptr;
  QCPTextElement* note_ = nullptr;
  QCPAxisRect* rects_[2] = {nullptr, nullptr};
  QCPItemText* notes_[2] = {nullptr, nullptr};
  QVector<EvalSource> sources_;
  QVector<EvalPoint> points_;
  int resamples_ = 0;           // of the points' intervals
  QVector<Curve> drawn_[2];     // the curves of each panel, as drawn
  QStringList series_order_;    // the colour of a series is its index here, in both panels
  QSet<QString> legend_names_;  // the series listed in the legend (once, for both panels)
};

}  // namespace lmk::widgets
