#include "widgets/length_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>

namespace lmk::widgets {
namespace {

// A histogram's name: its dataset, with the tokenizer when the dataset was counted with several.
QString histogram_label(const LengthData& data, const LengthHistogram& histogram) {
  const auto same_dataset = std::count_if(
      data.histograms.begin(), data.histograms.end(),
      [&](const LengthHistogram& other) { return other.dataset == histogram.dataset; });
  if (same_dataset < 2) return histogram.dataset;
  return QStringLiteral("%1 (%2)").arg(histogram.dataset,
                                       QFileInfo(histogram.tokenizer).fileName());
}

QString percentile_line(const QString& label, const LengthHistogram& histogram) {
  QStringList parts;
  for (const auto& [percentile, tokens] : histogram.percentiles)
    parts << QStringLiteral("p%1 %2").arg(percentile, 0, 'g', 3).arg(tokens, 0, 'f', 0);
  return QStringLiteral("%1: %2").arg(label, parts.join(QStringLiteral(" · ")));
}

}  // namespace

LengthView::LengthView(QWidget* parent) : PlotView(parent) {
  dataset_ = new QComboBox(this);
  add_control(tr("Dataset"), dataset_);
  connect(dataset_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });

  QCustomPlot* figure = plot();
  figure->xAxis->setScaleType(QCPAxis::stLogarithmic);
  figure->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
  figure->xAxis->setLabel(tr("document length (tokens)"));
  figure->yAxis->setLabel(tr("documents"));
  figure->legend->setVisible(true);
  percentiles_ = new QCPTextElement(figure, QString(), QFont(font().family(), 9));
  figure->plotLayout()->addElement(1, 0, percentiles_);
  connect(figure, &QCustomPlot::mouseMove, this, &LengthView::show_tooltip);
}

QString LengthView::describe(double length, double count) const {
  QStringList lines;
  for (int i = 0; i < plot()->plottableCount(); ++i) {
    auto* bars = qobject_cast<QCPBars*>(plot()->plottable(i));
    if (bars == nullptr || !bars->visible() || bars->data()->isEmpty()) continue;
    const qint64 lo = bars->property("lo").toLongLong(), hi = bars->property("hi").toLongLong();
    const double documents = bars->data()->constBegin()->value;
    if (length < static_cast<double>(lo) || length >= static_cast<double>(hi) || count < 0 ||
        count > documents)
      continue;
    const QString bin =
        hi == std::numeric_limits<qint64>::max()
            ? tr("document length ≥ %1 tokens").arg(lo)
            : tr("document length %1–%2 tokens").arg(lo).arg(hi - 1);  // bins are [lo, hi)
    lines << tr("%1: %2 documents (%3)").arg(bin).arg(documents).arg(bars->name());
  }
  return lines.join(QLatin1Char('\n'));
}

void LengthView::show_tooltip(QMouseEvent* event) {
  const QString text = describe(plot()->xAxis->pixelToCoord(event->position().x()),
                                plot()->yAxis->pixelToCoord(event->position().y()));
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, plot());
}

void LengthView::set_store(const QString& db_path) {
  db_path_ = db_path;
  if (db_path.isEmpty()) {
    show_message(tr("No results store open — File → Open a results database"));
    finish_without_loading();
    return;
  }
  load<LengthData>(
      LoadKind::Store, [](const ResultsStore& db) { return read_length_data(db); },
      [this](const LengthData& data) {
        data_ = data;
        fill_dataset_control();
        redraw();
      });
}

void LengthView::clear_data() {
  data_ = {};
  marked_.clear();
  const QSignalBlocker block(dataset_);
  dataset_->clear();
}

void LengthView::fill_dataset_control() {
  const QSignalBlocker block(dataset_);
  const QString kept = dataset_->currentData().toString();
  dataset_->clear();
  dataset_->addItem(tr("every dataset"), QString());
  for (const LengthHistogram& histogram : data_.histograms)
    if (dataset_->findData(histogram.dataset) < 0)
      dataset_->addItem(histogram.dataset, histogram.dataset);
  dataset_->setCurrentIndex(std::max(0, dataset_->findData(kept)));
}

