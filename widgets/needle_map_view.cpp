#include "widgets/needle_map_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace lmk::widgets {
namespace {

// The default metric: nDCG@1 (LongEmbed's main score for passkey / needle), else nDCG@10.
QString default_metric(const QStringList& metrics, const QString& kept) {
  for (const QString& wanted : {kept, QStringLiteral("ndcg_at_1"), QStringLiteral("ndcg_at_10")})
    if (!wanted.isEmpty() && metrics.contains(wanted)) return wanted;
  return metrics.isEmpty() ? QString() : metrics.front();
}

// The columns for `depths` (sorted, distinct): their regular grid when they lie on one (the
// smallest gap as its step, at most 4x as many columns), so that a depth no run has is an empty
// column and the axis stays proportional; else the depths themselves.
QVector<double> depth_columns(const QVector<double>& depths) {
  if (depths.size() < 3) return depths;
  double step = depths[1] - depths[0];
  for (int i = 2; i < depths.size(); ++i) step = std::min(step, depths[i] - depths[i - 1]);
  const double span = (depths.back() - depths.front()) / step;
  const int count = static_cast<int>(std::llround(span)) + 1;
  if (step <= 0 || std::abs(span + 1 - count) > 1e-6 || count > 4 * depths.size()) return depths;
  QVector<double> grid;
  for (int i = 0; i < count; ++i) grid.append(std::round((depths.front() + i * step) * 1e9) / 1e9);
  for (double d : depths)  // every depth must be one of the grid's
    if (std::none_of(grid.begin(), grid.end(), [&](double g) { return std::abs(g - d) < 1e-6; }))
      return depths;
  return grid;
}

// The index of `depth` among `depths` (the same rounding the map used), or -1.
int depth_index(const std::vector<double>& depths, double depth) {
  for (size_t i = 0; i < depths.size(); ++i)
    if (std::abs(depths[i] - depth) < 1e-9) return static_cast<int>(i);
  return -1;
}

}  // namespace

NeedleMapView::NeedleMapView(QWidget* parent) : PlotView(parent) {
  dataset_ = new QComboBox(this);
  metric_ = new QComboBox(this);
  add_control(tr("Dataset"), dataset_);
  add_control(tr("Metric"), metric_);
  connect(dataset_, &QComboBox::currentIndexChanged, this, [this] {
    fill_controls(dataset_->currentText(), metric_->currentText());
    load_runs();
  });
  connect(metric_, &QComboBox::currentIndexChanged, this, [this] { load_runs(); });
  connect(plot(), &QCustomPlot::mouseMove, this, &NeedleMapView::show_tooltip);
}

void NeedleMapView::set_store(const QString& db_path) {
  db_path_ = db_path;
  if (db_path.isEmpty()) {
    show_message(tr("No results store open — File → Open a results database"));
    finish_without_loading();
    return;
  }
  const QString dataset = dataset_->currentText(), metric = metric_->currentText();
  struct Loaded {
    QVector<MapSource> sources;
    QString dataset, metric;
    QVector<MapRun> runs;
  };
  load<Loaded>(
      LoadKind::Store,
      [dataset, metric](const ResultsStore& db) {
        Loaded loaded;
        loaded.sources = read_map_sources(db);
        if (loaded.sources.isEmpty()) return loaded;
        // The kept dataset, else the first needle task (the map's own subject), else the first.
        const MapSource* chosen = nullptr;
        for (const MapSource& source : loaded.sources)
          if (source.dataset == dataset) chosen = &source;
        for (const QString& task : {QStringLiteral("needle"), QStringLiteral("passkey")})
          for (const MapSource& source : loaded.sources)
            if (!chosen && source.dataset == task) chosen = &source;
        if (!chosen) chosen = &loaded.sources.front();
        loaded.dataset = chosen->dataset;
        loaded.metric = default_metric(chosen->metrics, metric);
        loaded.runs = read_map_runs(db, chosen->dataset, chosen->split, loaded.metric);
        return loaded;
      },
      [this](const Loaded& loaded) {
        sources_ = loaded.sources;
        runs_ = loaded.runs;
        fill_controls(loaded.dataset, loaded.metric);
        redraw();
      });
}

void NeedleMapView::clear_data() {
  sources_.clear();
  runs_.clear();
  shown_.clear();
  for (QComboBox* combo : {dataset_, metric_}) {
    const QSignalBlocker block(combo);
    combo->clear();
  }
}

void NeedleMapView::fill_controls(const QString& dataset, const QString& metric) {
  const QSignalBlocker block_dataset(dataset_);
  const QSignalBlocker block_metric(metric_);
  dataset_->clear();
  metric_->clear();
  for (const MapSource& source : sources_) {
    if (dataset_->findText(source.dataset) < 0) dataset_->addItem(source.dataset);
    if (source.dataset == dataset) metric_->addItems(source.metrics);
  }
  dataset_->setCurrentIndex(std::max(0, dataset_->findText(dataset)));
  QStringList metrics;
  for (int i = 0; i < metric_->count(); ++i) metrics << metric_->itemText(i);
  metric_->setCurrentIndex(std::max(0, metric_->findText(default_metric(metrics, metric))));
}

