#include "widgets/cluster_settings_dialog.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSettings>
#include <QVBoxLayout>

#include <string>
#include <vector>

#include "core/jobs/slurm.h"

namespace lmk::widgets {

namespace {

enum class Kind { Text, Integer, Words };

struct Option {
  const char* key;
  Kind kind;
  const char* label;
  const char* hint;
};

// How the form shows the keys of lmk's [slurm] table (slurm_option_keys()); a key not here gets a
// text field named by the key. setup (lines) and requeue (a check box) have widgets of their own.
const Option kPresentation[] = {
    {"partition", Kind::Text, "Partition", "the cluster's default"},
    {"account", Kind::Text, "Account", "your default account"},
    {"qos", Kind::Text, "QOS", "the default QOS"},
    {"constraint", Kind::Text, "Constraint", "e.g. h100"},
    {"time", Kind::Text, "Time limit", "e.g. 02:00:00 (the partition's default)"},
    {"mem", Kind::Text, "Memory per node", "e.g. 32G (the default)"},
    {"nodes", Kind::Integer, "Nodes", "1"},
    {"ntasks_per_node", Kind::Integer, "Tasks per node", "1 (more: data-parallel training)"},
    {"gpus_per_node", Kind::Integer, "GPUs per node", "0"},
    {"cpus_per_task", Kind::Integer, "CPUs per task", "the default (also LMK_THREADS)"},
    {"signal_seconds", Kind::Integer, "Warn before the limit (s)", "120"},
    {"extra", Kind::Words, "Extra #SBATCH options", "e.g. --exclusive --mail-type=END"},
    {"command_prefix", Kind::Words, "Command prefix", "e.g. ssh login-node"},
    {"bin_dir", Kind::Text, "Slurm programs folder", "PATH"},
};

const char* const kSettingsGroup = "slurm";

// The form's fields: lmk's keys in lmk's order.
const std::vector<Option>& form_options() {
  static const std::vector<Option> options = [] {
    std::vector<Option> out;
    for (const std::string& key : slurm_option_keys()) {
      if (key == "setup" || key == "requeue") continue;
      Option option = {key.c_str(), Kind::Text, key.c_str(), ""};
      for (const Option& shown : kPresentation)
        if (key == shown.key) option = shown;
      out.push_back(option);
    }
    return out;
  }();
  return options;
}

}  // namespace

const QStringList& ClusterSettingsDialog::keys() {
  static const QStringList all = [] {
    QStringList out;
    for (const Option& option : form_options()) out << QString::fromLatin1(option.key);
    out << QStringLiteral("setup") << QStringLiteral("requeue");
    return out;
  }();
  return all;
}

ClusterSettingsDialog::ClusterSettingsDialog(QWidget* parent) : QDialog(parent) {
  setWindowTitle(tr("Cluster settings (Slurm)"));
  auto* form = new QFormLayout;
  for (const Option& option : form_options()) {
    auto* line = new QLineEdit;
    line->setObjectName(QStringLiteral("slurm.%1").arg(QLatin1String(option.key)));
    line->setPlaceholderText(tr(option.hint));
    lines_.insert(QString::fromLatin1(option.key), line);
    form->addRow(tr(option.label), line);
  }
  setup_ = new QPlainTextEdit;
  setup_->setObjectName(QStringLiteral("slurm.setup"));
  setup_->setPlaceholderText(
      tr("Shell lines before each job, e.g.\nmodule load cuda/12.4\n"
         "source ~/venv/bin/activate"));
  setup_->setFixedHeight(80);
  form->addRow(tr("Setup"), setup_);
  requeue_ =
      new QCheckBox(tr("Requeue a job stopped at its time limit (it continues from its "
                       "checkpoint)"));
  requeue_->setObjectName(QStringLiteral("slurm.requeue"));
  requeue_->setChecked(true);
  form->addRow(QString(), requeue_);

  auto* note =
      new QLabel(tr("One batch job per step, chained with afterok. The study folder must "
                    "be on a filesystem the nodes share, the results store on one with "
                    "working file locks."));
  note->setWordWrap(true);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(note);
  layout->addLayout(form);
  layout->addWidget(buttons);
}

void ClusterSettingsDialog::set_values(const QVariantMap& values) {
  for (const Option& option : form_options()) {
    const QVariant value = values.value(QString::fromLatin1(option.key));
    QString text;
    if (option.kind == Kind::Words) {
      text = value.toStringList().join(QChar(' '));
    } else if (value.isValid()) {
      text = value.toString();
    }
    lines_.value(QString::fromLatin1(option.key))->setText(text);
  }
  setup_->setPlainText(values.value(QStringLiteral("setup")).toStringList().join(QChar('\n')));
  const QVariant requeue = values.value(QStringLiteral("requeue"));
  requeue_->setChecked(!requeue.isValid() || requeue.toBool());
}

QVariantMap ClusterSettingsDialog::values() const {
  QVariantMap out;
  for (const Option& option : form_options()) {
    const QString text = lines_.value(QString::fromLatin1(option.key))->text().trimmed();
    if (text.isEmpty()) continue;
    const QString key = QString::fromLatin1(option.key);
    if (option.kind == Kind::Words) {
      out.insert(key, text.split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts));
    } else if (option.kind == Kind::Integer) {
      bool number = false;
      const qlonglong value = text.toLongLong(&number);
      // Not a number: kept as text, so lmk's check names the key.
      out.insert(key, number ? QVariant(value) : QVariant(text));
    } else {
      out.insert(key, text);
    }
  }
  QStringList setup;
  for (const QString& line : setup_->toPlainText().split(QChar('\n')))
    if (!line.trimmed().isEmpty()) setup << line;
  if (!setup.isEmpty()) out.insert(QStringLiteral("setup"), setup);
  if (!requeue_->isChecked()) out.insert(QStringLiteral("requeue"), false);
  return out;
}

QVariantMap ClusterSettingsDialog::remembered() {
  QSettings settings;
  settings.beginGroup(QLatin1String(kSettingsGroup));
  // Settings files keep text: each value gets its key's type back.
  QVariantMap out;
  for (const Option& option : form_options()) {
    const QString key = QString::fromLatin1(option.key);
    if (!settings.contains(key)) continue;
    const QVariant value = settings.value(key);
    bool number = false;
    const qlonglong integer = value.toLongLong(&number);
    if (option.kind == Kind::Words)
      out.insert(key, value.toStringList());
    else if (option.kind == Kind::Integer && number)
      out.insert(key, integer);
    else
      out.insert(key, value.toString());
  }
  if (settings.contains(QStringLiteral("setup")))
    out.insert(QStringLiteral("setup"), settings.value(QStringLiteral("setup")).toStringList());
  if (settings.contains(QStringLiteral("requeue")))
    out.insert(QStringLiteral("requeue"), settings.value(QStringLiteral("requeue")).toBool());
  return out;
}

void ClusterSettingsDialog::remember(const QVariantMap& values) {
  QSettings settings;
  settings.beginGroup(QLatin1String(kSettingsGroup));
  settings.remove(QString());
  for (auto it = values.begin(); it != values.end(); ++it) settings.setValue(it.key(), it.value());
}

}  // namespace lmk::widgets
