#pragma once

// The experiment designer's bars (widgets/designer_view.h), each owning its controls and saying
// what the user asked for; DesignerView holds the document and acts:
// - StudyFileBar, over the form: Open, Save, Save As, the profile shown (remembered in the
//   settings), the legend of the form's marks, and the file's name;
// - StudyLaunchBar, under it: the store the results go into, the cluster settings and the two
//   launches (locally, Slurm).

#include <QString>
#include <QWidget>

class QComboBox;
class QLabel;
class QPushButton;

namespace lmk::widgets {

class StudyFileBar : public QWidget {
  Q_OBJECT
 public:
  explicit StudyFileBar(QWidget* parent = nullptr);

  QString profile() const;
  // Shows `profile` (added when the list lacks it): profile_changed() when it is another.
  void set_profile(const QString& profile);
  // Shows the profile last used (else lmk's default) without profile_changed(), at start.
  void restore_profile();
  // Lists `profile` (a profile the study defines) when the list lacks it.
  void add_profile(const QString& profile);
  // The file's line: its name, " *" when modified, where it is.
  void show_file(const QString& name, bool modified, const QString& where);

 signals:
  void open_clicked();
  void save_clicked();
  void save_as_clicked();
  void profile_changed(const QString& profile);

 private:
  QComboBox* profile_ = nullptr;
  QLabel* file_ = nullptr;
};

class StudyLaunchBar : public QWidget {
  Q_OBJECT
 public:
  explicit StudyLaunchBar(QWidget* parent = nullptr);

  // The store chosen for the results ("": the study's own).
  QString store() const;
  // The stores to choose from: the study's own, the open one (`open_store`, when one is open)
  // and `chosen`, which is then chosen ("": the study's own).
  void set_stores(const QString& open_store, const QString& chosen);
  // A submission runs: the launches are off until it ends.
  void set_busy(bool busy);

 signals:
  void cluster_clicked();
  void launch_local_clicked();
  void submit_slurm_clicked();

 private:
  QComboBox* store_ = nullptr;
  QPushButton* launch_local_ = nullptr;
  QPushButton* launch_slurm_ = nullptr;
};

}  // namespace lmk::widgets
