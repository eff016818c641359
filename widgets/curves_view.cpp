#include "widgets/curves_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QSettings>
#include <QSpinBox>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace lmk::widgets {
namespace {

const char* const kMinQueriesKey = "curves/min_queries";
const char* const kRole = "lmk_role";  // the QObject property naming a graph's role in a curve

// A position bin's bounds: "30-40%" -> (30, 40); NaNs for another text (never a gap).
QPair<double, double> bin_bounds(QString group) {
  group.remove(QLatin1Char('%'));
  const QStringList parts = group.split(QLatin1Char('-'));
  bool low_ok = false, high_ok = false;
  const double low = parts.value(0).toDouble(&low_ok), high = parts.value(1).toDouble(&high_ok);
  if (parts.size() != 2 || !low_ok || !high_ok) return {NAN, NAN};
  return {low, high};
}

QString default_metric(const QStringList& metrics, const QString& kept) {
  if (metrics.contains(kept)) return kept;
  if (metrics.contains(QStringLiteral("ndcg_at_10"))) return QStringLiteral("ndcg_at_10");
  return metrics.isEmpty() ? QString() : metrics.front();
}

}  // namespace

CurvesView::CurvesView(QWidget* parent) : PlotView(parent) {
  dataset_ = new QComboBox(this);
  metric_ = new QComboBox(this);
  position_length_ = new QComboBox(this);
  auto add = [this](const QString& label, QWidget* widget) { add_control(label, widget); };
  add(tr("Dataset"), dataset_);
  add(tr("Metric"), metric_);
  add(tr("Evidence position at"), position_length_);
  for (QComboBox* combo : {dataset_, metric_, position_length_})
    combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  min_queries_ = new QSpinBox(this);
  min_queries_->setRange(1, 100000);
  min_queries_->setValue(QSettings().value(QLatin1String(kMinQueriesKey), 20).toInt());
  min_queries_->setToolTip(
      tr("Points backed by fewer queries than this are drawn hollow: their mean is uncertain"));
  add(tr("min N"), min_queries_);
  connect(min_queries_, &QSpinBox::valueChanged, this, [this](int n) {
    QSettings().setValue(QLatin1String(kMinQueriesKey), n);
    redraw();
  });

  connect(dataset_, &QComboBox::currentIndexChanged, this, [this] {
    const int index = dataset_->currentIndex();
    if (index >= 0 && index < sources_.size())
      fill_metric_control(sources_[index].metrics, metric_->currentText());
    load_points();
  });
  connect(metric_, &QComboBox::currentIndexChanged, this, [this] { load_points(); });
  connect(position_length_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });

  // Layout: the two panels with their titles side by side, one legend below them (a series
  // has one colour in both panels).
  QCustomPlot* figure = plot();
  rects_[0] = figure->axisRect();
  figure->plotLayout()->take(rects_[0]);
  figure->plotLayout()->simplify();
  rects_[0]->insetLayout()->take(figure->legend);
  rects_[1] = new QCPAxisRect(figure);
  auto* panels = new QCPLayoutGrid;
  figure->plotLayout()->addElement(0, 0, panels);
  figure->plotLayout()->addElement(1, 0, figure->legend);
  figure->plotLayout()->setRowStretchFactor(1, 0.001);
  note_ = new QCPTextElement(figure, QString(), QFont(font().family(), 8));
  figure->plotLayout()->addElement(2, 0, note_);
  figure->plotLayout()->setRowStretchFactor(2, 0.001);
  figure->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
  figure->legend->setWrap(5);
  figure->legend->setBorderPen(Qt::NoPen);
  figure->legend->setVisible(true);
  figure->setAutoAddPlottableToLegend(false);
  auto* margins = new QCPMarginGroup(figure);
  const QFont title_font(font().family(), 11, QFont::Bold);
  const QString titles[2] = {tr("metric vs evaluation length"), tr("metric vs evidence position")};
  for (int i = 0; i < 2; ++i) {
    panels->addElement(0, i, new QCPTextElement(figure, titles[i], title_font));
    panels->addElement(1, i, rects_[i]);
    rects_[i]->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    notes_[i] = new QCPItemText(figure);
    notes_[i]->setClipAxisRect(rects_[i]);
    notes_[i]->position->setAxisRect(rects_[i]);
    notes_[i]->position->setType(QCPItemPosition::ptAxisRectRatio);
    notes_[i]->position->setCoords(0.5, 0.5);
    notes_[i]->setVisible(false);
  }
  QCPAxis* length_axis = rects_[0]->axis(QCPAxis::atBottom);
  length_axis->setScaleType(QCPAxis::stLogarithmic);
  auto log2_ticker = QSharedPointer<QCPAxisTickerLog>::create();
  log2_ticker->setLogBase(2);
  length_axis->setTicker(log2_ticker);
  length_axis->setNumberFormat(QStringLiteral("f"));
  length_axis->setNumberPrecision(0);
  length_axis->setLabel(tr("evaluation length (tokens)"));
  QCPAxis* position_axis = rects_[1]->axis(QCPAxis::atBottom);
  position_axis->setLabel(tr("evidence position (% of the document)"));
  position_axis->setRange(0, 100);
  connect(figure, &QCustomPlot::mouseMove, this, &CurvesView::show_tooltip);
  // Bands on a layer under the lines: drawn over them, they hid the other series' lines.
  figure->addLayer(QStringLiteral("bands"), figure->layer(QStringLiteral("main")),
                   QCustomPlot::limBelow);
}

