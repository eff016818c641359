#pragma once

// Two panels of the attention explorer (widgets/explorer_view.h), drawn by hand so they stay
// quick at 32k tokens:
// - OverviewStrip: the whole document in one strip per pooling (CLS and LMK one above the
//   other, one colour scale), the part the text shows framed; a click picks a place to jump to.
// - LayerHeadGrid: one small position profile per layer and head (mean over heads first),
//   global layers marked; a click picks the layer and head.

#include <QRectF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <cstdint>
#include <vector>

#include "core/eval/document_attention.h"
#include "widgets/explorer_data.h"

namespace lmk::widgets {

// The text's colour key: the ramp of the token colours from 0 to the largest weight shown (log:
// three decades below it, as ColourScale does), then the marks the text draws — a pooling
// token, a selected one, the query's evidence.
class ColourLegend : public QWidget {
  Q_OBJECT
 public:
  explicit ColourLegend(QWidget* parent = nullptr);
  void set_scale(const ColourScale& scale);
  const ColourScale& scale() const { return scale_; }
  // The labels drawn, in order (the ramp's ends, then the marks).
  QStringList labels() const;
  // Where the ramp is drawn; its left edge is weight 0 (log: max / 1000), its right the max.
  QRectF ramp_rect() const;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override { return sizeHint(); }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  ColourScale scale_;
};

class OverviewStrip : public QWidget {
  Q_OBJECT
 public:
  explicit OverviewStrip(QWidget* parent = nullptr);

  struct Row {
    QString label;
    std::vector<double> bins;  // equal ranges of the text's bytes (fraction_bins)
  };
  // The strips, coloured on one scale: the largest bin of any row (log: three decades below).
  void set_rows(std::vector<Row> rows, bool log);
  // The part of the document the text shows (fractions of its bytes) and the evidence (-1: none).
  void set_window(double from, double to);
  void set_evidence(double fraction);

  int row_count() const { return static_cast<int>(rows_.size()); }
  const Row& row(int index) const { return rows_[static_cast<size_t>(index)]; }
  const ColourScale& scale() const { return scale_; }
  QColor cell_color(int row, int bin) const;
  // The x of a fraction of the document in this widget, and back.
  double x_of(double fraction) const;
  double fraction_at(double x) const;
  QSize sizeHint() const override;
  QSize minimumSizeHint() const override { return sizeHint(); }

 signals:
  void fraction_clicked(double fraction);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  std::vector<Row> rows_;
  ColourScale scale_;
  double from_ = 0, to_ = 0, evidence_ = -1;
};

class LayerHeadGrid : public QWidget {
  Q_OBJECT
 public:
  explicit LayerHeadGrid(QWidget* parent = nullptr);

  // Draws the profiles of `d` (kept by the caller while shown; nullptr: nothing), position 0
  // left out of each cell's scale when skip_sink.
  void set_document(const DocumentAttention* d, bool skip_sink);
  void set_current(int64_t layer, int64_t head);
  // The cell under a point: {layer, head} ({-1, -2} outside the cells).
  std::pair<int64_t, int64_t> cell_at(const QPoint& point) const;
  QRect cell_rect(int64_t layer, int64_t head) const;
  QSize sizeHint() const override;

 signals:
  void chosen(qint64 layer, qint64 head);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;

 private:
  static constexpr int kBins = 48;
  const DocumentAttention* d_ = nullptr;
  std::vector<std::vector<double>> thumbnails_;  // [layer * (1 + heads) + head + 1][kBins]
  int64_t layer_ = 0, head_ = -1;
};

}  // namespace lmk::widgets
