#pragma once

// The Slurm options of a study ([slurm] table, core/jobs/slurm.h: SlurmOptions) as a dialog.
// What the user last entered is remembered in QSettings, so a new study starts from the
// cluster's settings.

#include <QDialog>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QVariantMap>

class QCheckBox;
class QLineEdit;
class QPlainTextEdit;

namespace lmk::widgets {

class ClusterSettingsDialog : public QDialog {
  Q_OBJECT
 public:
  explicit ClusterSettingsDialog(QWidget* parent = nullptr);

  // The [slurm] keys the dialog edits, in its order.
  static const QStringList& keys();
  // Shows these values ([slurm] key -> TOML value as QVariant); keys absent are left empty.
  void set_values(const QVariantMap& values);
  // The values entered; an empty field is left out (Slurm's or lmk's default applies).
  QVariantMap values() const;

  // The values remembered from the last accepted dialog, and remembering new ones.
  static QVariantMap remembered();
  static void remember(const QVariantMap& values);

 private:
  QHash<QString, QLineEdit*> lines_;
  QPlainTextEdit* setup_ = nullptr;
  QCheckBox* requeue_ = nullptr;
};

}  // namespace lmk::widgets
