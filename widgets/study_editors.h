#pragma once

// The designer's editors for the study values that are not one line of text: the fine-tuning
// poolings (with their training-time landmark layouts), a list of fixed choices (benchmarks), and
// the sweep axes. Each shows a value without emitting anything and emits edited() when the user
// changes it.

#include <QStringList>
#include <QVariant>
#include <QWidget>

#include "widgets/study_document.h"

class QCheckBox;
class QLineEdit;
class QTableWidget;

namespace lmk::widgets {

// [finetune] poolings: "cls", "mean", "lmk:fixed:G", "lmk:variable:G1,G2,..", "lmk:sentence[:G]",
// and any other entry as text (core/jobs/study.cpp reads them).
class PoolingsEditor : public QWidget {
  Q_OBJECT
 public:
  explicit PoolingsEditor(QWidget* parent = nullptr);
  // Shows a list of pooling strings (an invalid QVariant: the study's default).
  void set_value(const QVariant& poolings);
  // The checked poolings in the editor's order: cls, mean, fixed, variable, sentence, others.
  QVariantList value() const;

 signals:
  void edited();

 private:
  QCheckBox *cls_, *mean_, *fixed_, *variable_, *sentence_;
  QLineEdit *fixed_g_, *variable_g_, *sentence_g_, *others_;
};

// A list of fixed choices as check boxes (entries it does not know are kept, after them).
class ChecklistEditor : public QWidget {
  Q_OBJECT
 public:
  // `defaults`: what an absent key means (the core's default for the key, not every choice).
  ChecklistEditor(const QString& name, const QStringList& choices, const QStringList& defaults,
                  QWidget* parent = nullptr);
  void set_value(const QVariant& list);
  QVariantList value() const;

 signals:
  void edited();

 private:
  QStringList choices_, defaults_, unknown_;
  QList<QCheckBox*> boxes_;
};

// The [sweep] axes as a table: key ("section.key"), its values (TOML values, comma-separated:
// `16, 32, 64` or `[128, 512], [256, 1024]`), and a zip group (rows with the same group advance
// together, a [[sweep.zip]]).
class SweepEditor : public QWidget {
  Q_OBJECT
 public:
  explicit SweepEditor(const QStringList& known_keys, QWidget* parent = nullptr);
  void set_axes(const QList<StudyDocument::SweepAxis>& axes);
  QList<StudyDocument::SweepAxis> axes() const;
  // Marks the row of a swept key (an error names it); "" clears the mark.
  void mark_key(const QString& key, const QString& why = {});
  // Every row as "key = values [group]", for comparisons.
  QString text() const;
  QTableWidget* table() const { return table_; }

 signals:
  void edited();

 private:
  void add_row(const QString& key, const QString& values, const QString& group);
  QTableWidget* table_ = nullptr;
  bool filling_ = false;
};

}  // namespace lmk::widgets
