#include "widgets/explorer_status.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>

namespace lmk::widgets {

ExplorerStatusRow::ExplorerStatusRow(QWidget* parent) : QWidget(parent) {
  progress_ = new QProgressBar(this);
  progress_->setMaximumWidth(220);
  progress_->setVisible(false);
  message_ = new QLabel(this);
  message_->setObjectName(QStringLiteral("explorer_message"));
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  notice_ = new QLabel(this);
  notice_->setObjectName(QStringLiteral("explorer_notice"));
  notice_->setWordWrap(true);
  notice_->setStyleSheet(QStringLiteral("color: #8c564b"));
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(progress_);
  row->addWidget(message_, 1);
  row->addWidget(notice_, 1);
}

void ExplorerStatusRow::start() {
  progress_->setRange(0, 0);
  progress_->setVisible(true);
  message_->setStyleSheet(QString());
}

void ExplorerStatusRow::stop() {
  progress_->setVisible(false);
}

void ExplorerStatusRow::show_progress(qint64 done, qint64 total) {
  progress_->setRange(0, static_cast<int>(total));
  progress_->setValue(static_cast<int>(done));
}

QString ExplorerStatusRow::message() const {
  return message_->text();
}

void ExplorerStatusRow::show_message(const QString& text, bool error) {
  message_->setStyleSheet(error ? QStringLiteral("color: #d62728") : QString());
  message_->setText(text);
}

void ExplorerStatusRow::set_message_text(const QString& text) {
  message_->setText(text);
}

QString ExplorerStatusRow::notice() const {
  return notice_->text();
}

void ExplorerStatusRow::show_notice(const QString& text) {
  notice_->setText(text);
}

}  // namespace lmk::widgets
