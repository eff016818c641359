#pragma once

// The attention explorer's text: the document as the model read it, each token on a background
// coloured by the attention it gets, the tokens the model inserted (CLS, landmarks) as small
// marked boxes, the pooling tokens outlined (the selected ones in red) and a query's evidence
// framed. Tokens are laid out once per width and only the visible lines are painted, so a
// 32k-token document scrolls like a short one.

#include <QAbstractScrollArea>
#include <QColor>
#include <QRectF>
#include <QString>

#include <cstdint>
#include <utility>
#include <vector>

#include "core/eval/document_attention.h"
#include "widgets/explorer_data.h"

namespace lmk::widgets {

class TokenTextView : public QAbstractScrollArea {
  Q_OBJECT
 public:
  explicit TokenTextView(QWidget* parent = nullptr);

  // Shows `d` (kept by the caller while shown; nullptr: nothing) and lays it out.
  void set_document(const DocumentAttention* d);
  // The weight of every input position and the scale that colours them.
  void set_weights(std::vector<float> weights, ColourScale scale);
  // The selected pooling tokens (indices into pooling_positions; -1: none).
  void set_selected_rows(int64_t first, int64_t last);
  // The evidence's byte range (begin == end: a marker at that byte; -1: none).
  void set_evidence(std::pair<int64_t, int64_t> span);
  // The input positions framed as the evidence, first and last ({-1, -1}: none).
  std::pair<int64_t, int64_t> evidence_positions() const;
  // The input position clicked last (-1: none), outlined.
  void set_selected_position(int64_t position);

  // What is drawn: a token's background colour and its box in the laid-out text.
  QColor token_color(int64_t position) const;
  QRectF token_rect(int64_t position) const;
  const std::vector<float>& weights() const { return weights_; }
  const ColourScale& scale() const { return scale_; }
  // The input position under a point of the viewport (-1: none).
  int64_t position_at(const QPoint& viewport_point) const;
  // Scrolls so that `position` is on screen (near the top third).
  void scroll_to_position(int64_t position);
  // The input positions on screen: the first and the last.
  std::pair<int64_t, int64_t> visible_positions() const;
  // The laid-out height in pixels (for tests and the benchmark).
  int content_height() const;

 signals:
  // A token was clicked (with the keyboard modifiers: shift extends a landmark selection).
  void position_clicked(qint64 position, Qt::KeyboardModifiers modifiers);
  // The visible positions changed (scrolling, a new layout).
  void visible_changed();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;

 private:
  // One piece of the layout: a token's text (position >= 0) or the text between tokens.
  struct Item {
    int64_t position = -1;
    QString text;
    float x = 0, width = 0;
    int line = 0;
    bool inserted = false;  // a token the model added (no text of its own)
  };

  void layout();
  void update_scrollbar();
  int line_at(double y) const;
  double line_height() const { return line_height_; }

  const DocumentAttention* d_ = nullptr;
  std::vector<Item> items_;
  std::vector<size_t> line_first_item_;   // per line: its first item
  std::vector<size_t> item_of_position_;  // per input position: its item
  std::vector<bool> is_pooling_;          // per input position
  std::vector<int64_t> pooling_row_;      // per input position: its pooling index, else -1
  std::vector<float> weights_;
  ColourScale scale_;
  int64_t first_row_ = -1, last_row_ = -1;
  int64_t selected_position_ = -1;
  std::pair<int64_t, int64_t> evidence_{-1, -1};
  double line_height_ = 16;
  int laid_out_width_ = -1;
};

}  // namespace lmk::widgets