void NeedleMapView::load_runs() {
  const QString dataset = dataset_->currentText(), metric = metric_->currentText();
  QString split;
  for (const MapSource& source : sources_)
    if (source.dataset == dataset) split = source.split;
  if (dataset.isEmpty() || metric.isEmpty() || db_path_.isEmpty()) return;
  load<QVector<MapRun>>(
      LoadKind::Data,
      [dataset, split, metric](const ResultsStore& db) {
        return read_map_runs(db, dataset, split, metric);
      },
      [this](const QVector<MapRun>& runs) {
        runs_ = runs;
        redraw();
      });
}

void NeedleMapView::redraw() {
  QCustomPlot* figure = plot();
  figure->clearItems();
  figure->clearPlottables();
  figure->plotLayout()->clear();
  panels_.clear();
  color_scale_ = nullptr;
  shown_ = runs_.mid(0, kMaxPanels);
  if (sources_.isEmpty() || shown_.isEmpty()) {
    show_message(
        sources_.isEmpty()
            ? tr("No per-query results with lengths and evidence depths in this store yet — "
                 "evaluate a passkey or needle dataset (lmk data passkey --depths …), or run a "
                 "study: its needle tasks and documents have them")
            : tr("No run has per-query %1 on %2").arg(metric(), dataset()));
    return;
  }
  // The grid: every length and depth of the runs shown, so that the panels line up.
  depths_.clear();
  lengths_.clear();
  for (const MapRun& run : shown_) {
    for (double d : run.map.depths)
      if (std::none_of(depths_.begin(), depths_.end(),
                       [&](double known) { return std::abs(known - d) < 1e-9; }))
        depths_.append(d);
    for (const std::string& length : run.map.lengths)
      if (!lengths_.contains(QString::fromStdString(length)))
        lengths_.append(QString::fromStdString(length));
  }
  std::sort(depths_.begin(), depths_.end());
  depths_ = depth_columns(depths_);
  std::sort(lengths_.begin(), lengths_.end(), number_aware_less);
  const int rows = lengths_.size(), columns = depths_.size();

  auto* margins = new QCPMarginGroup(figure);
  color_scale_ = new QCPColorScale(figure);
  color_scale_->setType(QCPAxis::atRight);
  color_scale_->setGradient(viridis());
  color_scale_->setDataRange(QCPRange(0, 1));  // one scale: every metric here lies in [0, 1]
  color_scale_->setLabel(tr("%1, mean over the cell's queries").arg(metric()));
  color_scale_->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
  QFont small = font();
  small.setPointSizeF(std::max(6.0, font().pointSizeF() - 2));
  for (int p = 0; p < shown_.size(); ++p) {
    const MapRun& run = shown_[p];
    auto* title = new QCPTextElement(figure, run.label(), QFont(font().family(), 10, QFont::Bold));
    figure->plotLayout()->addElement(0, p, title);
    Panel panel;
    panel.rect = new QCPAxisRect(figure);
    figure->plotLayout()->addElement(1, p, panel.rect);
    panel.rect->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    QCPAxis* x_axis = panel.rect->axis(QCPAxis::atBottom);
    QCPAxis* y_axis = panel.rect->axis(QCPAxis::atLeft);
    x_axis->setLabel(tr("evidence depth"));
    if (p == 0) y_axis->setLabel(tr("document length (tokens)"));
    y_axis->setRangeReversed(true);  // shortest on top
    // Columns sit at their index on the axis, each tick labelled with the column's depth: the
    // cells, their N and the ticks share one coordinate (the colour map spaces its cells evenly).
    auto depth_ticks = QSharedPointer<QCPAxisTickerText>::create();
    for (int c = 0; c < columns; ++c)
      if (columns <= 11 || c % 2 == 0)
        depth_ticks->addTick(column_coordinate(c), QString::number(depths_[c]));
    x_axis->setTicker(depth_ticks);
    x_axis->setRange(-0.5, columns - 0.5);
    auto length_ticks = QSharedPointer<QCPAxisTickerText>::create();
    for (int r = 0; r < rows; ++r) length_ticks->addTick(r, lengths_[r]);
    y_axis->setTicker(length_ticks);
    y_axis->setRange(-0.5, rows - 0.5);
    x_axis->grid()->setVisible(false);
    y_axis->grid()->setVisible(false);
    panel.map = new QCPColorMap(x_axis, y_axis);
    panel.map->setInterpolate(false);
    panel.map->setColorScale(color_scale_);
    QCPColorMapData* data = panel.map->data();
    data->setSize(columns, rows);
    data->setRange(columns > 1 ? QCPRange(0, columns - 1) : QCPRange(-0.5, 0.5),
                   rows > 1 ? QCPRange(0, rows - 1) : QCPRange(-0.5, 0.5));
    panel.counts = QVector<QVector<QCPItemText*>>(rows, QVector<QCPItemText*>(columns, nullptr));
    for (int r = 0; r < rows; ++r) {
      const auto length =
          std::find(run.map.lengths.begin(), run.map.lengths.end(), lengths_[r].toStdString());
      for (int c = 0; c < columns; ++c) {
        const int d = depth_index(run.map.depths, depths_[c]);
        const CellSummary* cell =
            length == run.map.lengths.end() || d < 0
                ? nullptr
                : &run.map.cells[static_cast<size_t>(length - run.map.lengths.begin())]
                                [static_cast<size_t>(d)];
        const bool filled = cell && cell->n > 0;
        data->setCell(c, r, filled ? cell->mean : kNaN);
        // N in the cell, dark on the light end of the scale and light on the dark end.
        auto* count = new QCPItemText(figure);
        count->setClipAxisRect(panel.rect);
        count->position->setAxes(x_axis, y_axis);
        count->position->setCoords(column_coordinate(c), r);
        count->setFont(small);
        count->setText(filled ? QString::number(cell->n) : QString());
        count->setColor(filled && cell->mean > 0.6 ? Qt::black : Qt::white);
        panel.counts[r][c] = count;
      }
    }
    panel.map->setDataRange(QCPRange(0, 1));
    panels_.append(panel);
  }
  figure->plotLayout()->addElement(1, static_cast<int>(shown_.size()), color_scale_);
  if (runs_.size() > shown_.size()) {
    auto* more = new QCPTextElement(
        figure, tr("%1 of %2 runs shown (CLS and LMK first)").arg(shown_.size()).arg(runs_.size()),
        small);
    figure->plotLayout()->addElement(2, 0, more);
  }
  show_plot();
}

