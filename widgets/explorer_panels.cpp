#include "widgets/explorer_panels.h"

#include <QFontMetricsF>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace lmk::widgets {
namespace {

constexpr int kLabelWidth = 64;
constexpr int kStripHeight = 18;
constexpr int kCellWidth = 58, kCellHeight = 26, kGridLabel = 52, kGridHeader = 16;

}  // namespace

OverviewStrip::OverviewStrip(QWidget* parent) : QWidget(parent) {
  setMouseTracking(false);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setToolTip(tr("The whole document, one strip per pooling on one colour scale: click to jump"));
}

void OverviewStrip::set_rows(std::vector<Row> rows, bool log) {
  rows_ = std::move(rows);
  scale_ = ColourScale{};
  scale_.log = log;
  scale_.max = 0;
  for (const Row& row : rows_)
    for (double v : row.bins) scale_.max = std::max(scale_.max, v);
  updateGeometry();
  update();
}

void OverviewStrip::set_window(double from, double to) {
  from_ = from;
  to_ = to;
  update();
}

void OverviewStrip::set_evidence(double fraction) {
  evidence_ = fraction;
  update();
}

QColor OverviewStrip::cell_color(int row, int bin) const {
  return attention_color(
      scale_.normalized(rows_[static_cast<size_t>(row)].bins[static_cast<size_t>(bin)]));
}

double OverviewStrip::x_of(double fraction) const {
  return kLabelWidth + fraction * std::max(1, width() - kLabelWidth - 4);
}

double OverviewStrip::fraction_at(double x) const {
  return std::clamp((x - kLabelWidth) / std::max(1, width() - kLabelWidth - 4), 0.0, 1.0);
}

QSize OverviewStrip::sizeHint() const {
  return QSize(400, std::max<int>(1, static_cast<int>(rows_.size())) * (kStripHeight + 2) + 6);
}

namespace {
constexpr double kRampWidth = 160;
constexpr double kLegendHeight = 20;
}  // namespace

ColourLegend::ColourLegend(QWidget* parent) : QWidget(parent) {
  setToolTip(
      tr("The token colours: the attention a token gets, from none (white) to the "
         "largest shown (dark red); the boxes and the frame are the text's marks"));
}

void ColourLegend::set_scale(const ColourScale& scale) {
  scale_ = scale;
  update();
}

QStringList ColourLegend::labels() const {
  const QString low = scale_.log ? QString::number(scale_.max / 1000, 'g', 2) : QStringLiteral("0");
  return {
      tr("attention %1").arg(low),
      tr("%1 (%2)").arg(QString::number(scale_.max, 'g', 3), scale_.log ? tr("log") : tr("linear")),
      tr("pooling token"), tr("selected"), tr("evidence")};
}

QRectF ColourLegend::ramp_rect() const {
  const QFontMetricsF metrics(font());
  const double left = std::ceil(4 + metrics.horizontalAdvance(labels()[0]) + 6);  // whole pixels
  return QRectF(left, 4, kRampWidth, kLegendHeight - 8);
}

QSize ColourLegend::sizeHint() const {
  const QFontMetricsF metrics(font());
  double width = kRampWidth + 40;
  for (const QString& label : labels()) width += metrics.horizontalAdvance(label) + 28;
  return QSize(static_cast<int>(width), static_cast<int>(kLegendHeight));
}

