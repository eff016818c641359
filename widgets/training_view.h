#pragma once

// Training curves of every run (as TensorBoard's and W&B's scalars): a metric the training
// logged (loss, lr, tokens/s, …) against the step or the time since the run started, one line
// per run ticked in the list beside the plot, several overlaid. Smoothing is TensorBoard's: an
// exponential moving average, debiased at the start, drawn over the raw values (faint, in the
// same colour). Curves are read as the job monitor reads them (load_run_curves), thinned to
// about 5 000 points per run; the smoothing runs over the points read.

#include <QHash>
#include <QList>
#include <QPointF>
#include <QSet>
#include <QString>
#include <QVector>

#include "widgets/job_model.h"
#include "widgets/plot_view.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QListWidget;
class QMouseEvent;

namespace lmk::widgets {

// TensorBoard's smoothing of `values` with `weight` in [0, 1): s_i = m_i / (1 - w^(i+1)) with
// m_i = w m_(i-1) + (1 - w) v_i, m_(-1) = 0 — the weighted mean of the values so far, weights
// w^(age). A non-finite value is kept as it is and skipped by the average.
QVector<double> smooth_ema(const QVector<double>& values, double weight);

class TrainingView : public PlotView {
  Q_OBJECT
 public:
  enum class XAxis { Step, Time };

  explicit TrainingView(QWidget* parent = nullptr);

  QString title() const override { return tr("Training"); }
  void set_store(const QString& db_path) override;

  // The controls' choices; a metric or a run change reads the store and emits loaded() once
  // drawn, the others redraw at once.
  void set_metric(const QString& key);
  void set_x_axis(XAxis axis);
  void set_smoothing(double weight);  // [0, 0.999]
  void set_log_y(bool log);
  // Ticks exactly these runs (among those listed).
  void set_runs(const QList<qlonglong>& ids);

  QString metric() const;
  XAxis x_axis() const;
  double smoothing() const;
  QList<qlonglong> listed_runs() const;
  QList<qlonglong> shown_runs() const;  // ticked
  // A shown run's curve as the plot holds it: (x, raw value) and (x, smoothed value).
  QVector<QPointF> raw_curve(qlonglong run) const;
  QVector<QPointF> smoothed_curve(qlonglong run) const;
  // The name of a run's line (legend and hover).
  QString run_label(qlonglong run) const;
  // The hover text of the index-th point of a shown run.
  QString point_text(qlonglong run, int index) const;
  QListWidget* run_list() const { return runs_list_; }

 protected:
  QString export_name() const override;
  void clear_data() override;

 private:
  void fill_runs(const TrainingRuns& runs);
  void load_curves();
  void redraw();
  void show_tooltip(QMouseEvent* event);
  // The x of a point (its step, or its time in the unit of the axis).
  double x_of(const CurveSeries& series, int index) const;

  QComboBox* metric_ = nullptr;
  QComboBox* x_axis_ = nullptr;
  QDoubleSpinBox* smoothing_ = nullptr;
  QCheckBox* log_y_ = nullptr;
  QListWidget* runs_list_ = nullptr;
  QVector<TrainingRun> runs_;
  QSet<qlonglong> known_runs_;            // listed before: a run new to the list is ticked
  QHash<qlonglong, CurveSeries> curves_;  // the shown runs' curves of metric()
  double time_scale_ = 1;                 // seconds per unit of the time axis
  QString time_unit_;
};

}  // namespace lmk::widgets
