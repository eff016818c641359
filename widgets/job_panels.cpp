#include "widgets/job_panels.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QToolButton>

#include "widgets/plot_view.h"

namespace lmk::widgets {
namespace {

const char* const kShowEndedKey = "jobs/show_ended";

QString curve_label(const QString& key) {
  if (key == QLatin1String("loss")) return QObject::tr("loss");
  if (key == QLatin1String("lr")) return QObject::tr("learning rate");
  return QObject::tr("tokens / s");
}

}  // namespace

JobActionsBar::JobActionsBar(QWidget* parent) : QWidget(parent) {
  cancel_ = new QPushButton(tr("Cancel"), this);
  cancel_->setToolTip(
      tr("Stop the selected jobs (lmk cancel): training saves a checkpoint, "
         "which Requeue continues from"));
  requeue_ = new QPushButton(tr("Requeue"), this);
  requeue_->setToolTip(
      tr("Submit the study of the selected failed or killed job again "
         "(lmk submit): the steps not done run again"));
  open_log_ = new QPushButton(tr("Open log"), this);
  auto* export_button = new QToolButton(this);
  export_button->setText(tr("Export"));
  export_button->setPopupMode(QToolButton::InstantPopup);
  export_menu_ = new QMenu(export_button);
  export_button->setMenu(export_menu_);
  show_ended_ = new QCheckBox(tr("Show jobs that are over"), this);
  show_ended_->setChecked(QSettings().value(QLatin1String(kShowEndedKey), true).toBool());
  show_events_ = new QCheckBox(tr("Progress events in the log"), this);
  show_events_->setToolTip(tr("The JSON lines jobs write for the store's progress fields"));

  auto* buttons = new QHBoxLayout(this);
  buttons->setContentsMargins(0, 0, 0, 0);
  buttons->addWidget(cancel_);
  buttons->addWidget(requeue_);
  buttons->addWidget(open_log_);
  buttons->addWidget(export_button);
  buttons->addSpacing(12);
  buttons->addWidget(show_ended_);
  buttons->addWidget(show_events_);
  buttons->addStretch(1);

  connect(cancel_, &QPushButton::clicked, this, &JobActionsBar::cancel_clicked);
  connect(requeue_, &QPushButton::clicked, this, &JobActionsBar::requeue_clicked);
  connect(open_log_, &QPushButton::clicked, this, &JobActionsBar::open_log_clicked);
  connect(show_ended_, &QCheckBox::toggled, this, [this](bool on) {
    QSettings().setValue(QLatin1String(kShowEndedKey), on);
    emit show_ended_changed();
  });
  connect(show_events_, &QCheckBox::toggled, this, &JobActionsBar::show_events_changed);
}

bool JobActionsBar::show_ended() const {
  return show_ended_->isChecked();
}

bool JobActionsBar::show_events() const {
  return show_events_->isChecked();
}

void JobActionsBar::enable(bool cancel, bool requeue, bool open_log) {
  cancel_->setEnabled(cancel);
  requeue_->setEnabled(requeue);
  open_log_->setEnabled(open_log);
}

// One axis rect per key of training_curve_keys(), sharing their left and right margins.
TrainingCurvesPanel::TrainingCurvesPanel(QWidget* parent) : QStackedWidget(parent) {
  plot_ = new QCustomPlot;
  ignore_empty_resizes(plot_);
  plot_->plotLayout()->clear();
  auto* margins = new QCPMarginGroup(plot_);
  const QStringList& keys = training_curve_keys();
  const QColor colors[] = {QColor(0x1a, 0x5f, 0xb4), QColor(0xc6, 0x46, 0x00),
                           QColor(0x26, 0x80, 0x3a)};
  for (int i = 0; i < keys.size(); ++i) {
    auto* rect = new QCPAxisRect(plot_);
    plot_->plotLayout()->addElement(i, 0, rect);
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, margins);
    QCPGraph* graph = plot_->addGraph(rect->axis(QCPAxis::atBottom), rect->axis(QCPAxis::atLeft));
    graph->setName(keys[i]);
    graph->setPen(QPen(colors[i % 3], 1));
    rect->axis(QCPAxis::atLeft)->setLabel(curve_label(keys[i]));
    if (i + 1 == keys.size()) rect->axis(QCPAxis::atBottom)->setLabel(tr("step"));
  }
  text_ = new QLabel;
  text_->setAlignment(Qt::AlignCenter);
  text_->setWordWrap(true);
  addWidget(text_);
  addWidget(plot_);
}

void TrainingCurvesPanel::clear() {
  steps_.clear();
  for (int i = 0; i < plot_->graphCount(); ++i) plot_->graph(i)->data()->clear();
}

void TrainingCurvesPanel::show_text(const QString& text) {
  text_->setText(text);
  setCurrentWidget(text_);
}

bool TrainingCurvesPanel::add(const RunCurves& curves) {
  const QStringList& keys = training_curve_keys();
  for (const CurveSeries& series : curves.series) {
    const int index = static_cast<int>(keys.indexOf(series.key));
    if (index >= 0) plot_->graph(index)->addData(series.steps, series.values, true);
  }
  for (const CurveSeries& series : curves.series) steps_[series.key] = series.last_step;
  bool any = false;
  for (int i = 0; i < plot_->graphCount(); ++i) {
    QCPGraph* graph = plot_->graph(i);
    any = any || !graph->data()->isEmpty();
    graph->rescaleAxes();
  }
  if (!any) return false;
  setCurrentWidget(plot_);
  if (plot_->width() > 0 && plot_->height() > 0) plot_->replot(QCustomPlot::rpQueuedReplot);
  return true;
}

LogTail::LogTail(QWidget* parent) : QPlainTextEdit(parent) {
  setObjectName(QStringLiteral("log_tail"));
  setReadOnly(true);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  setPlaceholderText(tr("The selected job's log"));
}

void LogTail::follow(const QString& text) {
  if (text == toPlainText()) return;
  QScrollBar* bar = verticalScrollBar();
  const bool at_end = bar->value() >= bar->maximum() - 2;
  const int position = bar->value();
  setPlainText(text);
  bar->setValue(at_end ? bar->maximum() : position);
}

}  // namespace lmk::widgets
