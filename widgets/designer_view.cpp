#include "widgets/designer_view.h"

#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QProcess>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QTimer>
#include <QVBoxLayout>

#include <memory>
#include <utility>

#include "core/jobs/study.h"
#include "widgets/cluster_settings_dialog.h"
#include "widgets/designer_form.h"
#include "widgets/job_launcher.h"
#include "widgets/store_connection.h"
#include "widgets/study_editors.h"

namespace lmk::widgets {

namespace {

constexpr int kDebounceMs = 400;
const char* const kFileKey = "designer/file";

const char* const kMarkStyle = "border: 1px solid #c01c28; background: #fdecee;";

}  // namespace

DesignerView::DesignerView(QWidget* parent) : StoreView(parent) {
  launcher_ = new JobLauncher(this);
  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(kDebounceMs);
  connect(debounce_, &QTimer::timeout, this, &DesignerView::validate_now);

  file_bar_ = new StudyFileBar;

  profile_note_ = new QLabel;
  profile_note_->setObjectName(QStringLiteral("profile_note"));
  profile_note_->setWordWrap(true);
  profile_note_->setStyleSheet(QStringLiteral("color: #9c6500"));
  profile_note_->hide();

  auto* scroll = new QScrollArea;
  form_scroll_ = scroll;
  scroll->setObjectName(QStringLiteral("designer_form"));
  scroll->setWidgetResizable(true);
  scroll->setWidget(build_form());
  scroll->viewport()->installEventFilter(this);

  validation_ = new QLabel;
  validation_->setObjectName(QStringLiteral("validation"));
  validation_->setWordWrap(true);
  validation_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  launch_message_ = new QLabel;
  launch_message_->setObjectName(QStringLiteral("launch_message"));
  launch_message_->setWordWrap(true);
  launch_message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  launch_bar_ = new StudyLaunchBar;

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(file_bar_);
  layout->addWidget(profile_note_);
  layout->addWidget(scroll, 1);
  layout->addWidget(validation_);
  layout->addWidget(launch_bar_);
  layout->addWidget(launch_message_);

  connect_bars();
  connect_launcher();
  restore_last_study();
}

// What the bars ask for: Open, Save, Save As, another profile; the cluster settings, a launch.
void DesignerView::connect_bars() {
  connect(file_bar_, &StudyFileBar::open_clicked, this, [this] {
    if (document_.modified() &&
        QMessageBox::question(this, tr("Open a study"),
                              tr("Discard the changes to %1?").arg(display_name())) !=
            QMessageBox::Yes)
      return;
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a study config"),
                                                      QFileInfo(document_.path()).absolutePath(),
                                                      tr("Study configs (*.toml);;All files (*)"));
    if (!path.isEmpty()) open_file(path);
  });
  connect(file_bar_, &StudyFileBar::save_clicked, this, [this] {
    if (document_.path().isEmpty()) {
      const QString path = QFileDialog::getSaveFileName(this, tr("Save the study"), QString(),
                                                        tr("Study configs (*.toml)"));
      if (!path.isEmpty()) save_as(path);
    } else {
      save();
    }
  });
  connect(file_bar_, &StudyFileBar::save_as_clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save the study as"), document_.path(), tr("Study configs (*.toml)"));
    if (!path.isEmpty()) save_as(path);
  });
  connect(file_bar_, &StudyFileBar::profile_changed, this, [this] {
    profile_note_->hide();
    show_document();
    validate_now();
  });
  connect(launch_bar_, &StudyLaunchBar::cluster_clicked, this,
          &DesignerView::edit_cluster_settings);
  connect(launch_bar_, &StudyLaunchBar::launch_local_clicked, this,
          [this] { launch(ExecutorKind::Local); });
  connect(launch_bar_, &StudyLaunchBar::submit_slurm_clicked, this, [this] {
    if (edit_cluster_settings()) launch(ExecutorKind::Slurm);
  });
}