void CurvesView::set_store(const QString& db_path) {
  db_path_ = db_path;
  if (db_path.isEmpty()) {
    show_message(tr("No results store open — File → Open a results database"));
    finish_without_loading();
    return;
  }
  const QString dataset = this->dataset();
  const QString split = this->split();
  const QString metric = this->metric();
  struct Loaded {
    QVector<EvalSource> sources;
    int chosen = 0;
    QString metric;
    QVector<EvalPoint> points;
    int resamples = 0;
  };
  load<Loaded>(
      LoadKind::Store,
      [dataset, split, metric](const ResultsStore& db) {
        Loaded loaded;
        loaded.sources = read_eval_sources(db);
        if (loaded.sources.isEmpty()) return loaded;
        for (int i = 0; i < loaded.sources.size(); ++i)
          if (loaded.sources[i].dataset == dataset && loaded.sources[i].split == split)
            loaded.chosen = i;
        const EvalSource& source = loaded.sources[loaded.chosen];
        loaded.metric = default_metric(source.metrics, metric);
        loaded.points =
            read_eval_points(db, source.dataset, source.split, loaded.metric, &loaded.resamples);
        return loaded;
      },
      [this](const Loaded& loaded) {
        sources_ = loaded.sources;
        points_ = loaded.points;
        resamples_ = loaded.resamples;
        {
          const QSignalBlocker block(dataset_);
          dataset_->clear();
          for (const EvalSource& source : sources_) {
            const auto splits = std::count_if(
                sources_.begin(), sources_.end(),
                [&](const EvalSource& other) { return other.dataset == source.dataset; });
            dataset_->addItem(splits > 1
                                  ? QStringLiteral("%1 · %2").arg(source.dataset, source.split)
                                  : source.dataset,
                              QStringList{source.dataset, source.split});
          }
          dataset_->setCurrentIndex(sources_.isEmpty() ? -1 : loaded.chosen);
        }
        fill_metric_control(sources_.isEmpty() ? QStringList() : sources_[loaded.chosen].metrics,
                            loaded.metric);
        redraw();
      });
}

void CurvesView::clear_data() {
  sources_.clear();
  points_.clear();
  drawn_[0].clear();
  drawn_[1].clear();
  series_order_.clear();
  plot()->clearGraphs();
  for (QComboBox* combo : {dataset_, metric_, position_length_}) {
    const QSignalBlocker block(combo);
    combo->clear();
  }
}

