#include "widgets/attention_view.h"

#include <qcustomplot.h>
#include <QComboBox>
#include <QHBoxLayout>
#include <QPoint>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace lmk::widgets {
namespace {

// The most rows the y axis labels: a tall plot has room for about this many. With more rows
// every k-th is labelled (the hover names each): 3684 labels, overlapping, took 200 ms of every
// replot (tests/bench/workbench_bench.cpp).
constexpr int kMaxRowLabels = 64;

// "layer 1 (local, window 64) · mean over heads"; the kind left out when not known.
QString head_text(int layer, int head, const QString& kind) {
  const QString name = kind.isEmpty() ? QObject::tr("layer %1").arg(layer)
                                      : QObject::tr("layer %1 (%2)").arg(layer).arg(kind);
  return head < 0 ? QObject::tr("%1 · mean over heads").arg(name)
                  : QObject::tr("%1 · head %2").arg(name).arg(head);
}

// The stored bin of `row` that covers position x (the last bin includes its end), or null.
const AttentionBin* bin_at(const AttentionRow& row, double x) {
  if (row.bins.isEmpty() || x < row.bins.front().start || x > row.bins.back().end) return nullptr;
  auto after =
      std::upper_bound(row.bins.begin(), row.bins.end(), x,
                       [](double value, const AttentionBin& bin) { return value < bin.start; });
  if (after == row.bins.begin()) return nullptr;
  const AttentionBin& bin = *(after - 1);
  return (x < bin.end || &bin == &row.bins.back()) ? &bin : nullptr;
}

// Whether every row has the same bins and they are equally wide: then each colour-map cell is
// one stored bin.
bool same_uniform_bins(const QVector<const AttentionRow*>& rows) {
  const QVector<AttentionBin>& first = rows.front()->bins;
  if (first.isEmpty()) return false;
  const double width = first.front().end - first.front().start;
  const double tolerance = 1e-9 * std::max(1.0, std::abs(first.back().end));
  for (const AttentionBin& bin : first)
    if (std::abs(bin.end - bin.start - width) > tolerance) return false;
  for (const AttentionRow* row : rows) {
    if (row->bins.size() != first.size()) return false;
    for (int b = 0; b < first.size(); ++b)
      if (std::abs(row->bins[b].start - first[b].start) > tolerance ||
          std::abs(row->bins[b].end - first[b].end) > tolerance)
        return false;
  }
  return width > 0;
}

// The colour map's cells: their centres and outer edges.
struct Cells {
  QVector<double> centers;
  double lower = 0;
  double upper = 1;
};

// Linear: the stored bins when every row has the same equal bins, else 512 equal cells. Log:
// log-spaced cells from half the smallest positive bin edge, fine enough that the narrowest
// stored bin spans two cells or more.
Cells make_cells(const QVector<const AttentionRow*>& rows, bool log_x) {
  Cells cells;
  QVector<double>& centers = cells.centers;
  if (rows.isEmpty()) return cells;
  double lower = std::numeric_limits<double>::infinity();
  double upper = -lower;
  double smallest_positive = lower;
  double narrowest_log = lower;
  for (const AttentionRow* row : rows) {
    for (const AttentionBin& bin : row->bins) {
      lower = std::min(lower, bin.start);
      upper = std::max(upper, bin.end);
      if (bin.start > 0) smallest_positive = std::min(smallest_positive, bin.start);
      if (bin.end > 0) smallest_positive = std::min(smallest_positive, bin.end);
      if (bin.start > 0 && bin.end > bin.start)
        narrowest_log = std::min(narrowest_log, std::log(bin.end / bin.start));
    }
  }
  if (!(upper > lower)) return cells;
  cells.upper = upper;
  if (log_x && upper > 0 && std::isfinite(smallest_positive)) {
    cells.lower = smallest_positive / 2.0;
    const double log_lower = std::log(cells.lower);
    const double span = std::log(upper) - log_lower;
    const double wanted =
        std::isfinite(narrowest_log) ? std::ceil(2.0 * span / narrowest_log) : 256.0;
    const int count = static_cast<int>(std::clamp(wanted, 64.0, 2048.0));
    for (int i = 0; i < count; ++i) centers.append(std::exp(log_lower + (i + 0.5) * span / count));
    return cells;
  }
  cells.lower = lower;
  if (same_uniform_bins(rows)) {
    for (const AttentionBin& bin : rows.front()->bins) centers.append((bin.start + bin.end) / 2);
    return cells;
  }
  const int count = 512;
  for (int i = 0; i < count; ++i) centers.append(lower + (i + 0.5) * (upper - lower) / count);
  return cells;
}

// One colour range for both panels: the smallest to the largest share either shows (from 0,
// most cells sat near the top colour). One share alone spans 0 to it. On the log scale the
// smallest positive share: a share of 0 (a local layer's positions beyond its window) takes
// the lowest colour.
QCPRange colour_range(const QVector<const AttentionRow*>& shown, bool log_color) {
  double smallest = std::numeric_limits<double>::infinity();
  double largest = -smallest;
  for (const AttentionRow* row : shown) {
    for (const AttentionBin& bin : row->bins) {
      if (std::isfinite(bin.weight)) {
        smallest = std::min(smallest, bin.weight);
        largest = std::max(largest, bin.weight);
      }
    }
  }
  if (!log_color)
    return largest > smallest ? QCPRange(smallest, largest)
           : largest > 0      ? QCPRange(0.0, largest)
                              : QCPRange(0.0, 1.0);
  double smallest_positive = std::numeric_limits<double>::infinity();
  for (const AttentionRow* row : shown)
    for (const AttentionBin& bin : row->bins)
      if (std::isfinite(bin.weight) && bin.weight > 0)
        smallest_positive = std::min(smallest_positive, bin.weight);
  return std::isfinite(smallest_positive) && largest > smallest_positive
             ? QCPRange(smallest_positive, largest)
         : std::isfinite(smallest_positive) ? QCPRange(smallest_positive / 10, largest)
                                            : QCPRange(1e-6, 1.0);
}

}  // namespace

