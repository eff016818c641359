#include "widgets/training_view.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QIcon>
#include <QListWidget>
#include <QPixmap>
#include <QSettings>
#include <QSignalBlocker>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace lmk::widgets {
namespace {

const char* const kSmoothingKey = "training/smoothing";
const char* const kRunProperty = "lmk_run";  // a graph's run id
const char* const kRawProperty = "lmk_raw";  // a graph of the raw values
constexpr int kMaxPointsPerRun = 5000;
constexpr int kMaxRunsTickedAtFirst = 12;

// The curve of `metric` of each run in `runs` (a run that logged none: absent).
QHash<qlonglong, CurveSeries> read_curves(const ResultsStore& db, const QList<qlonglong>& runs,
                                          const QString& metric) {
  QHash<qlonglong, CurveSeries> curves;
  for (qlonglong id : runs) {
    RunCurves read = load_run_curves(db, id, {}, kMaxPointsPerRun, {metric});
    if (!read.series.isEmpty()) curves.insert(id, read.series.front());
  }
  return curves;
}

QString default_metric(const QStringList& keys, const QString& kept) {
  if (keys.contains(kept)) return kept;
  if (keys.contains(QStringLiteral("loss"))) return QStringLiteral("loss");
  return keys.isEmpty() ? QString() : keys.front();
}

}  // namespace

QVector<double> smooth_ema(const QVector<double>& values, double weight) {
  QVector<double> smoothed(values.size());
  double moving = 0, weights = 0;  // the weighted sum and the sum of the weights so far
  for (int i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      smoothed[i] = values[i];
      continue;
    }
    moving = weight * moving + (1 - weight) * values[i];
    weights = weight * weights + (1 - weight);  // 1 - w^(n): the debiasing
    smoothed[i] = moving / weights;
  }
  return smoothed;
}

