#include "widgets/explorer_text.h"

#include <QFontMetricsF>
#include <QHash>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>

#include <algorithm>

namespace lmk::widgets {
namespace {

constexpr double kMargin = 8;
const QColor kPoolingBorder = pooling_border_color();
const QColor kSelectedBorder = selected_border_color();
const QColor kEvidenceBorder = evidence_border_color();

QFont marker_font(const QFont& base) {
  QFont small = base;
  small.setPointSizeF(std::max(5.0, base.pointSizeF() * 0.7));
  return small;
}

}  // namespace

TokenTextView::TokenTextView(QWidget* parent) : QAbstractScrollArea(parent) {
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
  viewport()->setBackgroundRole(QPalette::Base);
  viewport()->setAutoFillBackground(true);
  setMinimumHeight(120);
}

void TokenTextView::set_document(const DocumentAttention* d) {
  d_ = d;
  weights_.clear();
  first_row_ = last_row_ = selected_position_ = -1;
  evidence_ = {-1, -1};
  is_pooling_.assign(d_ != nullptr ? static_cast<size_t>(d_->length()) : 0, false);
  pooling_row_.assign(is_pooling_.size(), -1);
  if (d_ != nullptr)
    for (size_t r = 0; r < d_->pooling_positions.size(); ++r) {
      const int64_t position = d_->pooling_positions[r];
      if (position < 0 || position >= d_->length()) continue;
      is_pooling_[static_cast<size_t>(position)] = true;
      pooling_row_[static_cast<size_t>(position)] = static_cast<int64_t>(r);
    }
  laid_out_width_ = -1;
  layout();
  verticalScrollBar()->setValue(0);
}

void TokenTextView::set_weights(std::vector<float> weights, ColourScale scale) {
  weights_ = std::move(weights);
  scale_ = scale;
  viewport()->update();
}

void TokenTextView::set_selected_rows(int64_t first, int64_t last) {
  first_row_ = first;
  last_row_ = first < 0 ? -1 : std::max(first, last);
  viewport()->update();
}

void TokenTextView::set_evidence(std::pair<int64_t, int64_t> span) {
  evidence_ = span;
  viewport()->update();
}

std::pair<int64_t, int64_t> TokenTextView::evidence_positions() const {
  if (d_ == nullptr || evidence_.first < 0) return {-1, -1};
  // A range: the tokens whose bytes overlap it. A point (a fraction of the text, as the
  // datasets store it): the token at or after that byte — it often falls on the space between
  // two tokens, which no token covers, and nothing was framed.
  const bool point = evidence_.first == evidence_.second;
  int64_t first = -1, last = -1;
  for (size_t i = 0; i < d_->spans.size(); ++i) {
    const auto [b, e] = d_->spans[i];
    if (e <= b) continue;  // a token the model inserted
    const bool in = point ? static_cast<int64_t>(e) > evidence_.first
                          : static_cast<int64_t>(b) < evidence_.second &&
                                evidence_.first < static_cast<int64_t>(e);
    if (!in) {
      if (first >= 0) break;
      continue;
    }
    if (first < 0) first = static_cast<int64_t>(i);
    last = static_cast<int64_t>(i);
    if (point) break;
  }
  return {first, last};
}

void TokenTextView::set_selected_position(int64_t position) {
  selected_position_ = position;
  viewport()->update();
}

QColor TokenTextView::token_color(int64_t position) const {
  if (position < 0 || static_cast<size_t>(position) >= weights_.size()) return Qt::white;
  return attention_color(scale_.normalized(weights_[static_cast<size_t>(position)]));
}

QRectF TokenTextView::token_rect(int64_t position) const {
  if (position < 0 || static_cast<size_t>(position) >= item_of_position_.size()) return {};
  const Item& item = items_[item_of_position_[static_cast<size_t>(position)]];
  return QRectF(kMargin + item.x, item.line * line_height_, item.width, line_height_);
}

int TokenTextView::content_height() const {
  return static_cast<int>(static_cast<double>(line_first_item_.size()) * line_height_);
}

void TokenTextView::layout() {
  items_.clear();
  line_first_item_.clear();
  item_of_position_.clear();
  const QFontMetricsF metrics(font());
  const QFontMetricsF small_metrics(marker_font(font()));
  line_height_ = std::ceil(metrics.height()) + 4;
  laid_out_width_ = viewport()->width();
  if (d_ == nullptr) {
    update_scrollbar();
    viewport()->update();
    return;
  }
  const double width = std::max(100.0, viewport()->width() - 2 * kMargin);
  // Token texts repeat: measure each distinct one once (a 32k-token document has a few
  // thousand).
  QHash<QString, float> advance;
  const auto measure = [&](const QString& text) {
    auto it = advance.constFind(text);
    if (it != advance.constEnd()) return *it;
    const auto w = static_cast<float>(metrics.horizontalAdvance(text));
    advance.insert(text, w);
    return w;
  };
  double x = 0;
  int line = 0;
  size_t word_start = 0;  // the item the current word starts with
  line_first_item_.push_back(0);
  const auto new_line = [&](size_t first_item) {
    ++line;
    x = 0;
    line_first_item_.push_back(first_item);
  };
  // Places an item at the end of the layout; a word that does not fit moves to the next line
  // whole (unless it alone is wider than a line).
  const auto place = [&](Item item, bool continues_word) {
    if (!continues_word) word_start = items_.size();
    if (x + item.width > width && x > 0) {
      if (continues_word && word_start < items_.size() && items_[word_start].line == line &&
          items_[word_start].x > 0) {
        const double shift = items_[word_start].x;
        new_line(word_start);
        for (size_t k = word_start; k < items_.size(); ++k) {
          items_[k].x -= static_cast<float>(shift);
          items_[k].line = line;
        }
        x = items_.back().x + items_.back().width;
      } else {
        new_line(items_.size());
        word_start = items_.size();
      }
    }
    item.x = static_cast<float>(x);
    item.line = line;
    x += item.width;
    items_.push_back(std::move(item));
  };
  // Text between tokens (or a token's text) broken at newlines; tabs as spaces.
  const auto add_text = [&](const std::string& bytes, int64_t position, bool continues_word) {
    QString text = QString::fromUtf8(bytes.data(), static_cast<qsizetype>(bytes.size()));
    text.replace(QLatin1Char('\t'), QStringLiteral("    "));
    text.remove(QLatin1Char('\r'));
    const QStringList parts = text.split(QLatin1Char('\n'));
    for (qsizetype k = 0; k < parts.size(); ++k) {
      if (k > 0) {
        new_line(items_.size());
        continues_word = false;
      }
      // A token keeps its first piece even when empty: item_of_position_ points at it.
      if (parts[k].isEmpty() && !(position >= 0 && k == 0)) continue;
      Item item;
      item.position = position;
      item.text = parts[k];
      item.width = measure(parts[k]);
      // A piece of text between tokens is a word boundary (spaces, punctuation).
      place(std::move(item), continues_word && !parts[k].startsWith(QLatin1Char(' ')));
      continues_word = true;
    }
  };

  const std::string& text = d_->text;
  size_t byte = 0;  // the text shown so far
  item_of_position_.assign(static_cast<size_t>(d_->length()), 0);
  for (int64_t i = 0; i < d_->length(); ++i) {
    const auto [span_begin, span_end] = d_->spans[static_cast<size_t>(i)];
    const size_t begin = std::min<size_t>(std::max<size_t>(span_begin, byte), text.size());
    const size_t end = std::min<size_t>(std::max<size_t>(span_end, begin), text.size());
    bool continues_word = begin == byte && i > 0 && !is_pooling_[static_cast<size_t>(i - 1)];
    if (begin > byte) {
      add_text(text.substr(byte, begin - byte), -1, false);
      continues_word = false;
    }
    if (span_begin == span_end || end == begin) {
      // A token the model inserted: a small box with its name.
      Item item;
      item.position = i;
      item.inserted = true;
      item.text = QString::fromStdString(d_->tokens[static_cast<size_t>(i)]);
      item.width = static_cast<float>(small_metrics.horizontalAdvance(item.text) + 6);
      item_of_position_[static_cast<size_t>(i)] = items_.size();
      place(std::move(item), false);
      word_start = items_.size();
    } else {
      const size_t before = items_.size();
      add_text(text.substr(begin, end - begin), i, continues_word);
      if (items_.size() > before) item_of_position_[static_cast<size_t>(i)] = before;
    }
    byte = std::max(byte, end);
  }
  if (byte < text.size()) add_text(text.substr(byte), -1, false);
  update_scrollbar();
  viewport()->update();
  emit visible_changed();
}

void TokenTextView::update_scrollbar() {
  const int height = viewport()->height();
  verticalScrollBar()->setRange(0, std::max(0, content_height() - height + 8));
  verticalScrollBar()->setPageStep(height);
  verticalScrollBar()->setSingleStep(static_cast<int>(line_height_));
}

int TokenTextView::line_at(double y) const {
  if (line_first_item_.empty()) return 0;
  const int line = static_cast<int>(y / line_height_);
  return std::clamp(line, 0, static_cast<int>(line_first_item_.size()) - 1);
}

void TokenTextView::paintEvent(QPaintEvent*) {
  QPainter painter(viewport());
  if (d_ == nullptr || items_.empty()) return;
  const double top = verticalScrollBar()->value();
  const int first_line = line_at(top);
  const int last_line = line_at(top + viewport()->height());
  const size_t first = line_first_item_[static_cast<size_t>(first_line)];
  const size_t last = static_cast<size_t>(last_line) + 1 < line_first_item_.size()
                          ? line_first_item_[static_cast<size_t>(last_line) + 1]
                          : items_.size();
  const QFont text_font = font();
  const QFont small_font = marker_font(font());
  // The evidence: framed on each line it spans.
  const auto [evidence_first, evidence_last] = evidence_positions();
  const auto in_evidence = [&](const Item& item) {
    return evidence_first >= 0 && !item.inserted && item.position >= evidence_first &&
           item.position <= evidence_last;
  };
  int evidence_line = -1;
  double evidence_left = 0, evidence_right = 0;
  const auto frame_evidence = [&] {
    if (evidence_line < 0) return;
    // A 3 px frame and a bar under it: a 2 px frame alone was lost on the orange-to-red
    // token colours.
    const QRectF frame(kMargin + evidence_left - 2, evidence_line * line_height_ - top + 0.5,
                       evidence_right - evidence_left + 4, line_height_ - 1);
    painter.setPen(QPen(kEvidenceBorder, 3));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(frame);
    painter.fillRect(QRectF(frame.left(), frame.bottom() - 3, frame.width(), 3), kEvidenceBorder);
    evidence_line = -1;
  };
  for (size_t k = first; k < last; ++k) {
    const Item& item = items_[k];
    const QRectF box(kMargin + item.x, item.line * line_height_ - top, item.width, line_height_);
    if (item.position >= 0) {
      const QColor colour = token_color(item.position);
      const double value = static_cast<size_t>(item.position) < weights_.size()
                               ? scale_.normalized(weights_[static_cast<size_t>(item.position)])
                               : 0.0;
      const QColor ink = value > 0.7 ? Qt::white : Qt::black;
      if (item.inserted) {
        const int64_t row = pooling_row_[static_cast<size_t>(item.position)];
        const bool selected = row >= 0 && first_row_ >= 0 && row >= first_row_ && row <= last_row_;
        const QRectF marker = box.adjusted(1, 2, -1, -2);
        painter.setBrush(colour);
        painter.setPen(QPen(selected ? kSelectedBorder : kPoolingBorder,
                            selected ? 2.5 : (row >= 0 ? 1.2 : 0.6)));
        painter.drawRoundedRect(marker, 3, 3);
        painter.setFont(small_font);
        painter.setPen(ink);
        painter.drawText(marker, Qt::AlignCenter, item.text);
        painter.setFont(text_font);
      } else {
        if (colour != Qt::white) painter.fillRect(box.adjusted(0, 1, 0, -1), colour);
        painter.setPen(ink);
        painter.drawText(box, Qt::AlignLeft | Qt::AlignVCenter, item.text);
      }
      if (item.position == selected_position_) {
        painter.setPen(QPen(kPoolingBorder, 2));
        painter.setBrush(Qt::NoBrush);
        painter.drawRect(box.adjusted(0.5, 0.5, -0.5, -0.5));
      }
      if (in_evidence(item)) {
        if (evidence_line != item.line) {
          frame_evidence();
          evidence_line = item.line;
          evidence_left = item.x;
        }
        evidence_right = item.x + item.width;
      }
    } else {
      painter.setPen(palette().color(QPalette::Text));
      painter.drawText(box, Qt::AlignLeft | Qt::AlignVCenter, item.text);
    }
  }
  frame_evidence();
}

void TokenTextView::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  if (viewport()->width() == laid_out_width_) {
    update_scrollbar();
    return;
  }
  // Keep the first visible token on screen across the new line breaks.
  const int64_t keep = visible_positions().first;
  layout();
  if (keep > 0) {
    const QRectF rect = token_rect(keep);
    verticalScrollBar()->setValue(static_cast<int>(rect.top()));
  }
}

