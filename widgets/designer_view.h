#pragma once

// The experiment designer (issue 7, view 1): a form over a study config (TOML, core/jobs/study.h)
// — study, tokenizer, model (a preset, or the shape of a Hugging Face model's config.json),
// pretraining, fine-tuning poolings with their training-time landmark granularity, evaluation
// (benchmarks, lengths, granularity at evaluation), sweep axes — for one profile at a time: the
// form shows what the profile reads, and an edit goes where the profile reads it from. Each
// edit is checked by `lmk submit --dry-run` (debounced, off the GUI thread); its error is shown
// and the field it names marked. Launch submits the saved file through the local queue or Slurm.
// The bars over and under the form own their controls (StudyFileBar, StudyLaunchBar:
// widgets/designer_bars.h); the form is built in widgets/designer_form.cpp.

#include <QHash>
#include <QList>
#include <QMap>
#include <QString>
#include <QTemporaryDir>

#include <set>
#include <string>

#include "core/jobs/executor_kind.h"
#include "widgets/designer_bars.h"
#include "widgets/store_view.h"
#include "widgets/study_document.h"

class QGridLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProcess;
class QRadioButton;
class QScrollArea;
class QTimer;

namespace lmk::widgets {

class ChecklistEditor;
class JobLauncher;
class PoolingsEditor;
class SweepEditor;

class DesignerView : public StoreView {
  Q_OBJECT
 public:
  explicit DesignerView(QWidget* parent = nullptr);
  ~DesignerView() override;

  QString title() const override { return tr("Designer"); }
  // Remembers the open store as a place to launch into (the study's own store is the default).
  void set_store(const QString& db_path) override;

  // Reads a study config into the form; false (and the error shown) when it cannot.
  bool open_file(const QString& path);
  // Saves to the document's file / to `path`; false (and the error shown) when it cannot.
  bool save();
  bool save_as(const QString& path);
  const StudyDocument& document() const { return document_; }

  // The profile the form shows and edits (micro, quick, full).
  QString profile() const;
  void set_profile(const QString& profile);

  // Saves, then submits the study (`executor` local or slurm); launched() once its jobs are in
  // the store.
  void launch(ExecutorKind executor);
  // Takes the model's shape (hidden size, layers, heads, MLP size, local window, RoPE θ) from a
  // Hugging Face folder's config.json, which the form then shows. The study trains a model of
  // that shape from scratch: it has no key for starting from the folder's weights.
  void use_model_folder(const QString& folder);

  // Where launch() records the jobs: "" for the study's own store, else the open store.
  void set_launch_store(const QString& db_path);

  // Every field's text by its key ("pretrain.learning_rate", "finetune.poolings", "sweep"), as
  // the form shows it.
  QMap<QString, QString> field_values() const;
  // The last check's result: an error ("" when valid) and the line shown.
  QString validation_error() const { return validation_error_; }
  QString validation_text() const;
  // The key the last error named ("" when none), and whether a field shows it.
  QString marked_key() const { return marked_key_; }
  // Checks now instead of after the edit pause.
  void validate_now();
  // The line about the last launch.
  QString launch_text() const;
  JobLauncher* launcher() const { return launcher_; }

 signals:
  // A study was launched: its jobs are in this store (the monitor can show them).
  void launched(const QString& db_path);
  // A check ended: ok, or the error line.
  void validated(bool ok, const QString& message);

 private:
  enum class Kind {
    Text,
    Integer,
    Number,
    IntegerList,
    Folder,
    File,
    Choice,
    Poolings,
    Checklist,
    Sources  // names and folders, comma-separated (Browse… appends a folder)
  };
  struct Field {
    QString section, key;
    Kind kind = Kind::Text;
    QWidget* editor = nullptr;
    QLabel* label = nullptr;
    QString hint;   // the placeholder: what applies when the key is absent
    QString swept;  // the values of a [sweep] axis over the key ("" when not swept)
  };

  // The constructor's parts.
  void connect_bars();
  void connect_launcher();
  void restore_last_study();

  // build_form through apply_sweep: the form, defined in widgets/designer_form.cpp (with
  // field_values, use_model_folder and choose_model_folder).
  QWidget* build_form();
  // Puts the form's boxes into the columns of form_layouts_[layout] (0: three, 1: two).
  void arrange_form(int layout);
  // The scroll area's viewport resized: the form takes the widest layout that fits it.
  bool eventFilter(QObject* watched, QEvent* event) override;
  // Adds the form rows of `section`'s settings (study_settings(): label, hint or default) from
  // `first_row` on, in the table's order: those named in `only` (all when empty) but not in
  // `skip`.
  void add_settings(QGridLayout* form, const char* section, int first_row,
                    const std::set<std::string>& only = {}, const std::set<std::string>& skip = {});
  void add_field(QGridLayout* form, int row, const QString& section, const QString& key, Kind kind,
                 const QString& label, const QString& hint);
  // Fills the form from the document (`with_sweep`: the sweep table too).
  void show_document(bool with_sweep = true);
  // `swept`: the values of a [sweep] axis over the key ("" when not swept).
  void show_field(Field& field, const QString& swept);
  // The label's bold (the profile's own value) and italic (swept), its tooltip, the placeholder.
  void decorate_field(const Field& field);
  // Writes the field's value where the shown profile reads it from (apply_field's comment).
  void apply_field(const Field& field);
  // Whether the shown profile is the one that reads the shared values (lmk's default, full).
  bool edits_shared_values() const;
  QVariant field_value(const Field& field) const;
  QString field_text(const Field& field) const;
  void apply_sweep();
  void edited();
  void show_validation(int exit_code, const QString& err, const QString& out);
  // Kills the check in flight without waiting for it: it deletes itself once it has ended.
  void stop_validator();
  void mark(const QString& key, const QString& why);
  void choose_model_folder();

  bool edit_cluster_settings();
  void show_launch_message(const QString& text, bool error = false);
  void update_title();
  QString display_name() const;

  StudyDocument document_;
  QList<Field> fields_;
  QHash<QString, int> field_of_key_;  // "section.key" -> index in fields_
  QWidget* form_ = nullptr;
  QScrollArea* form_scroll_ = nullptr;
  QList<QList<QList<QGroupBox*>>> form_layouts_;  // per layout: its columns, each a stack of boxes
  int form_layout_ = -1;                          // the one shown
  int three_columns_width_ = 0;  // the form's minimum width in three columns (0: not known yet)
  StudyFileBar* file_bar_ = nullptr;
  QLabel* profile_note_ = nullptr;  // which profiles an edit of a shared value changes
  PoolingsEditor* poolings_ = nullptr;
  ChecklistEditor* benchmarks_ = nullptr;
  SweepEditor* sweep_ = nullptr;
  QRadioButton* model_preset_ = nullptr;
  QRadioButton* model_folder_ = nullptr;
  QLineEdit* model_folder_path_ = nullptr;
  QPlainTextEdit* model_config_ = nullptr;
  QLabel* validation_ = nullptr;
  QLabel* launch_message_ = nullptr;
  StudyLaunchBar* launch_bar_ = nullptr;
  JobLauncher* launcher_ = nullptr;

  QTimer* debounce_ = nullptr;
  QProcess* validator_ = nullptr;
  QTemporaryDir scratch_;  // the copy each check reads, and its throwaway store path
  QString validation_error_, marked_key_;
  bool showing_ = false;        // show_document() fills the form: no edits then
  bool launch_failed_ = false;  // the launch line shows a refusal (an edit clears it)
};

}  // namespace lmk::widgets