void LengthView::redraw() {
  QCustomPlot* figure = plot();
  figure->clearPlottables();
  figure->clearItems();
  marked_.clear();
  if (data_.histograms.isEmpty()) {
    show_message(
        tr("No document-length statistics in this store yet — a study's stats steps "
           "record them (lmk data stats --db …)"));
    return;
  }
  const QString chosen = dataset_->currentData().toString();
  constexpr qint64 kOpenEnd = std::numeric_limits<qint64>::max();
  double lower = std::numeric_limits<double>::infinity();
  double upper = 0;
  double highest = 0;
  QStringList percentile_lines;
  int shown = 0;
  for (const LengthHistogram& histogram : data_.histograms) {
    if (!chosen.isEmpty() && histogram.dataset != chosen) continue;
    const QString label = histogram_label(data_, histogram);
    QColor color = series_color(shown);
    ++shown;
    QColor fill = color;
    fill.setAlpha(chosen.isEmpty() ? 110 : 190);
    // One QCPBars per bin: the bins differ in width, and each bar spans exactly [lo, hi).
    bool in_legend = false;
    for (const LengthBin& bin : histogram.bins) {
      auto* bars = new QCPBars(figure->xAxis, figure->yAxis);
      bars->setName(label);
      bars->setPen(QPen(color.darker(130)));
      bars->setBrush(fill);
      bars->setWidthType(QCPBars::wtPlotCoords);
      const double lo = static_cast<double>(bin.lo);
      const double hi = static_cast<double>(bin.hi);
      bars->setWidth(hi - lo);
      bars->addData((lo + hi) / 2, static_cast<double>(bin.count));
      // The exact bounds (a double cannot hold the open last bin's INT64_MAX), for bars().
      bars->setProperty("lo", bin.lo);
      bars->setProperty("hi", bin.hi);
      if (in_legend) bars->removeFromLegend();
      in_legend = true;
      if (bin.count > 0) {
        lower = std::min(lower, bin.lo > 0 ? lo : 1.0);
        upper = std::max(upper, bin.hi != kOpenEnd ? hi : 2 * lo);
        highest = std::max(highest, static_cast<double>(bin.count));
      }
    }
    if (!histogram.percentiles.isEmpty()) percentile_lines << percentile_line(label, histogram);
  }
  for (int i = 0; i < data_.training_lengths.size(); ++i) {
    const TrainingLength& training = data_.training_lengths[i];
    const double tokens = static_cast<double>(training.tokens);
    marked_.append(training.tokens);
    lower = std::min(lower, tokens / 2);
    upper = std::max(upper, tokens * 2);
    auto* line = new QCPItemStraightLine(figure);
    line->setPen(QPen(Qt::black, 1.5, Qt::DashLine));
    line->point1->setCoords(tokens, 0);
    line->point2->setCoords(tokens, 1);
    auto* text = new QCPItemText(figure);
    text->position->setTypeX(QCPItemPosition::ptPlotCoords);
    text->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
    text->position->setCoords(tokens, 0.03 + 0.07 * i);
    text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);
    text->setPadding(QMargins(4, 0, 0, 0));
    text->setText(tr("trained at %1 tokens").arg(training.tokens));
  }
  if (!std::isfinite(lower) || upper <= lower) {
    lower = 1;
    upper = 1e6;
  }
  figure->xAxis->setRange(lower / 1.2, upper * 1.2);
  figure->yAxis->setRange(0, highest > 0 ? highest * 1.15 : 1);
  percentiles_->setText(percentile_lines.isEmpty() ? tr("no percentiles stored")
                                                   : percentile_lines.join(QLatin1Char('\n')));
  show_plot();
}

void LengthView::set_dataset(const QString& dataset) {
  dataset_->setCurrentIndex(std::max(0, dataset_->findData(dataset)));
}

QVector<LengthBin> LengthView::bars(const QString& dataset) const {
  QVector<LengthBin> out;
  for (int i = 0; i < plot()->plottableCount(); ++i) {
    auto* bars = qobject_cast<QCPBars*>(plot()->plottable(i));
    if (!bars || bars->name() != dataset) continue;
    for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
      out.append({bars->property("lo").toLongLong(), bars->property("hi").toLongLong(),
                  static_cast<qint64>(std::llround(it->value))});
  }
  return out;
}

QStringList LengthView::datasets_shown() const {
  QStringList names;
  for (int i = 0; i < plot()->plottableCount(); ++i)
    if (!names.contains(plot()->plottable(i)->name())) names << plot()->plottable(i)->name();
  return names;
}

QVector<qint64> LengthView::training_lengths_marked() const {
  return marked_;
}

QString LengthView::percentile_text() const {
  return percentiles_->text();
}

QString LengthView::export_name() const {
  const QString dataset = dataset_->currentData().toString();
  return dataset.isEmpty() ? QStringLiteral("lengths") : QStringLiteral("lengths-%1").arg(dataset);
}

}  // namespace lmk::widgets