AttentionView::AttentionView(QWidget* parent) : PlotView(parent) {
  dataset_ = new QComboBox(this);
  layer_head_ = new QComboBox(this);
  length_group_ = new QComboBox(this);
  x_scale_ = new QComboBox(this);
  x_scale_->addItem(tr("linear"), false);
  x_scale_->addItem(tr("log"), true);
  x_scale_->setToolTip(tr("The position axis. Log: the stored bins drawn on a logarithmic one"));
  auto add = [this](const QString& label, QWidget* widget) { add_control(label, widget); };
  add(tr("Dataset"), dataset_);
  add(tr("Layer"), layer_head_);
  add(tr("Lengths"), length_group_);
  for (int panel = 0; panel < 2; ++panel) {
    panels_[panel].pooling = new QComboBox(this);
    add(panel == 0 ? tr("Left") : tr("Right"), panels_[panel].pooling);
  }
  add(tr("x"), x_scale_);
  color_scale_type_ = new QComboBox(this);
  color_scale_type_->addItem(tr("log"), true);
  color_scale_type_->addItem(tr("linear"), false);
  color_scale_type_->setToolTip(
      tr("Log: small shares told apart (CLS's first bin holds most of its attention; on a "
         "linear scale every landmark row was one colour). A share of 0 is the lowest colour"));
  add(tr("Colour"), color_scale_type_);
  // The layer list names each layer's kind ("layer 5 (local, window 128) · mean over heads"):
  // the box shows its start (the whole text in the list and the tooltip), so that the window
  // keeps a laptop's width.
  layer_head_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  layer_head_->setMinimumContentsLength(10);
  for (Panel& panel : panels_) {  // poolings are short names: "cls", "lmk", "mean"
    panel.pooling->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    panel.pooling->setMinimumContentsLength(4);
  }
  build_plot();

  connect(dataset_, &QComboBox::currentIndexChanged, this, [this] {
    const QPoint layer_head = layer_head_->currentData().toPoint();
    fill_choice_controls(dataset_->currentText(), layer_head.x(), layer_head.y());
    load_rows();
  });
  connect(layer_head_, &QComboBox::currentIndexChanged, this, [this] { load_rows(); });
  connect(length_group_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(x_scale_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(color_scale_type_, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  for (Panel& panel : panels_)
    connect(panel.pooling, &QComboBox::currentIndexChanged, this, [this] { redraw(); });
  connect(plot(), &QCustomPlot::mouseMove, this, &AttentionView::show_tooltip);
}

void AttentionView::build_plot() {
  QCustomPlot* figure = plot();
  figure->plotLayout()->clear();
  auto* margins = new QCPMarginGroup(figure);
  for (int i = 0; i < 2; ++i) {
    Panel& panel = panels_[i];
    panel.title = new QCPTextElement(figure, QString(), QFont(font().family(), 11, QFont::Bold));
    figure->plotLayout()->addElement(0, i, panel.title);
    panel.rect = new QCPAxisRect(figure);
    figure->plotLayout()->addElement(1, i, panel.rect);
    panel.rect->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
    panel.rect->axis(QCPAxis::atBottom)->setLabel(tr("relative token position"));
    panel.rect->axis(QCPAxis::atLeft)->setRangeReversed(true);  // first row on top
    panel.map =
        new QCPColorMap(panel.rect->axis(QCPAxis::atBottom), panel.rect->axis(QCPAxis::atLeft));
    panel.map->setInterpolate(false);
    panel.note = new QCPItemText(figure);
    panel.note->setClipAxisRect(panel.rect);
    panel.note->position->setAxisRect(panel.rect);
    panel.note->position->setType(QCPItemPosition::ptAxisRectRatio);
    panel.note->position->setCoords(0.5, 0.5);
    panel.note->setVisible(false);
  }
  color_scale_ = new QCPColorScale(figure);
  figure->plotLayout()->addElement(1, 2, color_scale_);
  color_scale_->setType(QCPAxis::atRight);
  color_scale_->setMarginGroup(QCP::msTop | QCP::msBottom, margins);
  color_scale_->setGradient(viridis());
  for (Panel& panel : panels_) panel.map->setColorScale(color_scale_);
}

void AttentionView::set_store(const QString& db_path) {
  db_path_ = db_path;
  if (db_path.isEmpty()) {
    show_message(tr("No results store open — File → Open a results database"));
    finish_without_loading();
    return;
  }
  // Keep the current choices where the (re)read store still has them.
  const QString dataset = dataset_->currentText();
  const QPoint layer_head = layer_head_->currentData().toPoint();
  const bool has_layer_head = layer_head_->currentIndex() >= 0;
  struct Loaded {
    QVector<AttentionChoice> choices;
    AttentionChoice chosen;
    QVector<AttentionRow> rows;
    QMap<int, QString> layer_kinds;
  };
  load<Loaded>(
      LoadKind::Store,
      [dataset, layer_head, has_layer_head](const ResultsStore& db) {
        Loaded loaded;
        loaded.choices = read_attention_choices(db);
        if (loaded.choices.isEmpty()) return loaded;
        // The kept choice, else the dataset's last layer, mean over heads where stored.
        const QString chosen_dataset =
            std::any_of(loaded.choices.begin(), loaded.choices.end(),
                        [&](const AttentionChoice& c) { return c.dataset == dataset; })
                ? dataset
                : loaded.choices.front().dataset;
        const AttentionChoice* best = nullptr;
        for (const AttentionChoice& choice : loaded.choices) {
          if (choice.dataset != chosen_dataset) continue;
          if (has_layer_head && choice.layer == layer_head.x() && choice.head == layer_head.y()) {
            best = &choice;
            break;
          }
          if (!best || choice.layer > best->layer ||
              (choice.layer == best->layer && choice.head == -1))
            best = &choice;
        }
        loaded.chosen = *best;
        loaded.rows = read_attention_rows(db, best->dataset, best->layer, best->head);
        loaded.layer_kinds = read_layer_kinds(db, best->dataset);
        return loaded;
      },
      [this](const Loaded& loaded) {
        choices_ = loaded.choices;
        rows_ = loaded.rows;
        layer_kinds_ = loaded.layer_kinds;
        layer_kinds_dataset_ = loaded.chosen.dataset;
        fill_choice_controls(loaded.chosen.dataset, loaded.chosen.layer, loaded.chosen.head);
        fill_pooling_controls();
        redraw();
      });
}

void AttentionView::clear_data() {
  choices_.clear();
  rows_.clear();
  centers_.clear();
  layer_kinds_.clear();
  layer_kinds_dataset_.clear();
  for (QComboBox* combo :
       {dataset_, layer_head_, length_group_, panels_[0].pooling, panels_[1].pooling}) {
    const QSignalBlocker block(combo);
    combo->clear();
  }
  for (Panel& panel : panels_) panel.rows.clear();
}

void AttentionView::fill_choice_controls(const QString& dataset, int layer, int head) {
  const QSignalBlocker block_dataset(dataset_);
  const QSignalBlocker block_layer_head(layer_head_);
  const QSignalBlocker block_length_group(length_group_);
  const QString length_group = length_group_->currentData().toString();
  dataset_->clear();
  layer_head_->clear();
  length_group_->clear();
  length_group_->addItem(tr("every length group"), QString());
  QStringList length_groups;
  for (const AttentionChoice& choice : choices_) {
    if (dataset_->findText(choice.dataset) < 0) dataset_->addItem(choice.dataset);
    if (choice.dataset != dataset) continue;
    layer_head_->addItem(head_text(choice.layer, choice.head, layer_kinds_.value(choice.layer)),
                         QPoint(choice.layer, choice.head));
    for (const QString& group : choice.length_groups)
      if (!length_groups.contains(group)) length_groups.append(group);
  }
  for (const QString& group : length_groups) length_group_->addItem(group, group);
  dataset_->setCurrentIndex(std::max(0, dataset_->findText(dataset)));
  // Another dataset may lack this layer / head: then its last layer, mean over heads.
  int layer_head_index = layer_head_->findData(QPoint(layer, head));
  if (layer_head_index < 0) {
    for (int i = 0; i < layer_head_->count(); ++i) {
      const QPoint candidate = layer_head_->itemData(i).toPoint();
      const QPoint best =
          layer_head_index < 0 ? QPoint(-1, 0) : layer_head_->itemData(layer_head_index).toPoint();
      if (candidate.x() > best.x() || (candidate.x() == best.x() && candidate.y() == -1))
        layer_head_index = i;
    }
  }
  layer_head_->setCurrentIndex(std::max(0, layer_head_index));
  length_group_->setCurrentIndex(std::max(0, length_group_->findData(length_group)));
}

void AttentionView::fill_pooling_controls() {
  QStringList poolings;
  for (const AttentionRow& row : rows_)
    if (!poolings.contains(row.pooling)) poolings.append(row.pooling);
  // CLS first and the landmark pooling next, as in the paper; the others after them.
  std::sort(poolings.begin(), poolings.end(), [](const QString& a, const QString& b) {
    auto rank = [](const QString& p) {
      return p == QLatin1String("cls") ? 0 : p == QLatin1String("lmk") ? 1 : 2;
    };
    return rank(a) != rank(b) ? rank(a) < rank(b) : a < b;
  });
  for (int i = 0; i < 2; ++i) {
    QComboBox* combo = panels_[i].pooling;
    const QSignalBlocker block(combo);
    const QString kept = combo->currentText();
    combo->clear();
    combo->addItems(poolings);
    int index = combo->findText(kept);
    if (index < 0) index = std::min(i, static_cast<int>(poolings.size()) - 1);
    combo->setCurrentIndex(index);
  }
}

void AttentionView::load_rows() {
  const QString dataset = dataset_->currentText();
  const QPoint layer_head = layer_head_->currentData().toPoint();
  if (dataset.isEmpty() || db_path_.isEmpty()) return;
  // The layers' kinds are the dataset's models': read again only for another dataset (they
  // come from each run's config.json), not for another layer or head.
  const bool read_kinds = dataset != layer_kinds_dataset_;
  using Rows = QPair<QVector<AttentionRow>, std::optional<QMap<int, QString>>>;
  load<Rows>(
      LoadKind::Data,
      [dataset, layer_head, read_kinds](const ResultsStore& db) {
        return Rows(read_attention_rows(db, dataset, layer_head.x(), layer_head.y()),
                    read_kinds ? std::optional(read_layer_kinds(db, dataset)) : std::nullopt);
      },
      [this, dataset](const Rows& rows) {
        rows_ = rows.first;
        if (rows.second) layer_kinds_dataset_ = dataset;
        if (rows.second && *rows.second != layer_kinds_) {  // another dataset's models
          layer_kinds_ = *rows.second;
          const QSignalBlocker block(layer_head_);
          for (int i = 0; i < layer_head_->count(); ++i) {
            const QPoint item = layer_head_->itemData(i).toPoint();
            layer_head_->setItemText(i,
                                     head_text(item.x(), item.y(), layer_kinds_.value(item.x())));
          }
        }
        fill_pooling_controls();
        redraw();
      });
}

void AttentionView::redraw() {
  if (choices_.isEmpty()) {
    for (Panel& panel : panels_) panel.rows.clear();
    centers_.clear();
    show_message(
        tr("No attention profiles in this store yet — evaluations store them "
           "(lmk eval --db … --attention-docs N), as the eval steps of every study do"));
    return;
  }
  const QString length_group = length_group_->currentData().toString();
  QVector<const AttentionRow*> shown;
  for (Panel& panel : panels_) {
    panel.rows.clear();
    for (int r = 0; r < rows_.size(); ++r) {
      const AttentionRow& row = rows_[r];
      if (row.pooling != panel.pooling->currentText()) continue;
      if (!length_group.isEmpty() && row.length_group != length_group) continue;
      panel.rows.append(r);
      shown.append(&row);
    }
  }
  const bool log_x = x_scale_->currentData().toBool();
  const Cells grid = make_cells(shown, log_x);
  centers_ = grid.centers;
  double max_end = 0;
  for (const AttentionRow* row : shown)
    for (const AttentionBin& bin : row->bins) max_end = std::max(max_end, bin.end);
  const bool log_color = this->log_color();
  const QCPRange data_range = colour_range(shown, log_color);
  const QPoint layer_head = layer_head_->currentData().toPoint();
  color_scale_->setLabel(
      tr("share of the pooling token's attention, %1 scale (%2)")
          .arg(log_color ? tr("log") : tr("linear"))
          .arg(head_text(layer_head.x(), layer_head.y(), layer_kinds_.value(layer_head.x()))));

  for (Panel& panel : panels_) {
    const QString pooling = panel.pooling->currentText();
    panel.title->setText(pooling.isEmpty() ? QString() : pooling.toUpper());
    const int rows = panel.rows.size();
    const int cells = centers_.size();
    QCPColorMapData* data = panel.map->data();
    data->setSize(rows > 0 ? cells : 0, rows);
    if (rows > 0 && cells > 0) {
      // The map's key range holds the first and last cell centres; a single cell or row spans
      // its bin (QCustomPlot draws a one-cell axis with no extent).
      const QCPRange key_range =
          cells > 1 ? QCPRange(centers_.front(), centers_.back())
                    : QCPRange(shown.front()->bins.front().start, shown.front()->bins.back().end);
      data->setRange(key_range, rows > 1 ? QCPRange(0, rows - 1) : QCPRange(-0.5, 0.5));
      for (int r = 0; r < rows; ++r) {
        const AttentionRow& row = rows_[panel.rows[r]];
        for (int c = 0; c < cells; ++c) {
          const AttentionBin* bin = bin_at(row, centers_[c]);
          double value = bin ? bin->weight : kNaN;
          if (log_color && value < data_range.lower) value = data_range.lower;  // 0: lowest colour
          data->setCell(c, r, value);
        }
      }
    }
    panel.map->setDataScaleType(log_color ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    panel.map->setDataRange(data_range);

    QCPAxis* x_axis = panel.rect->axis(QCPAxis::atBottom);
    QCPAxis* y_axis = panel.rect->axis(QCPAxis::atLeft);
    x_axis->setLabel(max_end <= 1.0 ? tr("relative token position") : tr("token position"));
    if (log_x) {
      // Powers of two: the halvings of the document (1/2, 1/4, …) as ticks.
      auto ticker = QSharedPointer<QCPAxisTickerLog>::create();
      ticker->setLogBase(2);
      x_axis->setScaleType(QCPAxis::stLogarithmic);
      x_axis->setTicker(ticker);
    } else {
      x_axis->setScaleType(QCPAxis::stLinear);
      x_axis->setTicker(QSharedPointer<QCPAxisTicker>::create());
    }
    if (cells > 0) x_axis->setRange(grid.lower, grid.upper);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    const int label_step = (rows + kMaxRowLabels - 1) / kMaxRowLabels;
    for (int r = 0; r < rows; r += std::max(1, label_step))
      ticker->addTick(r, rows_[panel.rows[r]].label());
    y_axis->setTicker(ticker);
    y_axis->setRange(-0.5, std::max(rows, 1) - 0.5);
    y_axis->grid()->setVisible(false);
    panel.note->setText(pooling.isEmpty() ? tr("no profiles for these choices")
                                          : tr("no %1 runs for these choices").arg(pooling));
    panel.note->setVisible(rows == 0);
  }
  color_scale_->setDataScaleType(log_color ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
  // The colours span the data; a log bar labels its decades (and 2 and 5 within a narrow one).
  if (log_color)
    color_scale_->axis()->setTicker(log_ticker(data_range.lower, data_range.upper));
  else
    color_scale_->axis()->setTicker(QSharedPointer<QCPAxisTicker>::create());
  color_scale_->setDataRange(data_range);
  show_plot();
}

QString AttentionView::dataset() const {
  return dataset_->currentText();
}

QString AttentionView::pooling(int panel) const {
  return panels_[panel].pooling->currentText();
}

int AttentionView::row_count(int panel) const {
  return panels_[panel].rows.size();
}

const AttentionRow& AttentionView::row(int panel, int row) const {
  return rows_[panels_[panel].rows[row]];
}

QStringList AttentionView::row_labels(int panel) const {
  QStringList labels;
  for (int r : panels_[panel].rows) labels.append(rows_[r].label());
  return labels;
}

int AttentionView::cell_count(int panel) const {
  return panels_[panel].map->data()->keySize();
}

double AttentionView::cell_center(int, int cell) const {
  return centers_[cell];
}

double AttentionView::cell_value(int panel, int row, int cell) const {
  return panels_[panel].map->data()->cell(cell, row);
}

QCPRange AttentionView::color_range(int panel) const {
  return panels_[panel].map->dataRange();
}

QString AttentionView::describe(int panel, double x, int row) const {
  if (panel < 0 || panel > 1 || row < 0 || row >= panels_[panel].rows.size()) return {};
  const AttentionRow& shown = rows_[panels_[panel].rows[row]];
  const AttentionBin* bin = bin_at(shown, x);
  if (!bin) return {};
  const int index = static_cast<int>(bin - shown.bins.data());
  // The bin named as the x axis names positions.
  const QString axis = panels_[panel].rect->axis(QCPAxis::atBottom)->label();
  return tr("%1 (run %2, %3 pooling)\n%4 %5–%6 (bin %7 of %8)\nshare %9")
      .arg(shown.label())
      .arg(shown.run_id)
      .arg(shown.pooling)
      .arg(axis)
      .arg(bin->start, 0, 'g', 4)
      .arg(bin->end, 0, 'g', 4)
      .arg(index + 1)
      .arg(shown.bins.size())
      .arg(std::isfinite(bin->weight) ? QString::number(bin->weight, 'g', 5) : tr("not stored"));
}

void AttentionView::show_tooltip(QMouseEvent* event) {
  const QPointF pos = event->position();
  QCPAxisRect* rect = plot()->axisRectAt(pos);
  QString text;
  for (int i = 0; i < 2 && rect; ++i) {
    if (panels_[i].rect != rect) continue;
    const double x = rect->axis(QCPAxis::atBottom)->pixelToCoord(pos.x());
    const int row = qRound(rect->axis(QCPAxis::atLeft)->pixelToCoord(pos.y()));
    text = describe(i, x, row);
  }
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(event->globalPosition().toPoint(), text, plot());
}

void AttentionView::set_dataset(const QString& dataset) {
  dataset_->setCurrentIndex(dataset_->findText(dataset));
}

void AttentionView::set_layer_head(int layer, int head) {
  layer_head_->setCurrentIndex(layer_head_->findData(QPoint(layer, head)));
}

void AttentionView::set_length_group(const QString& length_group) {
  length_group_->setCurrentIndex(length_group_->findData(length_group));
}

void AttentionView::set_pooling(int panel, const QString& pooling) {
  panels_[panel].pooling->setCurrentIndex(panels_[panel].pooling->findText(pooling));
}

void AttentionView::set_log_x(bool log_x) {
  x_scale_->setCurrentIndex(x_scale_->findData(log_x));
}

void AttentionView::set_log_color(bool log_color) {
  color_scale_type_->setCurrentIndex(color_scale_type_->findData(log_color));
}

bool AttentionView::log_color() const {
  return color_scale_type_->currentData().toBool();
}

QString AttentionView::layer_head_text() const {
  return layer_head_->currentText();
}

QString AttentionView::export_name() const {
  return QStringLiteral("attention-%1").arg(dataset_->currentText());
}

}  // namespace lmk::widgets
