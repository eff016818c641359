#include "widgets/explorer_choices.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>

namespace lmk::widgets {

QString result_label(const DocumentAttention& d) {
  QString label = QString::fromStdString(d.pooling);
  if (d.granularity > 0 && d.pooling != "cls" && d.pooling != "mean")
    label += QStringLiteral(" g=%1").arg(d.granularity);
  return label;
}

ExplorerChoicesPanel::ExplorerChoicesPanel(QWidget* parent) : QWidget(parent) {
  auto* form = new QFormLayout(this);
  form->setContentsMargins(0, 0, 0, 0);
  shown_ = new QComboBox(this);
  shown_->setToolTip(tr("The pooling whose attention colours the text"));
  layer_ = new QSpinBox(this);
  head_ = new QComboBox(this);
  auto* presets = new QHBoxLayout;
  auto* mean_heads = new QPushButton(tr("Mean over heads"), this);
  auto* final_layer = new QPushButton(tr("Final layer"), this);
  presets->addWidget(mean_heads);
  presets->addWidget(final_layer);
  auto* rows = new QHBoxLayout;
  first_row_ = new QSpinBox(this);
  last_row_ = new QSpinBox(this);
  first_row_->setSpecialValueText(tr("all"));
  last_row_->setSpecialValueText(tr("all"));
  first_row_->setToolTip(
      tr("The pooling tokens whose attention is shown (click a landmark box in the text; "
         "shift-click extends the range)"));
  auto* all_rows = new QPushButton(tr("All"), this);
  rows->addWidget(first_row_);
  rows->addWidget(new QLabel(tr("to"), this));
  rows->addWidget(last_row_);
  rows->addWidget(all_rows);
  scale_ = new QComboBox(this);
  scale_->addItems({tr("linear"), tr("log (3 decades)")});
  skip_sink_ = new QCheckBox(tr("Scale without the sink"), this);
  skip_sink_->setToolTip(
      tr("Leave the sink (position 0, which takes most of the attention) out of the colour "
         "scale"));
  skip_sink_->setChecked(true);
  sink_ = new QLabel(this);
  sink_->setWordWrap(true);
  rank_ = new QLabel(this);
  rank_->setWordWrap(true);
  form->addRow(tr("Text shows:"), shown_);
  form->addRow(tr("Layer:"), layer_);
  form->addRow(tr("Head:"), head_);
  form->addRow(QString(), presets);
  form->addRow(tr("Pooling tokens:"), rows);
  form->addRow(tr("Colour scale:"), scale_);
  form->addRow(QString(), skip_sink_);
  form->addRow(sink_);
  form->addRow(rank_);

  connect(shown_, &QComboBox::activated, this, &ExplorerChoicesPanel::result_chosen);
  connect(layer_, &QSpinBox::valueChanged, this, [this](int layer) {
    if (!updating_) emit layer_head_chosen(layer, head());
  });
  connect(head_, &QComboBox::activated, this,
          [this](int index) { emit layer_head_chosen(layer_->value(), index - 1); });
  connect(mean_heads, &QPushButton::clicked, this,
          [this] { emit layer_head_chosen(layer_->value(), -1); });
  connect(final_layer, &QPushButton::clicked, this,
          [this] { emit layer_head_chosen(layer_->maximum(), head()); });
  const auto rows_changed = [this] {
    if (updating_) return;
    emit rows_chosen(first_row_->value() - 1,
                     last_row_->value() > 0 ? last_row_->value() - 1 : first_row_->value() - 1);
  };
  connect(first_row_, &QSpinBox::valueChanged, this, rows_changed);
  connect(last_row_, &QSpinBox::valueChanged, this, rows_changed);
  connect(all_rows, &QPushButton::clicked, this, [this] { emit rows_chosen(-1, -1); });
  connect(scale_, &QComboBox::currentIndexChanged, this,
          [this](int index) { emit log_scale_changed(index == 1); });
  connect(skip_sink_, &QCheckBox::toggled, this, &ExplorerChoicesPanel::skip_sink_changed);
}

int64_t ExplorerChoicesPanel::head() const {
  return head_->currentIndex() - 1;
}

void ExplorerChoicesPanel::show_choices(
    const std::vector<std::shared_ptr<DocumentAttention>>& results, int shown,
    const ExplorerSelection& selection) {
  updating_ = true;
  shown_->clear();
  for (const auto& r : results) shown_->addItem(result_label(*r));
  shown_->setCurrentIndex(shown);
  const DocumentAttention& d = *results[static_cast<size_t>(shown)];
  layer_->setRange(0, static_cast<int>(d.layers - 1));
  layer_->setValue(static_cast<int>(selection.layer));
  head_->clear();
  head_->addItem(tr("mean over heads"));
  for (int64_t h = 0; h < d.heads; ++h) head_->addItem(tr("head %1").arg(h));
  head_->setCurrentIndex(static_cast<int>(selection.head + 1));
  const auto pooling = static_cast<int>(d.pooling_positions.size());
  first_row_->setRange(0, pooling);
  last_row_->setRange(0, pooling);
  first_row_->setValue(static_cast<int>(selection.first_row + 1));
  last_row_->setValue(static_cast<int>(selection.last_row + 1));
  updating_ = false;
}

bool ExplorerChoicesPanel::log_scale() const {
  return scale_->currentIndex() == 1;
}

void ExplorerChoicesPanel::set_log_scale(bool log) {
  scale_->setCurrentIndex(log ? 1 : 0);
}

bool ExplorerChoicesPanel::skip_sink() const {
  return skip_sink_->isChecked();
}

void ExplorerChoicesPanel::set_skip_sink(bool skip) {
  skip_sink_->setChecked(skip);
}

void ExplorerChoicesPanel::set_sink_text(const QString& text) {
  sink_->setText(text);
}

void ExplorerChoicesPanel::set_rank_text(const QString& text) {
  rank_->setText(text);
}

}  // namespace lmk::widgets