// What the launcher reports: a submission, its failure, the end of the local queue.
void DesignerView::connect_launcher() {
  connect(
      launcher_, &JobLauncher::submitted, this,
      [this](const QString& db, const QString& dir, const QString& log) {
        launch_bar_->set_busy(false);
        show_launch_message(
            log.isEmpty()
                ? tr("Submitted: the jobs of %1 are in %2").arg(dir, db)
                : tr("Launched: the jobs of %1 are in %2 (queue output: %3)").arg(dir, db, log));
        emit launched(db);
      });
  connect(launcher_, &JobLauncher::failed, this, [this](const QString& message) {
    launch_bar_->set_busy(false);
    show_launch_message(tr("Not launched: %1").arg(message), true);
  });
  connect(launcher_, &JobLauncher::queue_ended, this,
          [this](const QString& db, int code, const QString& line) {
            if (code == 0)
              show_launch_message(tr("The local queue finished every job (%1)").arg(db));
            else
              show_launch_message(tr("The local queue ended with exit status %1: %2 (the Jobs "
                                     "tab shows which jobs and why)")
                                      .arg(code)
                                      .arg(line),
                                  code != 1);
          });
}

// The launch store, the profile last used, and the last study (else the repository's first).
void DesignerView::restore_last_study() {
  set_launch_store(QString());
  QSettings settings;
  file_bar_->restore_profile();
  // The last study, else the first study of the repository as a template (untitled).
  // A last study that no longer parses leaves its error shown over the template.
  const QString last = settings.value(QLatin1String(kFileKey)).toString();
  if (last.isEmpty() || !QFileInfo::exists(last) || !open_file(last)) {
    QFile example(QStringLiteral(LMK_SOURCE_DIR "/experiments/pooling-vs-length.toml"));
    QString error;
    if (example.open(QIODevice::ReadOnly))
      document_.load_text(QString::fromUtf8(example.readAll()), &error, example.fileName());
    else
      document_.set_value({QStringLiteral("study"), QStringLiteral("name")},
                          QStringLiteral("my-study"));
    show_document();
    validate_now();
  }
}

DesignerView::~DesignerView() {
  stop_validator();
}

void DesignerView::stop_validator() {
  if (validator_ == nullptr) return;
  QProcess* process = std::exchange(validator_, nullptr);
  process->disconnect(this);
  // Not a child of the view any more: ~QProcess of a running process waits for it.
  process->setParent(nullptr);
  if (process->state() == QProcess::NotRunning) {
    process->deleteLater();
    return;
  }
  connect(process, &QProcess::finished, process, &QObject::deleteLater);
  process->kill();
}

void DesignerView::set_store(const QString& db_path) {
  db_path_ = db_path;
  set_launch_store(launch_bar_->store().isEmpty() ? QString() : db_path);
  // The form is complete once lmk has checked it: a check under way ends with validated().
  if (validator_ == nullptr && !debounce_->isActive()) {
    QTimer::singleShot(0, this, [this] { emit loaded(); });
    return;
  }
  auto once = std::make_shared<QMetaObject::Connection>();
  *once = connect(this, &DesignerView::validated, this, [this, once] {
    disconnect(*once);
    emit loaded();
  });
}

void DesignerView::set_launch_store(const QString& db_path) {
  launch_bar_->set_stores(db_path_, db_path);
}

bool DesignerView::open_file(const QString& path) {
  QString error;
  StudyDocument document;
  if (!document.load(path, &error)) {
    show_launch_message(tr("Cannot open the study: %1").arg(error), true);
    return false;
  }
  document_ = document;
  profile_note_->hide();  // about the document that was open
  QSettings().setValue(QLatin1String(kFileKey), document_.path());
  for (const QString& name : document_.profiles()) file_bar_->add_profile(name);
  show_document();
  show_launch_message(QString());
  validate_now();
  return true;
}

bool DesignerView::save() {
  if (document_.path().isEmpty()) {
    show_launch_message(tr("The study has no file yet: Save As…"), true);
    return false;
  }
  return save_as(document_.path());
}

bool DesignerView::save_as(const QString& path) {
  QString error;
  if (!document_.save(path, &error)) {
    show_launch_message(tr("Cannot save: %1").arg(error), true);
    return false;
  }
  QSettings().setValue(QLatin1String(kFileKey), document_.path());
  update_title();
  emit status_message(tr("Saved %1").arg(document_.path()));
  return true;
}