void ColourLegend::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const QStringList texts = labels();
  const QFontMetricsF metrics(font());
  const QRectF ramp = ramp_rect();
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(QRectF(4, 0, ramp.left() - 6, kLegendHeight), Qt::AlignVCenter | Qt::AlignRight,
                   texts[0]);
  for (int x = 0; x < static_cast<int>(ramp.width()); ++x)
    painter.fillRect(QRectF(ramp.left() + x, ramp.top(), 1, ramp.height()),
                     attention_color((x + 0.5) / ramp.width()));
  painter.setPen(QPen(palette().color(QPalette::Mid), 1));
  painter.drawRect(ramp);
  double x = ramp.right() + 6;
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(QRectF(x, 0, metrics.horizontalAdvance(texts[1]) + 2, kLegendHeight),
                   Qt::AlignVCenter | Qt::AlignLeft, texts[1]);
  x += metrics.horizontalAdvance(texts[1]) + 16;
  const QColor marks[3] = {pooling_border_color(), selected_border_color(),
                           evidence_border_color()};
  for (int i = 0; i < 3; ++i) {
    const QRectF box(x, 5, 14, kLegendHeight - 10);
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(marks[i], i == 0 ? 1.2 : i == 1 ? 2.5 : 3));
    painter.drawRoundedRect(box, i == 2 ? 0 : 3, i == 2 ? 0 : 3);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRectF(x + 18, 0, metrics.horizontalAdvance(texts[2 + i]) + 2, kLegendHeight),
                     Qt::AlignVCenter | Qt::AlignLeft, texts[2 + i]);
    x += 18 + metrics.horizontalAdvance(texts[2 + i]) + 12;
  }
}

void OverviewStrip::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().color(QPalette::Base));
  for (size_t r = 0; r < rows_.size(); ++r) {
    const Row& row = rows_[r];
    const double top = 3 + static_cast<double>(r) * (kStripHeight + 2);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QRectF(2, top, kLabelWidth - 4, kStripHeight),
                     Qt::AlignVCenter | Qt::AlignLeft, row.label);
    const auto bins = static_cast<int>(row.bins.size());
    for (int b = 0; b < bins; ++b) {
      const double x0 = x_of(static_cast<double>(b) / bins);
      const double x1 = x_of(static_cast<double>(b + 1) / bins);
      painter.fillRect(QRectF(x0, top, x1 - x0 + 0.5, kStripHeight),
                       cell_color(static_cast<int>(r), b));
    }
    painter.setPen(QColor(160, 160, 160));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(QRectF(x_of(0), top, x_of(1) - x_of(0), kStripHeight));
  }
  if (rows_.empty()) return;
  const double bottom = 3 + static_cast<double>(rows_.size()) * (kStripHeight + 2) - 2;
  if (evidence_ >= 0) {
    painter.setPen(QPen(QColor(44, 160, 44), 2));
    painter.drawLine(QPointF(x_of(evidence_), 1), QPointF(x_of(evidence_), bottom + 1));
  }
  if (to_ > from_) {
    painter.setPen(QPen(QColor(31, 119, 180), 2));
    painter.drawRect(QRectF(x_of(from_), 1, std::max(2.0, x_of(to_) - x_of(from_)), bottom));
  }
}

void OverviewStrip::mousePressEvent(QMouseEvent* event) {
  if (event->position().x() >= kLabelWidth)
    emit fraction_clicked(fraction_at(event->position().x()));
}

void OverviewStrip::mouseMoveEvent(QMouseEvent* event) {
  if ((event->buttons() & Qt::LeftButton) != 0) mousePressEvent(event);
}

LayerHeadGrid::LayerHeadGrid(QWidget* parent) : QWidget(parent) {
  setToolTip(
      tr("Position profile of every layer (rows; G global, L local) and head (columns): "
         "click to show it"));
}

void LayerHeadGrid::set_document(const DocumentAttention* d, bool skip_sink) {
  d_ = d;
  thumbnails_.clear();
  if (d_ != nullptr) {
    const int64_t L = d_->length();
    for (int64_t layer = 0; layer < d_->layers; ++layer)
      for (int64_t head = -1; head < d_->heads; ++head) {
        const float* p = d_->profile(layer, head);
        thumbnails_.push_back(fraction_bins(*d_, std::vector<float>(p, p + L), kBins, skip_sink));
      }
  }
  updateGeometry();
  update();
}

void LayerHeadGrid::set_current(int64_t layer, int64_t head) {
  layer_ = layer;
  head_ = head;
  update();
}