void CurvesView::fill_metric_control(const QStringList& metrics, const QString& metric) {
  const QSignalBlocker block(metric_);
  metric_->clear();
  metric_->addItems(metrics);
  metric_->setCurrentIndex(metric_->findText(default_metric(metrics, metric)));
}

void CurvesView::load_points() {
  const QString dataset = this->dataset();
  const QString split = this->split();
  const QString metric = this->metric();
  if (dataset.isEmpty() || metric.isEmpty() || db_path_.isEmpty()) return;
  using Points = QPair<QVector<EvalPoint>, int>;
  load<Points>(
      LoadKind::Data,
      [dataset, split, metric](const ResultsStore& db) {
        int resamples = 0;
        QVector<EvalPoint> points = read_eval_points(db, dataset, split, metric, &resamples);
        return Points(std::move(points), resamples);
      },
      [this](const Points& points) {
        points_ = points.first;
        resamples_ = points.second;
        redraw();
      });
}

void CurvesView::redraw() {
  QCustomPlot* figure = plot();
  figure->clearGraphs();
  legend_names_.clear();
  figure->legend->setVisible(true);
  drawn_[0].clear();
  drawn_[1].clear();
  if (sources_.isEmpty()) {
    show_message(
        tr("No evaluation results in this store yet — evaluate a model "
           "(lmk eval --db …) or design a study in the Designer tab"));
    return;
  }
  {
    const QSignalBlocker block(position_length_);
    const QVariant kept = position_length_->currentData();
    position_length_->clear();
    for (qint64 length : position_lengths(points_))
      position_length_->addItem(length > 0 ? tr("%1 tokens").arg(length) : tr("every length"),
                                length);
    position_length_->setCurrentIndex(std::max(0, position_length_->findData(kept)));
  }
  const QVector<Curve> by_length = length_curves(points_);
  const QVector<Curve> by_position = position_length_->count() > 0
                                         ? position_curves(points_, position_length())
                                         : QVector<Curve>();
  series_order_.clear();
  for (const QVector<Curve>* curves : {&by_length, &by_position})
    for (const Curve& curve : *curves)
      if (!series_order_.contains(curve.name)) series_order_.append(curve.name);
  draw_panel(Panel::Length, by_length);
  draw_panel(Panel::Position, by_position);
  plot()->legend->setVisible(series_order_.size() <= 24);
  const bool bands =
      std::any_of(points_.begin(), points_.end(), [](const EvalPoint& p) { return p.n > 0; });
  note_->setText(
      bands
          ? tr("Bands: 95 % percentile bootstrap intervals over the queries (%1 resamples); "
               "hollow points: fewer than %2 queries. Hover a point for its N.")
                    .arg(resamples_)
                    .arg(min_queries()) +
                (series_order_.size() > 24 ? tr(" %1 series: no legend, hover a line for its name.")
                                                 .arg(series_order_.size())
                                           : QString())
          : tr("No per-query results for these runs (evaluated before lmk stored them): "
               "means without intervals."));
  show_plot();
}