QString DesignerView::profile() const {
  return file_bar_->profile();
}

void DesignerView::set_profile(const QString& profile) {
  file_bar_->set_profile(profile);
}

void DesignerView::edited() {
  update_title();
  // A refusal of the form as it was is not about the form as it is now.
  if (launch_failed_) show_launch_message(QString());
  debounce_->start();
}

QString DesignerView::validation_text() const {
  return validation_->text();
}

QString DesignerView::launch_text() const {
  return launch_message_->text();
}

void DesignerView::validate_now() {
  debounce_->stop();
  stop_validator();
  if (!scratch_.isValid()) {
    show_validation(-1, tr("no temporary folder to check the study in"), QString());
    return;
  }
  // A copy elsewhere must mean the same: its relative paths are made absolute first.
  const QString base =
      document_.path().isEmpty() ? QDir::currentPath() : QFileInfo(document_.path()).absolutePath();
  StudyDocument copy = document_.with_absolute_paths(base);
  const QString path = scratch_.filePath(QStringLiteral("study.toml"));
  QString error;
  if (!copy.save(path, &error)) {
    show_validation(-1, error, QString());
    return;
  }
  validation_->setText(tr("Checking …"));
  validation_->setStyleSheet(QString());
  auto* process = new QProcess(this);
  validator_ = process;
  connect(process, &QProcess::finished, this,
          [this, process](int code, QProcess::ExitStatus status) {
            if (process != validator_) return;
            validator_ = nullptr;
            process->deleteLater();
            show_validation(status == QProcess::NormalExit ? code : -1,
                            QString::fromUtf8(process->readAllStandardError()),
                            QString::fromUtf8(process->readAllStandardOutput()));
          });
  connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart || process != validator_) return;
    validator_ = nullptr;
    process->deleteLater();
    show_validation(-1, tr("cannot run %1: %2").arg(process->program(), process->errorString()),
                    QString());
  });
  process->start(lmk_program(), {QStringLiteral("submit"), path, QStringLiteral("--dry-run"),
                                 QStringLiteral("--profile"), profile(), QStringLiteral("--db"),
                                 scratch_.filePath(QStringLiteral("check.db"))});
}

void DesignerView::show_validation(int exit_code, const QString& err, const QString& out) {
  const QString scratch_path = scratch_.filePath(QStringLiteral("study.toml"));
  QString errors = err;
  errors.replace(scratch_path, display_name());
  if (exit_code == 0) {
    const SubmitPlan plan = JobLauncher::parse_plan(out, err);
    static const QRegularExpression cells(QStringLiteral("(\\d+) (?:cell|sweep cells),"));
    const QRegularExpressionMatch match = cells.match(err);
    validation_error_.clear();
    validation_->setText(tr("✓ lmk accepts it: %1 steps, %2 (profile %3)")
                             .arg(plan.steps)
                             .arg(match.hasMatch() && match.captured(1) != QLatin1String("1")
                                      ? tr("%1 sweep cells").arg(match.captured(1))
                                      : tr("1 configuration"))
                             .arg(profile()));
    validation_->setStyleSheet(QStringLiteral("color: #26803a"));
    mark(QString(), QString());
    emit validated(true, QString());
    return;
  }
  QString message = JobLauncher::error_text(errors + out);
  if (message.isEmpty())
    message = tr("lmk submit --dry-run failed (exit status %1)").arg(exit_code);
  validation_error_ = message;
  validation_->setText(QStringLiteral("✗ ") + message);
  validation_->setStyleSheet(QStringLiteral("color: #c01c28"));
  // "NAME: section.key: ...", "NAME: profile.P.section.key: ...", "NAME: sweep.\"s.k\" ...".
  QString rest = message;
  const QString prefix = display_name() + QStringLiteral(": ");
  if (rest.startsWith(prefix)) rest = rest.mid(prefix.size());
  static const QRegularExpression swept(
      QStringLiteral("^sweep(?:\\.zip\\[\\d+\\])?\\.\"([^\"]+)\""));
  static const QRegularExpression profiled(
      QStringLiteral("^profile\\.[^.\\s]+\\.([a-z_]+\\.[a-z_]+)\\b"));
  static const QRegularExpression plain(QStringLiteral("^([a-z_]+\\.[a-z_]+)\\b"));
  QString key;
  if (const auto m = swept.match(rest); m.hasMatch())
    key = QStringLiteral("sweep:") + m.captured(1);
  else if (const auto m2 = profiled.match(rest); m2.hasMatch())
    key = m2.captured(1);
  else if (const auto m3 = plain.match(rest); m3.hasMatch())
    key = m3.captured(1);
  mark(key, message);
  emit validated(false, message);
}