QString NeedleMapView::dataset() const {
  return dataset_->currentText();
}

QString NeedleMapView::metric() const {
  return metric_->currentText();
}

double NeedleMapView::cell_value(int panel, int row, int column) const {
  return panels_[panel].map->data()->cell(column, row);
}

QCPRange NeedleMapView::color_range(int panel) const {
  return panels_[panel].map->dataRange();
}

QString NeedleMapView::cell_text(int panel, int row, int column) const {
  return panels_[panel].counts[row][column]->text();
}

QString NeedleMapView::describe(int panel, int row, int column) const {
  if (panel < 0 || panel >= shown_.size() || row < 0 || row >= lengths_.size() || column < 0 ||
      column >= depths_.size())
    return {};
  const MapRun& run = shown_[panel];
  const auto length =
      std::find(run.map.lengths.begin(), run.map.lengths.end(), lengths_[row].toStdString());
  const int d = depth_index(run.map.depths, depths_[column]);
  QString text = tr("%1 (run %2, %3 pooling)\nlength %4 tokens, depth %5")
                     .arg(run.label())
                     .arg(run.run_id)
                     .arg(run.pooling, lengths_[row])
                     .arg(depths_[column]);
  if (length == run.map.lengths.end() || d < 0) return text + tr("\nno queries");
  const CellSummary& cell =
      run.map.cells[static_cast<size_t>(length - run.map.lengths.begin())][static_cast<size_t>(d)];
  if (cell.n == 0) return text + tr("\nno queries");
  return text + tr("\n%1 %2, %3")
                    .arg(metric())
                    .arg(cell.mean, 0, 'f', 3)
                    .arg(QString::fromStdString(lmk::interval_text(cell, 3)));
}

void NeedleMapView::show_tooltip(QMouseEvent* event) {
  const QPointF pos = event->position();
  QCPAxisRect* rect = plot()->axisRectAt(pos);
  QString text;
  for (int p = 0; p < panels_.size() && rect; ++p) {
    if (panels_[p].rect != rect || depths_.isEmpty()) continue;
    const int column = qRound(rect->axis(QCPAxis::atBottom)->pixelToCoord(pos.x()));
    const int row = qRound(rect->axis(QCPAxis::atLeft)->pixelToCoord(pos.y()));
    text = describe(p, row, column);
  }
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, plot());
}

void NeedleMapView::set_dataset(const QString& dataset) {
  dataset_->setCurrentIndex(dataset_->findText(dataset));
}

void NeedleMapView::set_metric(const QString& metric) {
  metric_->setCurrentIndex(metric_->findText(metric));
}

QString NeedleMapView::export_name() const {
  return QStringLiteral("needle-map-%1").arg(dataset_->currentText());
}

}  // namespace lmk::widgets