QRect LayerHeadGrid::cell_rect(int64_t layer, int64_t head) const {
  return QRect(kGridLabel + static_cast<int>(head + 1) * kCellWidth,
               kGridHeader + static_cast<int>(layer) * kCellHeight, kCellWidth - 3,
               kCellHeight - 3);
}

std::pair<int64_t, int64_t> LayerHeadGrid::cell_at(const QPoint& point) const {
  if (d_ == nullptr || point.x() < kGridLabel || point.y() < kGridHeader) return {-1, -2};
  const int64_t head = (point.x() - kGridLabel) / kCellWidth - 1;
  const int64_t layer = (point.y() - kGridHeader) / kCellHeight;
  if (layer >= d_->layers || head >= d_->heads) return {-1, -2};
  return {layer, head};
}

QSize LayerHeadGrid::sizeHint() const {
  if (d_ == nullptr) return QSize(200, 60);
  return QSize(kGridLabel + static_cast<int>(d_->heads + 1) * kCellWidth + 4,
               kGridHeader + static_cast<int>(d_->layers) * kCellHeight + 4);
}

void LayerHeadGrid::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().color(QPalette::Base));
  if (d_ == nullptr) return;
  QFont small = font();
  small.setPointSizeF(std::max(6.0, font().pointSizeF() * 0.85));
  painter.setFont(small);
  painter.setPen(palette().color(QPalette::Text));
  for (int64_t head = -1; head < d_->heads; ++head)
    painter.drawText(
        QRect(kGridLabel + static_cast<int>(head + 1) * kCellWidth, 0, kCellWidth, kGridHeader),
        Qt::AlignCenter, head < 0 ? tr("mean") : tr("h%1").arg(head));
  painter.setRenderHint(QPainter::Antialiasing);
  for (int64_t layer = 0; layer < d_->layers; ++layer) {
    const bool global = static_cast<size_t>(layer) < d_->global_layers.size() &&
                        d_->global_layers[static_cast<size_t>(layer)];
    painter.setPen(palette().color(QPalette::Text));
    QFont label_font = small;
    label_font.setBold(global);
    painter.setFont(label_font);
    painter.drawText(
        QRect(0, kGridHeader + static_cast<int>(layer) * kCellHeight, kGridLabel - 4, kCellHeight),
        Qt::AlignVCenter | Qt::AlignRight, tr("%1 %2").arg(layer).arg(global ? tr("G") : tr("L")));
    for (int64_t head = -1; head < d_->heads; ++head) {
      const QRect cell = cell_rect(layer, head);
      painter.fillRect(cell, global ? QColor(238, 243, 250) : QColor(248, 248, 248));
      const std::vector<double>& bins =
          thumbnails_[static_cast<size_t>(layer * (1 + d_->heads) + head + 1)];
      const double max = *std::max_element(bins.begin(), bins.end());
      if (max > 0) {
        QPainterPath path(QPointF(cell.left(), cell.bottom()));
        for (int b = 0; b < kBins; ++b) {
          const double x = cell.left() + (b + 0.5) * cell.width() / kBins;
          path.lineTo(x, cell.bottom() - bins[static_cast<size_t>(b)] / max * (cell.height() - 2));
        }
        path.lineTo(cell.right(), cell.bottom());
        path.closeSubpath();
        painter.setPen(Qt::NoPen);
        painter.setBrush(QColor(253, 141, 60));
        painter.drawPath(path);
      }
      if (layer == layer_ && head == head_) {
        painter.setPen(QPen(QColor(214, 39, 40), 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(cell.adjusted(-1, -1, 1, 1));
      }
    }
  }
}

void LayerHeadGrid::mousePressEvent(QMouseEvent* event) {
  const auto [layer, head] = cell_at(event->position().toPoint());
  if (layer >= 0) emit chosen(layer, head);
}

}  // namespace lmk::widgets
