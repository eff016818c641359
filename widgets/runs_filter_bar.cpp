#include "widgets/runs_filter_bar.h"

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QSettings>
#include <QSignalBlocker>
#include <QTimer>
#include <QToolButton>

#include <algorithm>

namespace lmk::widgets {
namespace {

const char* const kParamColumnsKey = "results/param_columns";
const char* const kLongFormatKey = "results/long";

QStringList default_param_columns() {
  return {QStringLiteral("pooling"), QStringLiteral("granularity"), QStringLiteral("max_length")};
}

QToolButton* menu_button(const QString& text, QWidget* parent) {
  auto* button = new QToolButton(parent);
  button->setText(text);
  button->setPopupMode(QToolButton::InstantPopup);
  button->setMenu(new QMenu(button));
  return button;
}

}  // namespace

RunsFilterBar::RunsFilterBar(QWidget* parent) : QWidget(parent) {
  param_columns_ = QSettings()
                       .value(QString::fromLatin1(kParamColumnsKey), default_param_columns())
                       .toStringList();
  text_ = new QLineEdit(this);
  text_->setClearButtonEnabled(true);
  text_->setPlaceholderText(
      tr("Filter: pooling=lmk max_length>=1024 name=*corpus* status=running, or text in "
         "names — any run param works (the store has no tags; params are the attributes)"));
  text_->setToolTip(
      tr("Terms are AND-ed: key=value, key!=value, key<number (also <=, >, >=), or free text "
         "matching the run or experiment name.\nKeys: any column by the name it shows (id, "
         "experiment, name, kind, status, started, duration, host, device, error; benchmark and "
         "split: a run with a result there) or any run param (train.pooling, max_length, …; * "
         "matches any characters, e.g. *pooling).\nValues: * matches any characters; put values "
         "with spaces in \"quotes\"."));
  experiment_ = new QComboBox(this);
  experiment_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  status_ = new QComboBox(this);
  status_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  status_->addItem(tr("Any status"), QString());
  for (const char* status : {"SCHEDULED", "RUNNING", "FINISHED", "FAILED", "KILLED"})
    status_->addItem(QString::fromLatin1(status), QString::fromLatin1(status));
  metric_ = new QComboBox(this);
  metric_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  metric_->setToolTip(tr("The metric of the benchmark columns and the pivot"));
  QToolButton* columns = menu_button(tr("Columns"), this);
  columns->setToolTip(tr("Run params shown as columns"));
  column_menu_ = columns->menu();
  QToolButton* exports = menu_button(tr("Export"), this);
  export_menu_ = exports->menu();
  auto* compare = new QToolButton(this);
  compare->setText(tr("Compare"));
  compare->setToolTip(
      tr("The two selected runs query by query: scatter, differences, paired test"));
  count_ = new QLabel(this);
  long_format_ = new QCheckBox(tr("Long"), this);
  long_format_->setToolTip(
      tr("One row per run and benchmark, one score column (else a column per benchmark)"));
  long_format_->setChecked(QSettings().value(QString::fromLatin1(kLongFormatKey), true).toBool());

  auto* bar = new QHBoxLayout(this);
  bar->setContentsMargins(0, 0, 0, 0);
  bar->addWidget(text_, 1);
  bar->addWidget(experiment_);
  bar->addWidget(status_);
  bar->addWidget(new QLabel(tr("Metric:"), this));
  bar->addWidget(metric_);
  bar->addWidget(count_);
  bar->addWidget(long_format_);
  bar->addWidget(columns);
  bar->addWidget(compare);
  bar->addWidget(exports);

  timer_ = new QTimer(this);
  timer_->setSingleShot(true);
  timer_->setInterval(300);
  connect(text_, &QLineEdit::textEdited, timer_, qOverload<>(&QTimer::start));
  connect(text_, &QLineEdit::returnPressed, this, &RunsFilterBar::emit_filter_changed);
  connect(timer_, &QTimer::timeout, this, &RunsFilterBar::emit_filter_changed);
  connect(experiment_, &QComboBox::currentIndexChanged, this, &RunsFilterBar::emit_filter_changed);
  connect(status_, &QComboBox::currentIndexChanged, this, &RunsFilterBar::emit_filter_changed);
  connect(metric_, &QComboBox::currentIndexChanged, this, &RunsFilterBar::metric_changed);
  connect(long_format_, &QCheckBox::toggled, this, [this](bool on) {
    QSettings().setValue(QString::fromLatin1(kLongFormatKey), on);
    emit long_format_changed();
  });
  connect(compare, &QToolButton::clicked, this, &RunsFilterBar::compare_clicked);
}

void RunsFilterBar::emit_filter_changed() {
  timer_->stop();
  emit filter_changed();
}

RunFilter RunsFilterBar::filter() const {
  RunFilter filter;
  filter.text = text_->text();
  filter.status = status_->currentData().toString();
  filter.experiment_id =
      experiment_->currentData().isValid() ? experiment_->currentData().toLongLong() : -1;
  return filter;
}

void RunsFilterBar::set_filter_text(const QString& text) {
  timer_->stop();
  text_->setText(text);
}

QString RunsFilterBar::metric() const {
  return metric_->currentText();
}

void RunsFilterBar::set_metric(const QString& metric) {
  const int index = metric_->findText(metric);
  if (index >= 0) metric_->setCurrentIndex(index);
}

bool RunsFilterBar::long_format() const {
  return long_format_->isChecked();
}

void RunsFilterBar::set_long_format(bool long_format) {
  long_format_->setChecked(long_format);
}

void RunsFilterBar::set_summary(const StoreSummary& summary) {
  {
    const QSignalBlocker block(experiment_);
    const qlonglong current =
        experiment_->currentData().isValid() ? experiment_->currentData().toLongLong() : -1;
    experiment_->clear();
    experiment_->addItem(tr("All experiments"), qlonglong(-1));
    for (const auto& experiment : summary.experiments)
      experiment_->addItem(experiment.second, experiment.first);
    experiment_->setCurrentIndex(std::max(0, experiment_->findData(current)));
  }
  {
    const QSignalBlocker block(metric_);
    const QString current = metric_->currentText();
    metric_->clear();
    metric_->addItems(summary.metrics);
    int index = metric_->findText(current);
    if (index < 0) index = metric_->findText(QString::fromLatin1(kDefaultMetric));
    metric_->setCurrentIndex(std::max(0, index));
    metric_->setEnabled(!summary.metrics.isEmpty());
  }
  update_column_menu(summary.param_keys);
}

void RunsFilterBar::update_column_menu(const QStringList& param_keys) {
  column_menu_->clear();
  for (const QString& key : param_keys) {
    QAction* action = column_menu_->addAction(key);
    action->setCheckable(true);
    action->setChecked(param_columns_.contains(key));
    connect(action, &QAction::toggled, this, [this, key](bool shown) {
      param_columns_.removeAll(key);
      if (shown) param_columns_ << key;
      QSettings().setValue(QString::fromLatin1(kParamColumnsKey), param_columns_);
      emit columns_changed();
    });
  }
  column_menu_->setEnabled(!param_keys.isEmpty());
}

void RunsFilterBar::show_count(qlonglong count, qlonglong total) {
  if (count < 0)
    count_->clear();
  else
    count_->setText(count == total ? tr("%1 runs").arg(count)
                                   : tr("%1 of %2 runs").arg(count).arg(total));
}

}  // namespace lmk::widgets
