#pragma once

// The widget tests' copies of the fixture store (LMK_WORKBENCH_STUDY_DB: the micro study that
// the real lmk study builds), so that a test may write to its own: a plain copy, and one with a
// second experiment.

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QString>
#include <QtTest>

namespace lmk::widgets::testing {

// A fine-tuned model folder of the fixture study ("lmk-32", "cls", ...); empty when none.
inline QString fixture_model(const QString& pooling) {
  QDirIterator it(QFileInfo(QStringLiteral(LMK_WORKBENCH_STUDY_DB)).absolutePath() +
                      QStringLiteral("/finetune/") + pooling,
                  {QStringLiteral("last")}, QDir::Dirs, QDirIterator::Subdirectories);
  return it.hasNext() ? it.next() : QString();
}

// Copies the fixture store to `path` through SQLite (VACUUM INTO: what its WAL holds
// included), in WAL mode as the core writes stores; the test stops when it cannot.
inline void copy_fixture_store(const QString& path) {
  const QString name = QStringLiteral("fixture-source");
  const QString target = QStringLiteral("fixture-copy");
  {
    QSqlDatabase source = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    source.setDatabaseName(QStringLiteral(LMK_WORKBENCH_STUDY_DB));
    if (!source.open()) qFatal("cannot open %s", LMK_WORKBENCH_STUDY_DB);
    QSqlQuery copy(source);
    if (!copy.exec(QStringLiteral("VACUUM INTO '%1'").arg(QString(path).replace('\'', "''"))))
      qFatal("cannot copy the fixture store to %s: %s", qPrintable(path),
             qPrintable(copy.lastError().text()));
  }
  QSqlDatabase::removeDatabase(name);
  {
    QSqlDatabase copied = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), target);
    copied.setDatabaseName(path);
    if (!copied.open()) qFatal("cannot open %s", qPrintable(path));
    QSqlQuery wal(copied);
    if (!wal.exec(QStringLiteral("PRAGMA journal_mode = WAL")) || !wal.next() ||
        wal.value(0).toString() != QLatin1String("wal"))
      qFatal("cannot put %s in WAL mode", qPrintable(path));
  }
  QSqlDatabase::removeDatabase(target);
}

// Runs `statements` on the store at `path` through a connection of the test's own (a writer
// beside the views' readers); the test stops when one fails.
inline void exec_in_store(const QString& path, const QStringList& statements) {
  const QString name = QStringLiteral("test-writer");
  {
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
    db.setDatabaseName(path);
    if (!db.open()) qFatal("cannot open %s", qPrintable(path));
    for (const QString& statement : statements) {
      QSqlQuery query(db);
      if (!query.exec(statement))
        qFatal("%s: %s", qPrintable(statement), qPrintable(query.lastError().text()));
    }
  }
  QSqlDatabase::removeDatabase(name);
}

// Adds experiment "second-study" to a copy: its eval runs again (same names and params, ids
// + 100000), their results and attention profiles at half the stored values.
inline void add_second_experiment(const QSqlDatabase& db) {
  for (const char* sql :
       {"INSERT INTO experiments (name) VALUES ('second-study')",
        "INSERT INTO runs (id, experiment_id, name, kind, config, status) "
        "SELECT id + 100000, (SELECT id FROM experiments WHERE name = 'second-study'), name, "
        "kind, config, status FROM runs WHERE kind = 'eval'",
        "INSERT INTO params (run_id, key, value) SELECT run_id + 100000, key, value "
        "FROM params WHERE run_id IN (SELECT id FROM runs WHERE kind = 'eval' AND id < 100000)",
        "INSERT INTO eval_results (run_id, dataset, split, metric, group_kind, group_value, "
        "value) SELECT run_id + 100000, dataset, split, metric, group_kind, group_value, "
        "value * 0.5 FROM eval_results WHERE run_id < 100000",
        "INSERT INTO attention_profiles (run_id, dataset, length_group, layer, head, bin, "
        "bin_start, bin_end, weight) SELECT run_id + 100000, dataset, length_group, layer, "
        "head, bin, bin_start, bin_end, weight * 0.5 FROM attention_profiles "
        "WHERE run_id < 100000"}) {
    QSqlQuery query(db);
    if (!query.exec(QString::fromUtf8(sql)))
      qFatal("%s: %s", sql, qPrintable(query.lastError().text()));
  }
}

}  // namespace lmk::widgets::testing
