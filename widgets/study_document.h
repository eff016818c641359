#pragma once

// A study config (TOML, core/jobs/study.h) as an editable document for the designer: values by
// key path, the [profile.NAME.SECTION] overrides, the [sweep] axes. Saving writes the tables in
// the order of the file, keeps keys the designer does not know and the file's comments (a
// comment belongs to the key or table below it, or follows a value on its line); values are
// written in a canonical form (an array on one line). The workbench checks a document with
// `lmk submit FILE --dry-run`, never by itself: the core's reader is the one authority.

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>
#include <QVariant>

#include <memory>

namespace lmk::widgets {

class StudyDocument {
 public:
  StudyDocument();
  StudyDocument(const StudyDocument& other);
  StudyDocument& operator=(const StudyDocument& other);
  ~StudyDocument();

  // Reads a file; on a syntax error returns false with `error` naming the file and line.
  bool load(const QString& path, QString* error);
  // Reads TOML text (`source_name` is what errors call it).
  bool load_text(const QString& text, QString* error, const QString& source_name = {});
  // Writes to_text() to `path` (replacing the file at once) and makes it the document's path.
  bool save(const QString& path, QString* error);
  QString to_text() const;

  // The file the document was read from or saved to ("" for a new one).
  const QString& path() const { return path_; }
  bool modified() const { return modified_; }

  // A value by its key path: {"pretrain", "learning_rate"}, {"profile", "micro", "eval",
  // "lengths"}; a swept key is one part: {"sweep", "eval.granularity"}. Integers are qlonglong,
  // floats double, arrays QVariantList, tables QVariantMap; absent: an invalid QVariant.
  QVariant value(const QStringList& keys) const;
  bool contains(const QStringList& keys) const { return value(keys).isValid(); }
  // Sets a value (creating the tables on the way); an invalid QVariant removes the key.
  void set_value(const QStringList& keys, const QVariant& value);
  void remove(const QStringList& keys) { set_value(keys, QVariant()); }
  // The keys of a table, in file order (new keys last); {} for the root.
  QStringList keys(const QStringList& table) const;
  // The whole document as nested QVariantMaps (what the file means, for comparisons).
  QVariantMap to_variant() const;

  // "section.key" of [SECTION] as the profile reads it: its [profile.P.SECTION] value when it
  // has one, else the section's.
  QVariant effective_value(const QString& profile, const QString& section,
                           const QString& key) const;
  bool overridden(const QString& profile, const QString& section, const QString& key) const;
  // Sets the key where `profile` reads it from: its override when it has one, else [SECTION]
  // (so the edit shows in that profile; other profiles see it unless they override it).
  void set_effective_value(const QString& profile, const QString& section, const QString& key,
                           const QVariant& value);
  // The profile names of [profile.*], in file order.
  QStringList profiles() const;

  // One axis of the [sweep] grid: one key ("eval.granularity") with its values, or a
  // [[sweep.zip]] of keys whose value lists advance together.
  struct SweepAxis {
    QStringList keys;
    QList<QVariantList> values;  // per key
    bool zip = false;
  };
  QList<SweepAxis> sweep_axes() const;
  // Replaces the [sweep] table (none when `axes` is empty); axes keep their order.
  void set_sweep_axes(const QList<SweepAxis>& axes);

  // A copy whose relative paths ([study] corpus, dir and db, also in the profiles) are made
  // absolute against `base_dir`, so that the copy means the same written elsewhere.
  StudyDocument with_absolute_paths(const QString& base_dir) const;

  // A value in TOML syntax ("0.001", "\"cls\"", "[128, 512]"), and back: parse_value reads one
  // TOML value (an invalid QVariant when `text` is not one).
  static QString value_text(const QVariant& value);
  static QVariant parse_value(const QString& text);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  QString path_;
  bool modified_ = false;
};

}  // namespace lmk::widgets
