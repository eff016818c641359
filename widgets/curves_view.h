#pragma once

// Extrapolation curves: a metric against the evaluation length (log2 axis) and against the
// position of the evidence in the document, one line per pooling configuration, side by side.

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
class QCPItemText;

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

  QString dataset() const;
  QString split() const;
  QString metric() const;
  qint64 position_length() const;
  // The curves drawn in `panel`, by name, and each one's (x, y) as the plot holds them.
  QStringList curve_names(Panel panel) const;
  QVector<QPointF> curve(Panel panel, const QString& name) const;
  QCPAxis* x_axis(Panel panel) const;

 protected:
  QString export_name() const override;
  void clear_data() override;

 private:
  void fill_metric_control(const QStringList& metrics, const QString& metric);
  void load_points();
  void redraw();
  void draw_panel(Panel panel, const QVector<Curve>& curves);

  QComboBox* dataset_ = nullptr;
  QComboBox* metric_ = nullptr;
  QComboBox* position_length_ = nullptr;
  QCPAxisRect* rects_[2] = {nullptr, nullptr};
  QCPItemText* notes_[2] = {nullptr, nullptr};
  QVector<EvalSource> sources_;
  QVector<EvalPoint> points_;
  QStringList series_order_;    // the colour of a series is its index here, in both panels
  QSet<QString> legend_names_;  // the series listed in the legend (once, for both panels)
};

}  // namespace lmk::widgets
