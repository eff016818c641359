#include "widgets/designer_bars.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>

#include "core/jobs/study.h"
#include "widgets/designer_form.h"

namespace lmk::widgets {
namespace {

const char* const kProfileKey = "designer/profile";

}  // namespace

StudyFileBar::StudyFileBar(QWidget* parent) : QWidget(parent) {
  auto* open = new QPushButton(tr("Open…"), this);
  auto* save = new QPushButton(tr("Save"), this);
  auto* save_as = new QPushButton(tr("Save As…"), this);
  save->setShortcut(QKeySequence::Save);
  profile_ = new QComboBox(this);
  profile_->setObjectName(QStringLiteral("profile"));
  profile_->setToolTip(
      tr("The form shows the values this profile reads. An edit in micro or quick becomes that "
         "profile's own value ([profile.NAME.SECTION]); an edit in full changes the shared "
         "value, which the profiles that do not set their own read too"));
  profile_->addItems(designer_form::to_qt(study_profiles()));
  file_ = new QLabel(this);
  file_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* bar = new QHBoxLayout(this);
  bar->setContentsMargins(0, 0, 0, 0);
  bar->addWidget(open);
  bar->addWidget(save);
  bar->addWidget(save_as);
  bar->addSpacing(16);
  bar->addWidget(new QLabel(tr("Profile:"), this));
  bar->addWidget(profile_);
  bar->addWidget(
      new QLabel(tr("<b>bold</b>: the profile's own value · <i>italic</i>: swept"), this));
  bar->addSpacing(16);
  bar->addWidget(file_, 1);

  connect(open, &QPushButton::clicked, this, &StudyFileBar::open_clicked);
  connect(save, &QPushButton::clicked, this, &StudyFileBar::save_clicked);
  connect(save_as, &QPushButton::clicked, this, &StudyFileBar::save_as_clicked);
  connect(profile_, &QComboBox::currentTextChanged, this, [this](const QString& name) {
    QSettings().setValue(QLatin1String(kProfileKey), name);
    emit profile_changed(name);
  });
}

QString StudyFileBar::profile() const {
  return profile_->currentText();
}

void StudyFileBar::set_profile(const QString& profile) {
  add_profile(profile);
  profile_->setCurrentText(profile);
}

void StudyFileBar::restore_profile() {
  const QSignalBlocker block(profile_);
  const QString remembered = QSettings().value(QLatin1String(kProfileKey)).toString();
  profile_->setCurrentText(designer_form::to_qt(study_profiles()).contains(remembered)
                               ? remembered
                               : QString::fromLatin1(kDefaultStudyProfile));
}

void StudyFileBar::add_profile(const QString& profile) {
  if (profile_->findText(profile) < 0) profile_->addItem(profile);
}

void StudyFileBar::show_file(const QString& name, bool modified, const QString& where) {
  file_->setText(QStringLiteral("<b>%1</b>%2 — %3")
                     .arg(name.toHtmlEscaped(), modified ? QStringLiteral(" *") : QString(),
                          where.toHtmlEscaped()));
}

StudyLaunchBar::StudyLaunchBar(QWidget* parent) : QWidget(parent) {
  store_ = new QComboBox(this);
  store_->setObjectName(QStringLiteral("launch_store"));
  store_->setToolTip(
      tr("A study reuses the steps it finds in its own store; another "
         "store runs them again"));
  auto* cluster = new QPushButton(tr("Cluster settings…"), this);
  launch_local_ = new QPushButton(tr("Launch locally"), this);
  launch_local_->setToolTip(
      tr("lmk submit --executor local: a queue on this machine that "
         "goes on when the workbench closes"));
  launch_slurm_ = new QPushButton(tr("Submit to Slurm…"), this);
  auto* bar = new QHBoxLayout(this);
  bar->setContentsMargins(0, 0, 0, 0);
  bar->addWidget(new QLabel(tr("Results into:"), this));
  bar->addWidget(store_, 1);
  bar->addWidget(cluster);
  bar->addWidget(launch_local_);
  bar->addWidget(launch_slurm_);

  connect(cluster, &QPushButton::clicked, this, &StudyLaunchBar::cluster_clicked);
  connect(launch_local_, &QPushButton::clicked, this, &StudyLaunchBar::launch_local_clicked);
  connect(launch_slurm_, &QPushButton::clicked, this, &StudyLaunchBar::submit_slurm_clicked);
}

QString StudyLaunchBar::store() const {
  return store_->currentData().toString();
}

void StudyLaunchBar::set_stores(const QString& open_store, const QString& chosen) {
  const QSignalBlocker block(store_);
  store_->clear();
  store_->addItem(tr("the study's own store ([study] db, or its folder's results.db)"), QString());
  if (!open_store.isEmpty()) store_->addItem(tr("the open store: %1").arg(open_store), open_store);
  if (!chosen.isEmpty() && chosen != open_store) store_->addItem(chosen, chosen);
  const int index = store_->findData(chosen);
  store_->setCurrentIndex(index < 0 ? 0 : index);
}

void StudyLaunchBar::set_busy(bool busy) {
  launch_local_->setEnabled(!busy);
  launch_slurm_->setEnabled(!busy);
}

}  // namespace lmk::widgets
