#include "widgets/plot_view.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QEvent>
#include <QLocale>
#include <QResizeEvent>
#include <QStyle>
#include <algorithm>
#include <cmath>
#include <vector>

#include <qcustomplot.h>

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QTimer>
#include <QVBoxLayout>
#include <stdexcept>

#include "widgets/plot_export.h"

namespace lmk::widgets {

QCPColorGradient viridis() {
  QCPColorGradient gradient;
  gradient.clearColorStops();
  gradient.setColorStopAt(0.0, QColor(68, 1, 84));
  gradient.setColorStopAt(0.25, QColor(59, 82, 139));
  gradient.setColorStopAt(0.5, QColor(33, 145, 140));
  gradient.setColorStopAt(0.75, QColor(94, 201, 98));
  gradient.setColorStopAt(1.0, QColor(253, 231, 37));
  gradient.setColorInterpolation(QCPColorGradient::ciRGB);
  gradient.setNanHandling(QCPColorGradient::nhTransparent);
  return gradient;
}

QColor series_color(int index) {
  static const QColor colors[] = {
      QColor(31, 119, 180),  QColor(255, 127, 14), QColor(44, 160, 44),   QColor(214, 39, 40),
      QColor(148, 103, 189), QColor(140, 86, 75),  QColor(227, 119, 194), QColor(127, 127, 127),
      QColor(188, 189, 34),  QColor(23, 190, 207)};
  constexpr int count = sizeof(colors) / sizeof(colors[0]);
  return colors[((index % count) + count) % count];
}

void replot_when_sized(QCustomPlot* plot) {
  if (plot->width() > 0 && plot->height() > 0) plot->replot();
}

namespace {

// Swallows resize events to an empty size (ignore_empty_resizes).
class EmptyResizeFilter : public QObject {
 public:
  using QObject::QObject;
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::Resize && static_cast<QResizeEvent*>(event)->size().isEmpty())
      return true;
    return QObject::eventFilter(watched, event);
  }
};

}  // namespace

void ignore_empty_resizes(QCustomPlot* plot) {
  plot->installEventFilter(new EmptyResizeFilter(plot));
}

QSharedPointer<QCPAxisTicker> log_ticker(double low, double high) {
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  if (!(low > 0) || !(high >= low)) return ticker;
  const int first = static_cast<int>(std::floor(std::log10(low)));
  const int last = static_cast<int>(std::ceil(std::log10(high)));
  // Tick values with a little slack: a power of ten computed as pow(10, k) may miss by an ulp.
  auto inside = [&](double v) { return v >= low * (1 - 1e-9) && v <= high * (1 + 1e-9); };
  std::vector<double> ticks;
  for (int k = first; k <= last; ++k)
    if (inside(std::pow(10.0, k))) ticks.push_back(std::pow(10.0, k));
  if (ticks.size() < 3) {
    for (int k = first; k <= last; ++k)
      for (double m : {2.0, 5.0})
        if (inside(m * std::pow(10.0, k))) ticks.push_back(m * std::pow(10.0, k));
    std::sort(ticks.begin(), ticks.end());
  }
  for (double v : ticks) ticker->addTick(v, QLocale::c().toString(v, 'g', 3));
  return ticker;
}

void set_log_axis(QCPAxis* axis, double low, double high) {
  axis->setScaleType(QCPAxis::stLogarithmic);
  if (!(low > 0) || !(high >= low)) return;
  // Whole decades around the data, a value on a power of ten kept off the edge.
  const double lower = std::pow(10.0, std::floor(std::log10(low / 1.05)));
  const double upper = std::pow(10.0, std::ceil(std::log10(high * 1.05)));
  axis->setRange(lower, upper);
  axis->setTicker(log_ticker(lower, upper));
}

void fit_list_to_items(QComboBox* combo) {
  // The popup shows every item whole (a view may keep the box itself short, as Compare's run
  // choosers do for a laptop's width), and the box's tooltip names the chosen item.
  // Inserted rows are measured as they come, against the longest so far: a list filled one
  // addItem at a time (10 000 evaluation runs) measured every item on each insert, which held
  // the GUI thread for minutes (workbench bench). Removals and resets measure all once.
  static const char* const kLongest = "lmk_longest_item";
  const auto measure = [combo](int first, int last, int longest) {
    for (int i = first; i <= last && i < combo->count(); ++i)
      longest = std::max(longest, combo->fontMetrics().horizontalAdvance(combo->itemText(i)));
    combo->setProperty(kLongest, longest);
    combo->view()->setMinimumWidth(longest +
                                   4 * combo->style()->pixelMetric(QStyle::PM_ScrollBarExtent));
  };
  const auto fit = [combo, measure] { measure(0, combo->count() - 1, 0); };
  QObject::connect(combo->model(), &QAbstractItemModel::rowsInserted, combo,
                   [combo, measure](const QModelIndex&, int first, int last) {
                     measure(first, last, combo->property(kLongest).toInt());
                   });
  QObject::connect(combo->model(), &QAbstractItemModel::rowsRemoved, combo, fit);
  QObject::connect(combo->model(), &QAbstractItemModel::modelReset, combo, fit);
  QObject::connect(combo, &QComboBox::currentTextChanged, combo,
                   [combo](const QString& text) { combo->setToolTip(text); });
  fit();
}