int64_t TokenTextView::position_at(const QPoint& point) const {
  if (d_ == nullptr || items_.empty()) return -1;
  const double y = point.y() + verticalScrollBar()->value();
  if (y < 0 || y >= content_height()) return -1;
  const int line = line_at(y);
  const size_t first = line_first_item_[static_cast<size_t>(line)];
  const size_t last = static_cast<size_t>(line) + 1 < line_first_item_.size()
                          ? line_first_item_[static_cast<size_t>(line) + 1]
                          : items_.size();
  const double x = point.x() - kMargin;
  for (size_t k = first; k < last; ++k)
    if (x >= items_[k].x && x < items_[k].x + items_[k].width) return items_[k].position;
  return -1;
}

void TokenTextView::scroll_to_position(int64_t position) {
  const QRectF rect = token_rect(position);
  if (rect.isNull()) return;
  verticalScrollBar()->setValue(static_cast<int>(rect.top() - viewport()->height() / 3.0));
}

std::pair<int64_t, int64_t> TokenTextView::visible_positions() const {
  if (items_.empty()) return {-1, -1};
  const double top = verticalScrollBar()->value();
  const size_t first = line_first_item_[static_cast<size_t>(line_at(top))];
  const int last_line = line_at(top + viewport()->height());
  const size_t last = static_cast<size_t>(last_line) + 1 < line_first_item_.size()
                          ? line_first_item_[static_cast<size_t>(last_line) + 1]
                          : items_.size();
  int64_t a = -1, b = -1;
  for (size_t k = first; k < last; ++k)
    if (items_[k].position >= 0) {
      if (a < 0) a = items_[k].position;
      b = items_[k].position;
    }
  if (a < 0) {
    // Only text between tokens on screen: the next token after it.
    for (size_t k = last; k < items_.size(); ++k)
      if (items_[k].position >= 0) return {items_[k].position, items_[k].position};
  }
  return {a, b};
}

void TokenTextView::mousePressEvent(QMouseEvent* event) {
  const int64_t position = position_at(event->position().toPoint());
  if (position >= 0) emit position_clicked(position, event->modifiers());
}

void TokenTextView::scrollContentsBy(int, int) {
  viewport()->update();
  emit visible_changed();
}

}  // namespace lmk::widgets