void CurvesView::draw_panel(Panel panel, const QVector<Curve>& curves) {
  QCustomPlot* figure = plot();
  const int index = panel == Panel::Length ? 0 : 1;
  QCPAxis* x_axis = rects_[index]->axis(QCPAxis::atBottom);
  QCPAxis* y_axis = rects_[index]->axis(QCPAxis::atLeft);
  y_axis->setLabel(metric());
  double x_low = INFINITY, x_high = -INFINITY, y_low = INFINITY, y_high = -INFINITY;
  drawn_[index] = curves;
  // Many series (a store of many experiments) are thin lines without markers or bands: wider
  // pens and fills take the raster engine's slow path (docs/BENCHMARKS.md, workbench at scale).
  const bool many = series_order_.size() > 24;
  const int min_n = min_queries();
  for (const Curve& curve : curves) {
    const QColor color = series_color(series_order_.indexOf(curve.name));
    auto add_graph = [&](const QString& role) {
      QCPGraph* graph = figure->addGraph(x_axis, y_axis);
      graph->setName(curve.name);
      graph->setProperty(kRole, role);
      // Adaptive sampling (on by default) keeps long curves fast; they are drawn decimated.
      graph->setAdaptiveSampling(true);
      return graph;
    };
    QCPGraph* graph = add_graph(QStringLiteral("line"));
    graph->setPen(QPen(color, many ? 1 : 2));
    QVector<double> keys, values, low, high, solid_keys, solid_values, few_keys, few_values;
    // The line and its band, broken where a bin has no point (QCustomPlot splits a channel
    // fill at NaN as it splits a line).
    QVector<double> line_keys, line_values, band_keys, band_low, band_high;
    bool banded = false;
    for (int i = 0; i < curve.points.size(); ++i) {
      const QPointF& point = curve.points[i];
      // An empty bin between this point's and the last one's (their bins do not touch): a gap
      // in the line (NaN), not a line across it.
      if (i > 0 && panel == Panel::Position &&
          bin_bounds(curve.groups.value(i - 1)).second < bin_bounds(curve.groups.value(i)).first) {
        line_keys << (curve.points[i - 1].x() + point.x()) / 2;
        line_values << kNaN;
        band_keys << line_keys.back();
        band_low << kNaN;
        band_high << kNaN;
      }
      line_keys << point.x();
      line_values << point.y();
      keys << point.x();
      values << point.y();
      const bool has_interval = i < curve.low.size() && std::isfinite(curve.low[i]);
      banded |= has_interval;
      low << (has_interval ? curve.low[i] : point.y());
      high << (has_interval ? curve.high[i] : point.y());
      band_keys << point.x();
      band_low << low.back();
      band_high << high.back();
      const int n = i < curve.n.size() ? curve.n[i] : 0;
      (n > 0 && n < min_n ? few_keys : solid_keys) << point.x();
      (n > 0 && n < min_n ? few_values : solid_values) << point.y();
      x_low = std::min(x_low, point.x());
      x_high = std::max(x_high, point.x());
      for (double y : {point.y(), low.back(), high.back()}) {
        if (!std::isfinite(y)) continue;
        y_low = std::min(y_low, y);
        y_high = std::max(y_high, y);
      }
    }
    graph->setData(line_keys, line_values, true);
    if (!many) {
      if (banded) {
        // The band: the area between the low and high graphs, in the line's colour.
        QCPGraph* lower = add_graph(QStringLiteral("low"));
        QCPGraph* upper = add_graph(QStringLiteral("high"));
        QColor fill = color;
        fill.setAlpha(45);
        for (QCPGraph* edge : {lower, upper}) {
          edge->setPen(Qt::NoPen);
          edge->setLayer(QStringLiteral("bands"));  // under every line and point
        }
        lower->setData(band_keys, band_low, true);
        upper->setData(band_keys, band_high, true);
        upper->setBrush(fill);
        upper->setChannelFillGraph(lower);
      }
      QCPGraph* solid = add_graph(QStringLiteral("points"));
      solid->setLineStyle(QCPGraph::lsNone);
      solid->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, color, color, 6));
      solid->setData(solid_keys, solid_values, true);
      QCPGraph* few = add_graph(QStringLiteral("few"));
      few->setLineStyle(QCPGraph::lsNone);
      few->setScatterStyle(
          QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(color, 1.5), QBrush(Qt::white), 7));
      few->setData(few_keys, few_values, true);
    }
    // The legend lists each series once; the other panel's line has the same colour. Past 24
    // series it is hidden (a legend of hundreds is unreadable, and QCustomPlot adds each entry
    // in time linear in the entries); hovering names a line.
    if (!many && !legend_names_.contains(curve.name)) {
      legend_names_.insert(curve.name);
      graph->addToLegend();
    }
  }
  if (panel == Panel::Length) {
    if (x_high >= x_low && x_low > 0)
      x_axis->setRange(x_low / 1.5, x_high * 1.5);
    else
      x_axis->setRange(128, 8192);
  }
  if (y_high >= y_low) {
    const double pad = std::max((y_high - y_low) * 0.08, 0.02);
    y_axis->setRange(y_low - pad, y_high + pad);
  } else {
    y_axis->setRange(0, 1);
  }
  notes_[index]->setText(panel == Panel::Length
                             ? tr("no results at several lengths for this dataset")
                             : tr("no results by evidence position for this dataset"));
  notes_[index]->setVisible(curves.isEmpty());
}