namespace {
const char* const kHiddenSeries = "lmk_hidden_series";  // the plot's property: hidden names
}  // namespace

QStringList hidden_series(const QCustomPlot* plot) {
  return plot->property(kHiddenSeries).toStringList();
}

void apply_hidden_series(QCustomPlot* plot) {
  const QStringList hidden = hidden_series(plot);
  for (int i = 0; i < plot->plottableCount(); ++i) {
    QCPAbstractPlottable* plottable = plot->plottable(i);
    const bool shown = !hidden.contains(plottable->name());
    plottable->setVisible(shown);
    // (a plot whose legend was removed has none)
    if (QCPPlottableLegendItem* item =
            plot->legend != nullptr ? plot->legend->itemWithPlottable(plottable) : nullptr)
      item->setTextColor(shown ? QColor(Qt::black) : QColor(0xa0, 0xa0, 0xa0));
  }
}

void make_legend_clickable(QCustomPlot* plot) {
  QObject::connect(plot, &QCustomPlot::legendClick, plot,
                   [plot](QCPLegend*, QCPAbstractLegendItem* item, QMouseEvent*) {
                     auto* series = qobject_cast<QCPPlottableLegendItem*>(item);
                     if (series == nullptr) return;
                     const QString name = series->plottable()->name();
                     QStringList hidden = hidden_series(plot);
                     if (!hidden.removeAll(name)) hidden << name;
                     plot->setProperty(kHiddenSeries, hidden);
                     apply_hidden_series(plot);
                     replot_when_sized(plot);
                   });
}

void PlotView::add_control(const QString& label, QWidget* widget) {
  // A list as wide as its longest item (dataset names are long: "python-docs-documents · test").
  if (auto* combo = qobject_cast<QComboBox*>(widget)) {
    combo->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    fit_list_to_items(combo);
  }
  const int before_stretch = controls_->count() - 2;  // the stretch, then Export…
  if (!label.isEmpty()) controls_->insertWidget(before_stretch, new QLabel(label, this));
  controls_->insertWidget(controls_->count() - 2, widget);
}

PlotView::PlotView(QWidget* parent) : StoreView(parent) {
  layout_ = new QVBoxLayout(this);
  controls_ = new QHBoxLayout;
  layout_->addLayout(controls_);
  auto* export_button = new QPushButton(tr("Export…"), this);
  export_button->setObjectName(QStringLiteral("export_button"));
  export_button->setToolTip(tr("Save the plot as PNG, PDF or SVG"));
  export_button_ = export_button;
  controls_->addStretch(1);
  controls_->addWidget(export_button);

  pages_ = new QStackedWidget(this);
  message_ = new QLabel(pages_);
  message_->setObjectName(QStringLiteral("empty_state"));
  message_->setAlignment(Qt::AlignCenter);
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  plot_ = new QCustomPlot(pages_);
  ignore_empty_resizes(plot_);
  pages_->addWidget(message_);
  pages_->addWidget(plot_);
  body_ = new QSplitter(Qt::Horizontal, this);
  body_->setChildrenCollapsible(false);
  body_->addWidget(pages_);
  body_->setStretchFactor(0, 1);
  layout_->addWidget(body_, 1);
  make_legend_clickable(plot_);

  connect(export_button, &QPushButton::clicked, this, [this] {
    const QString path = export_plot_with_dialog(plot_, this, export_name());
    if (!path.isEmpty()) emit status_message(tr("Exported %1").arg(path));
  });
  show_message(tr("No results store open — File → Open a results database"));
}

void PlotView::add_below(QWidget* widget, int stretch) {
  layout_->addWidget(widget, stretch);
}

void PlotView::add_beside(QWidget* widget) {
  body_->insertWidget(body_->count() - 1, widget);
  body_->setStretchFactor(body_->count() - 1, 1);
  body_->setStretchFactor(body_->count() - 2, 0);
}

void PlotView::export_to(const QString& path, int width, int height) {
  if (!message().isEmpty())
    throw std::runtime_error(
        QStringLiteral("%1: no plot to export (%2)").arg(path, message()).toStdString());
  export_plot(plot_, path, width, height);
}

QString PlotView::message() const {
  return pages_->currentWidget() == message_ ? message_->text() : QString();
}

void PlotView::show_message(const QString& text) {
  message_->setText(text);
  pages_->setCurrentWidget(message_);
  export_button_->setEnabled(false);
}

void PlotView::show_plot() {
  apply_hidden_series(plot_);
  pages_->setCurrentWidget(plot_);
  export_button_->setEnabled(true);
  replot_when_sized(plot_);
}

void PlotView::finish_without_loading() {
  clear_data();
  const int generation = ++store_generation_;
  ++data_generation_;
  QTimer::singleShot(0, this, [this, generation] {
    if (generation == store_generation_) emit loaded();
  });
}

}  // namespace lmk::widgets