TrainingView::TrainingView(QWidget* parent) : PlotView(parent) {
  metric_ = new QComboBox(this);
  metric_->setToolTip(tr("A value the training logged at each step"));
  add_control(tr("Metric"), metric_);
  x_axis_ = new QComboBox(this);
  x_axis_->addItem(tr("step"), static_cast<int>(XAxis::Step));
  x_axis_->addItem(tr("time since start"), static_cast<int>(XAxis::Time));
  add_control(tr("x"), x_axis_);
  smoothing_ = new QDoubleSpinBox(this);
  smoothing_->setRange(0, 0.999);
  smoothing_->setDecimals(3);
  smoothing_->setSingleStep(0.05);
  smoothing_->setValue(QSettings().value(QLatin1String(kSmoothingKey), 0.6).toDouble());
  smoothing_->setToolTip(
      tr("TensorBoard's smoothing: an exponential moving average of the points, debiased at "
         "the start (0: none). The raw values stay faint behind the smoothed line"));
  add_control(tr("Smoothing"), smoothing_);
  log_y_ = new QCheckBox(tr("log y"), this);
  add_control(QString(), log_y_);

  runs_list_ = new QListWidget(this);
  runs_list_->setToolTip(tr("Tick the runs to overlay"));
  runs_list_->setMinimumWidth(180);
  add_beside(runs_list_);

  connect(metric_, &QComboBox::currentIndexChanged, this, [this] { load_curves(); });
  connect(x_axis_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(smoothing_, &QDoubleSpinBox::valueChanged, this, [this](double weight) {
    QSettings().setValue(QLatin1String(kSmoothingKey), weight);
    redraw();
  });
  connect(log_y_, &QCheckBox::toggled, this, [this] { redraw(); });
  connect(runs_list_, &QListWidget::itemChanged, this, [this] { load_curves(); });

  // The legend under the plot (inside it covered the curves' start or end); a click on an item
  // hides or shows its run.
  QCustomPlot* figure = plot();
  figure->axisRect()->insetLayout()->take(figure->legend);
  figure->plotLayout()->addElement(1, 0, figure->legend);
  figure->plotLayout()->setRowStretchFactor(1, 0.001);
  figure->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  figure->legend->setWrap(3);
  figure->legend->setBorderPen(Qt::NoPen);
  figure->legend->setVisible(true);
  figure->setAutoAddPlottableToLegend(false);
  connect(figure, &QCustomPlot::mouseMove, this, &TrainingView::show_tooltip);
}

void TrainingView::set_store(const QString& db_path) {
  db_path_ = db_path;
  if (db_path.isEmpty()) {
    show_message(tr("No results store open — File → Open a results database"));
    finish_without_loading();
    return;
  }
  const QString metric = this->metric();
  const QList<qlonglong> shown = shown_runs();
  const QSet<qlonglong> known = known_runs_;
  struct Loaded {
    TrainingRuns runs;
    QString metric;
    QList<qlonglong> shown;
    QHash<qlonglong, CurveSeries> curves;
  };
  load<Loaded>(
      LoadKind::Store,
      [metric, shown, known](const ResultsStore& db) {
        Loaded loaded;
        loaded.runs = load_training_runs(db);
        loaded.metric = default_metric(loaded.runs.keys, metric);
        // The runs ticked before stay ticked; a run new to the list is ticked (the latest few
        // when the list is new).
        QList<qlonglong> fresh;
        for (const TrainingRun& run : loaded.runs.runs) {
          if (shown.contains(run.id)) loaded.shown << run.id;
          if (!known.contains(run.id)) fresh << run.id;
        }
        if (known.isEmpty() && fresh.size() > kMaxRunsTickedAtFirst)
          fresh = fresh.mid(fresh.size() - kMaxRunsTickedAtFirst);
        loaded.shown << fresh;
        loaded.curves = read_curves(db, loaded.shown, loaded.metric);
        return loaded;
      },
      [this](const Loaded& loaded) {
        {
          const QSignalBlocker block(metric_);
          metric_->clear();
          metric_->addItems(loaded.runs.keys);
          metric_->setCurrentIndex(metric_->findText(loaded.metric));
        }
        runs_ = loaded.runs.runs;
        {
          const QSignalBlocker block(runs_list_);
          runs_list_->clear();
          for (const TrainingRun& run : runs_) {
            auto* item = new QListWidgetItem(run_label(run.id), runs_list_);
            item->setData(Qt::UserRole, run.id);
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
            item->setCheckState(loaded.shown.contains(run.id) ? Qt::Checked : Qt::Unchecked);
            item->setToolTip(tr("Run %1: %2 %3 in %4, %5")
                                 .arg(run.id)
                                 .arg(run.kind, run.name, run.experiment, run.status));
            known_runs_.insert(run.id);
          }
          // Wide enough for the longest run name (up to a third of the view).
          runs_list_->setMinimumWidth(
              std::clamp(runs_list_->sizeHintForColumn(0) + 2 * runs_list_->frameWidth() + 48, 180,
                         std::max(180, width() / 3)));
        }
        curves_ = loaded.curves;
        redraw();
      });
}

void TrainingView::clear_data() {
  runs_.clear();
  curves_.clear();
  known_runs_.clear();
  plot()->clearGraphs();
  const QSignalBlocker block_metric(metric_);
  metric_->clear();
  const QSignalBlocker block_runs(runs_list_);
  runs_list_->clear();
}

void TrainingView::load_curves() {
  const QString metric = this->metric();
  const QList<qlonglong> shown = shown_runs();
  if (db_path_.isEmpty() || metric.isEmpty()) return;
  using Curves = QHash<qlonglong, CurveSeries>;
  load<Curves>(
      LoadKind::Data,
      [metric, shown](const ResultsStore& db) { return read_curves(db, shown, metric); },
      [this](const Curves& curves) {
        curves_ = curves;
        redraw();
      });
}

void TrainingView::set_metric(const QString& key) {
  const int index = metric_->findText(key);
  if (index >= 0) metric_->setCurrentIndex(index);
}

void TrainingView::set_x_axis(XAxis axis) {
  x_axis_->setCurrentIndex(x_axis_->findData(static_cast<int>(axis)));
}

void TrainingView::set_smoothing(double weight) {
  smoothing_->setValue(weight);
}

void TrainingView::set_log_y(bool log) {
  log_y_->setChecked(log);
}

void TrainingView::set_runs(const QList<qlonglong>& ids) {
  {
    const QSignalBlocker block(runs_list_);
    for (int i = 0; i < runs_list_->count(); ++i) {
      QListWidgetItem* item = runs_list_->item(i);
      item->setCheckState(ids.contains(item->data(Qt::UserRole).toLongLong()) ? Qt::Checked
                                                                              : Qt::Unchecked);
    }
  }
  load_curves();
}

QString TrainingView::metric() const {
  return metric_->currentText();
}

TrainingView::XAxis TrainingView::x_axis() const {
  return static_cast<XAxis>(x_axis_->currentData().toInt());
}

double TrainingView::smoothing() const {
  return smoothing_->value();
}

QList<qlonglong> TrainingView::listed_runs() const {
  QList<qlonglong> ids;
  for (int i = 0; i < runs_list_->count(); ++i)
    ids << runs_list_->item(i)->data(Qt::UserRole).toLongLong();
  return ids;
}

QList<qlonglong> TrainingView::shown_runs() const {
  QList<qlonglong> ids;
  for (int i = 0; i < runs_list_->count(); ++i)
    if (runs_list_->item(i)->checkState() == Qt::Checked)
      ids << runs_list_->item(i)->data(Qt::UserRole).toLongLong();
  return ids;
}

QString TrainingView::run_label(qlonglong run) const {
  QSet<QString> experiments;
  for (const TrainingRun& r : runs_) experiments.insert(r.experiment);
  for (const TrainingRun& r : runs_) {
    if (r.id != run) continue;
    // The experiment only where the store holds several.
    return experiments.size() > 1 ? QStringLiteral("#%1 %2/%3").arg(run).arg(r.experiment, r.name)
                                  : QStringLiteral("#%1 %2").arg(run).arg(r.name);
  }
  return QStringLiteral("#%1").arg(run);
}

double TrainingView::x_of(const CurveSeries& series, int index) const {
  if (x_axis() == XAxis::Step) return series.steps[index];
  return index < series.seconds.size() ? series.seconds[index] / time_scale_ : NAN;
}

QVector<QPointF> TrainingView::raw_curve(qlonglong run) const {
  QVector<QPointF> points;
  const auto it = curves_.find(run);
  if (it == curves_.end()) return points;
  for (int i = 0; i < it->values.size(); ++i) points << QPointF(x_of(*it, i), it->values[i]);
  return points;
}

QVector<QPointF> TrainingView::smoothed_curve(qlonglong run) const {
  QVector<QPointF> points = raw_curve(run);
  const auto it = curves_.find(run);
  if (it == curves_.end()) return points;
  const QVector<double> smoothed = smooth_ema(it->values, smoothing());
  for (int i = 0; i < points.size(); ++i) points[i].setY(smoothed[i]);
  return points;
}

QString TrainingView::point_text(qlonglong run, int index) const {
  const auto it = curves_.find(run);
  if (it == curves_.end() || index < 0 || index >= it->values.size()) return QString();
  const QVector<double> smoothed = smooth_ema(it->values, smoothing());
  QString text = tr("%1\nstep %2").arg(run_label(run)).arg(static_cast<qint64>(it->steps[index]));
  if (index < it->seconds.size() && std::isfinite(it->seconds[index]))
    text += tr(", %1 s after the start").arg(it->seconds[index], 0, 'f', 1);
  text += tr("\n%1 = %2").arg(metric(), QString::number(it->values[index], 'g', 6));
  if (smoothing() > 0) text += tr(" (smoothed %1)").arg(QString::number(smoothed[index], 'g', 6));
  return text;
}

void TrainingView::redraw() {
  QCustomPlot* figure = plot();
  figure->clearGraphs();
  if (runs_.isEmpty()) {
    show_message(
        tr("No training runs in this store yet — lmk pretrain / lmk train with --db log their "
           "loss, learning rate and tokens/s at every logged step (or design a study in the "
           "Designer tab)"));
    return;
  }
  const QList<qlonglong> shown = shown_runs();
  if (shown.isEmpty()) {
    show_message(tr("Tick one or more runs in the list to draw their curves"));
    return;
  }
  // The time axis in seconds, minutes or hours, by the longest run shown.
  double longest = 0;
  for (qlonglong id : shown)
    for (double s : curves_.value(id).seconds)
      if (std::isfinite(s)) longest = std::max(longest, s);
  time_scale_ = longest >= 7200 ? 3600 : longest >= 120 ? 60 : 1;
  time_unit_ = longest >= 7200 ? tr("h") : longest >= 120 ? tr("min") : tr("s");

  const double weight = smoothing();
  const bool log = log_y_->isChecked();
  const QList<qlonglong> listed = listed_runs();
  bool any = false;
  for (int i = 0; i < shown.size(); ++i) {
    const qlonglong id = shown[i];
    const auto it = curves_.find(id);
    if (it == curves_.end() || it->values.isEmpty()) continue;
    any = true;
    const QColor color = series_color(listed.indexOf(id));
    if (QListWidgetItem* item = runs_list_->item(listed.indexOf(id))) {
      const QSignalBlocker block(runs_list_);
      QPixmap swatch(10, 10);  // the line's colour beside the run's name
      swatch.fill(color);
      item->setIcon(QIcon(swatch));
    }
    QVector<double> keys;
    for (int p = 0; p < it->values.size(); ++p) keys << x_of(*it, p);
    // Raw values first, so the smoothed line is drawn over them.
    if (weight > 0) {
      QCPGraph* raw = figure->addGraph();
      raw->setName(run_label(id));
      raw->setProperty(kRunProperty, id);
      raw->setProperty(kRawProperty, true);
      QColor faint = color;
      faint.setAlpha(70);
      raw->setPen(QPen(faint, 1));
      raw->setData(keys, it->values, true);
    }
    QCPGraph* line = figure->addGraph();
    line->setName(run_label(id));
    line->setProperty(kRunProperty, id);
    line->setPen(QPen(color, 2));
    line->setData(keys, weight > 0 ? smooth_ema(it->values, weight) : it->values, true);
    if (it->values.size() == 1)
      line->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 6));
    line->addToLegend();
  }
  if (!any) {
    show_message(tr("The runs ticked logged no %1").arg(metric()));
    return;
  }
  QCPAxis* x = figure->xAxis;
  QCPAxis* y = figure->yAxis;
  x->setLabel(x_axis() == XAxis::Step ? tr("step")
                                      : tr("time since the run started (%1)").arg(time_unit_));
  y->setLabel(metric());
  y->setScaleType(log ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  if (!log) y->setTicker(QSharedPointer<QCPAxisTicker>::create());
  figure->rescaleAxes(true);  // on a log axis: the positive values' range
  x->scaleRange(1.04, x->range().center());
  if (log)
    set_log_axis(y, y->range().lower, y->range().upper);
  else
    y->scaleRange(1.08, y->range().center());
  figure->legend->setVisible(shown.size() <= 24);
  show_plot();
}

void TrainingView::show_tooltip(QMouseEvent* event) {
  QCustomPlot* figure = plot();
  const QPointF at = event->position();
  double best = 12 * 12;  // pixels squared: only a point near the pointer
  qlonglong best_run = -1;
  int best_index = -1;
  for (int g = 0; g < figure->graphCount(); ++g) {
    QCPGraph* graph = figure->graph(g);
    if (!graph->visible() || graph->property(kRawProperty).toBool()) continue;
    const qlonglong run = graph->property(kRunProperty).toLongLong();
    int index = 0;
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it, ++index) {
      const QPointF pixel = graph->coordsToPixels(it->key, it->value);
      const double dx = pixel.x() - at.x(), dy = pixel.y() - at.y();
      if (dx * dx + dy * dy < best) {
        best = dx * dx + dy * dy;
        best_run = run;
        best_index = index;
      }
    }
  }
  const QString text = best_index >= 0 ? point_text(best_run, best_index) : QString();
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, figure);
}

QString TrainingView::export_name() const {
  return QStringLiteral("training-%1").arg(metric());
}

}  // namespace lmk::widgets
