#include "widgets/pivot_panel.h"

#include <QComboBox>
#include <QFont>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "widgets/results_table.h"

namespace lmk::widgets {

PivotPanel::PivotPanel(QWidget* parent) : QWidget(parent) {
  model_ = new PivotModel(this);
  // A dense table of numbers, in a slightly smaller font so that a study's columns (with their
  // names over lines, PivotModel::headerData) fit a laptop's screen.
  table_ = make_results_table(model_, this);
  QFont compact = table_->font();
  compact.setPointSizeF(compact.pointSizeF() * 0.9);
  table_->setFont(compact);
  table_->verticalHeader()->setDefaultSectionSize(QFontMetrics(compact).height() + 6);
  rows_ = new QComboBox(this);
  rows_->addItem(tr("Variant (run name)"), static_cast<int>(PivotRows::Variant));
  rows_->addItem(tr("Pooling and granularity"), static_cast<int>(PivotRows::PoolingGranularity));
  rows_->addItem(tr("Pooling"), static_cast<int>(PivotRows::Pooling));
  baseline_box_ = new QComboBox(this);
  baseline_box_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  baseline_box_->setToolTip(
      tr("Rows significantly above / below this one are marked ▲ / ▼ (paired tests over the "
         "queries, Holm–Bonferroni over the table)"));
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  legend_ = new QLabel(this);
  legend_->setWordWrap(true);
  legend_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Rows:"), this));
  bar->addWidget(rows_);
  bar->addWidget(new QLabel(tr("Baseline:"), this));
  bar->addWidget(baseline_box_);
  bar->addWidget(note_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(bar);
  layout->addWidget(table_, 1);
  layout->addWidget(legend_);

  connect(rows_, &QComboBox::currentIndexChanged, this, &PivotPanel::changed);
  connect(baseline_box_, &QComboBox::activated, this, [this] {
    set_baseline(baseline_box_->currentData().toString());
    emit changed();
  });
}

PivotRows PivotPanel::rows() const {
  return static_cast<PivotRows>(rows_->currentData().toInt());
}

void PivotPanel::set_rows(PivotRows rows) {
  rows_->setCurrentIndex(rows_->findData(static_cast<int>(rows)));
}

void PivotPanel::set_baseline(const QString& row) {
  baseline_ = row;
  baseline_chosen_ = true;
}

void PivotPanel::describe(const QString& metric) {
  note_->setText(
      metric.isEmpty()
          ? tr("No evaluation results in this store yet")
          : tr("%1 of the eval runs the filter selects: mean ± half its 95 % interval over the "
               "queries; ▲ / ▼ against the baseline; * and bold: the best in the column, "
               "significantly above every other row (else \"(tie)\": the highest, tied); hover a "
               "cell for its N, interval and runs")
                .arg(metric));
}

void PivotPanel::show_table(PivotTable table) {
  {
    const QSignalBlocker block(baseline_box_);
    baseline_box_->clear();
    baseline_box_->addItem(tr("(none)"), QString());
    for (const QString& row : table.rows) baseline_box_->addItem(row, row);
    baseline_box_->setCurrentIndex(std::max(0, baseline_box_->findData(table.baseline)));
  }
  const int columns = model_->columnCount();
  if (model_->set_table(std::move(table)) && model_->columnCount() != columns)
    table_->resizeColumnsToContents();
  legend_->setText(model_->legend());
}

}  // namespace lmk::widgets