void CurvesView::set_dataset(const QString& dataset, const QString& split) {
  for (int i = 0; i < sources_.size(); ++i) {
    if (sources_[i].dataset == dataset && (split.isEmpty() || sources_[i].split == split)) {
      dataset_->setCurrentIndex(i);
      return;
    }
  }
}

void CurvesView::set_metric(const QString& metric) {
  metric_->setCurrentIndex(metric_->findText(metric));
}

void CurvesView::set_position_length(qint64 length) {
  position_length_->setCurrentIndex(position_length_->findData(length));
}

QString CurvesView::dataset() const {
  const QStringList key = dataset_->currentData().toStringList();
  return key.size() == 2 ? key[0] : QString();
}

QString CurvesView::split() const {
  const QStringList key = dataset_->currentData().toStringList();
  return key.size() == 2 ? key[1] : QString();
}

QString CurvesView::metric() const {
  return metric_->currentText();
}

qint64 CurvesView::position_length() const {
  return position_length_->currentData().toLongLong();
}

QCPAxis* CurvesView::x_axis(Panel panel) const {
  return rects_[panel == Panel::Length ? 0 : 1]->axis(QCPAxis::atBottom);
}

QCPGraph* CurvesView::graph_of(Panel panel, const QString& name, const QString& role) const {
  QCPAxisRect* rect = rects_[panel == Panel::Length ? 0 : 1];
  for (int i = 0; i < plot()->graphCount(); ++i) {
    QCPGraph* graph = plot()->graph(i);
    if (graph->keyAxis()->axisRect() == rect && graph->name() == name &&
        graph->property(kRole).toString() == role)
      return graph;
  }
  return nullptr;
}

QStringList CurvesView::curve_names(Panel panel) const {
  QStringList names;
  QCPAxisRect* rect = rects_[panel == Panel::Length ? 0 : 1];
  for (int i = 0; i < plot()->graphCount(); ++i) {
    QCPGraph* graph = plot()->graph(i);
    if (graph->keyAxis()->axisRect() == rect && graph->property(kRole) == QLatin1String("line"))
      names << graph->name();
  }
  return names;
}

namespace {

QVector<QPointF> graph_points(const QCPGraph* graph) {
  QVector<QPointF> points;
  if (!graph) return points;
  for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
    points.append({it->key, it->value});
  return points;
}

}  // namespace

QVector<QPointF> CurvesView::curve(Panel panel, const QString& name) const {
  QVector<QPointF> points;
  for (const QPointF& point : graph_points(graph_of(panel, name, QStringLiteral("line"))))
    if (!std::isnan(point.y())) points << point;
  return points;
}

QVector<double> CurvesView::gaps(Panel panel, const QString& name, const QString& role) const {
  QVector<double> xs;
  for (const QPointF& point : graph_points(graph_of(panel, name, role)))
    if (std::isnan(point.y())) xs << point.x();
  return xs;
}

QCPLayer* CurvesView::band_layer(Panel panel, const QString& name) const {
  QCPGraph* upper = graph_of(panel, name, QStringLiteral("high"));
  return upper != nullptr ? upper->layer() : nullptr;
}