void DesignerView::mark(const QString& key, const QString& why) {
  marked_key_ = key;
  for (const Field& field : fields_) {
    const bool marked = key == field.section + QChar('.') + field.key;
    field.editor->setStyleSheet(marked ? QString::fromLatin1(kMarkStyle) : QString());
    field.editor->setToolTip(marked ? why : QString());
  }
  sweep_->mark_key(key.startsWith(QLatin1String("sweep:")) ? key.mid(6) : QString(), why);
}

bool DesignerView::edit_cluster_settings() {
  ClusterSettingsDialog dialog(this);
  QVariantMap current;
  for (const QString& key : ClusterSettingsDialog::keys()) {
    const QVariant value = document_.effective_value(profile(), QStringLiteral("slurm"), key);
    if (value.isValid()) current.insert(key, value);
  }
  dialog.set_values(current.isEmpty() ? ClusterSettingsDialog::remembered() : current);
  if (dialog.exec() != QDialog::Accepted) return false;
  const QVariantMap values = dialog.values();
  for (const QString& key : ClusterSettingsDialog::keys())
    document_.set_effective_value(profile(), QStringLiteral("slurm"), key, values.value(key));
  ClusterSettingsDialog::remember(values);
  edited();
  return true;
}

void DesignerView::launch(ExecutorKind executor) {
  if (launcher_->busy()) {
    show_launch_message(tr("A launch is still being checked"));
    return;
  }
  // The form as it is now must be valid before anything is saved: a check still to come or
  // under way is waited for.
  if (debounce_->isActive() || validator_ != nullptr) {
    show_launch_message(tr("Checking the study before launching …"));
    auto once = std::make_shared<QMetaObject::Connection>();
    *once = connect(this, &DesignerView::validated, this, [this, once, executor] {
      disconnect(*once);
      launch(executor);
    });
    if (debounce_->isActive()) validate_now();
    return;
  }
  if (!validation_error_.isEmpty()) {
    show_launch_message(tr("Not launched: lmk refuses the study as it is (%1). Nothing was saved.")
                            .arg(validation_error_),
                        true);
    return;
  }
  if (document_.path().isEmpty()) {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save the study before launching"),
                                                      QString(), tr("Study configs (*.toml)"));
    if (path.isEmpty() || !save_as(path)) return;
  } else if (document_.modified() && !save()) {
    return;
  }
  SubmitRequest request;
  request.config = document_.path();
  request.executor = executor;
  request.profile = profile();
  request.db = launch_bar_->store();
  launch_bar_->set_busy(true);
  show_launch_message(tr("Submitting %1 (profile %2, %3) …")
                          .arg(display_name(), profile(),
                               executor == ExecutorKind::Slurm ? tr("Slurm") : tr("local")));
  launcher_->submit(request);
}

void DesignerView::show_launch_message(const QString& text, bool error) {
  launch_failed_ = error;
  launch_message_->setText(text);
  launch_message_->setVisible(!text.isEmpty());
  launch_message_->setStyleSheet(error ? QStringLiteral("color: #c01c28") : QString());
  if (!text.isEmpty()) emit status_message(text);
}

void DesignerView::update_title() {
  const QString where = document_.path().isEmpty() ? tr("(not saved yet)")
                                                   : QDir::toNativeSeparators(document_.path());
  file_bar_->show_file(display_name(), document_.modified(), where);
}

QString DesignerView::display_name() const {
  return document_.path().isEmpty() ? tr("untitled.toml") : QFileInfo(document_.path()).fileName();
}

}  // namespace lmk::widgets
