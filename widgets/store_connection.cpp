#include "widgets/store_connection.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSqlError>
#include <QStandardPaths>
#include <QThread>

#include "core/store/schema.h"

namespace lmk::widgets {
namespace {

QString connection_name(const QString& path) {
  return QStringLiteral("lmk:%1:%2")
      .arg(reinterpret_cast<quintptr>(QThread::currentThread()))
      .arg(QFileInfo(path).absoluteFilePath());
}

QString thread_prefix() {
  return QStringLiteral("lmk:%1:").arg(reinterpret_cast<quintptr>(QThread::currentThread()));
}

qlonglong single_value(const QSqlDatabase& db, const QString& sql) {
  QSqlQuery query = run_query(db, sql);
  return query.next() ? query.value(0).toLongLong() : 0;
}

}  // namespace

QSqlDatabase store_connection(const QString& path) {
  const QString name = connection_name(path);
  if (QSqlDatabase::contains(name)) return QSqlDatabase::database(name);
  if (!QFileInfo(path).isFile())
    throw StoreError(QStringLiteral("%1: no such results store").arg(path).toStdString());
  QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
  db.setDatabaseName(path);
  // A run writing at the same time holds the write lock for short transactions only: wait for
  // it instead of failing (the core uses the same 5 s).
  db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
  if (!db.open()) {
    const QString reason = db.lastError().text();
    db = QSqlDatabase();
    QSqlDatabase::removeDatabase(name);
    throw StoreError(QStringLiteral("%1: cannot open: %2").arg(path, reason).toStdString());
  }
  try {
    const qlonglong application = single_value(db, QStringLiteral("PRAGMA application_id"));
    const qlonglong version = single_value(db, QStringLiteral("PRAGMA user_version"));
    if (application != store_schema::kApplicationId)
      throw StoreError(
          QStringLiteral("%1: not a Landmark Workbench results store (application_id %2)")
              .arg(path)
              .arg(application)
              .toStdString());
    if (version > store_schema::current_version())
      throw StoreError(QStringLiteral("%1: schema version %2 is newer than this workbench's %3; "
                                      "update lmk-workbench")
                           .arg(path)
                           .arg(version)
                           .arg(store_schema::current_version())
                           .toStdString());
  } catch (const StoreError&) {
    db.close();
    db = QSqlDatabase();
    QSqlDatabase::removeDatabase(name);
    throw;
  }
  return db;
}

void close_thread_connections() {
  const QString prefix = thread_prefix();
  for (const QString& name : QSqlDatabase::connectionNames()) {
    if (!name.startsWith(prefix)) continue;
    QSqlDatabase::database(name, false).close();
    QSqlDatabase::removeDatabase(name);
  }
}

QSqlQuery run_query(const QSqlDatabase& db, const QString& sql, const QVariantList& bindings) {
  QSqlQuery query(db);
  query.setForwardOnly(true);
  if (!query.prepare(sql))
    throw StoreError(QStringLiteral("%1: %2 (in: %3)")
                         .arg(db.databaseName(), query.lastError().text(), sql.simplified())
                         .toStdString());
  for (const QVariant& value : bindings) query.addBindValue(value);
  if (!query.exec())
    throw StoreError(QStringLiteral("%1: %2 (in: %3)")
                         .arg(db.databaseName(), query.lastError().text(), sql.simplified())
                         .toStdString());
  return query;
}

bool has_table(const QSqlDatabase& db, const QString& table) {
  QSqlQuery query = run_query(
      db, QStringLiteral("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"), {table});
  return query.next();
}

QString lmk_program() {
  const QString from_env = qEnvironmentVariable("LMK_BIN");
  if (!from_env.isEmpty()) return from_env;
  const QString beside =
      QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("lmk"));
  if (QFileInfo(beside).isExecutable()) return beside;
  const QString built = QStringLiteral(LMK_SOURCE_DIR "/build/app/lmk");
  if (QFileInfo(built).isExecutable()) return built;
  return QStringLiteral("lmk");
}

}  // namespace lmk::widgets