QCPLayer* CurvesView::line_layer(Panel panel, const QString& name) const {
  QCPGraph* line = graph_of(panel, name, QStringLiteral("line"));
  return line != nullptr ? line->layer() : nullptr;
}

QVector<QPair<double, double>> CurvesView::band(Panel panel, const QString& name) const {
  const QVector<QPointF> low = graph_points(graph_of(panel, name, QStringLiteral("low")));
  const QVector<QPointF> high = graph_points(graph_of(panel, name, QStringLiteral("high")));
  QVector<QPair<double, double>> band;  // per point: the gaps (NaN) are left out
  for (int i = 0; i < std::min(low.size(), high.size()); ++i)
    if (std::isfinite(high[i].y())) band.append({low[i].y(), high[i].y()});
  return band;
}

QVector<QPointF> CurvesView::hollow_points(Panel panel, const QString& name) const {
  return graph_points(graph_of(panel, name, QStringLiteral("few")));
}

QString CurvesView::point_text(Panel panel, const QString& name, int index) const {
  for (const Curve& curve : drawn_[panel == Panel::Length ? 0 : 1]) {
    if (curve.name != name || index < 0 || index >= curve.points.size()) continue;
    const QPointF& point = curve.points[index];
    // The point named as its axis names it: a length in tokens, a position bin as a range.
    QString where;
    if (panel == Panel::Length) {
      where = tr("evaluation length %1 tokens").arg(QString::number(point.x(), 'g', 6));
    } else {
      QString bin = curve.groups.value(index);
      bin.remove(QLatin1Char('%'));
      bin.replace(QLatin1Char('-'), QStringLiteral("–"));
      where = tr("evidence position %1 % of the document").arg(bin.trimmed());
    }
    QString text = QStringLiteral("%1\n%2\n%3 %4")
                       .arg(name, where, metric(), QString::number(point.y(), 'f', 4));
    const int n = curve.n.value(index);
    if (n > 0 && std::isfinite(curve.low.value(index, kNaN))) {
      text += tr("\n95 % CI %1 – %2, N %3")
                  .arg(curve.low[index], 0, 'f', 4)
                  .arg(curve.high[index], 0, 'f', 4)
                  .arg(n);
      if (n < min_queries()) text += tr(" (fewer than %1 queries)").arg(min_queries());
    } else if (n > 0) {
      text += tr("\nN %1").arg(n);
    } else {
      text += tr("\nno per-query results");
    }
    return text;
  }
  return QString();
}

void CurvesView::show_tooltip(QMouseEvent* event) {
  // The nearest point within 12 pixels, over both panels.
  const QPointF mouse = event->position();
  double best = 12 * 12;
  QString text;
  for (int index = 0; index < 2; ++index) {
    const Panel panel = index == 0 ? Panel::Length : Panel::Position;
    QCPAxis* x = rects_[index]->axis(QCPAxis::atBottom);
    QCPAxis* y = rects_[index]->axis(QCPAxis::atLeft);
    for (const Curve& curve : drawn_[index]) {
      for (int i = 0; i < curve.points.size(); ++i) {
        const double dx = x->coordToPixel(curve.points[i].x()) - mouse.x();
        const double dy = y->coordToPixel(curve.points[i].y()) - mouse.y();
        if (dx * dx + dy * dy < best) {
          best = dx * dx + dy * dy;
          text = point_text(panel, curve.name, i);
        }
      }
    }
  }
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, plot());
}

void CurvesView::set_min_queries(int n) {
  min_queries_->setValue(n);
}

int CurvesView::min_queries() const {
  return min_queries_->value();
}

QString CurvesView::note() const {
  return note_->text();
}

QString CurvesView::export_name() const {
  return QStringLiteral("curves-%1-%2").arg(dataset(), metric());
}

}  // namespace lmk::widgets
