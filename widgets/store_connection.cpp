#include "widgets/store_connection.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSqlError>
#include <QStandardPaths>
#include <QStringList>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "core/store/results_store.h"
#include "core/store/schema.h"

namespace lmk::widgets {
namespace {

// This thread's connections. Named by a number no other thread gets (a QThread's address can
// be reused by the next pool thread), and closed when the thread ends: the thread pool retires
// idle threads, and a connection may only be used by the thread that opened it.
struct ThreadConnections {
  QString prefix;
  QStringList names;
  void close_all() {
    for (const QString& name : names) {
      QSqlDatabase::database(name, false).close();
      QSqlDatabase::removeDatabase(name);
    }
    names.clear();
  }
  ~ThreadConnections() {
    // After the exit cleanup below QtSql may be gone: a thread ending then leaves its names.
    if (QCoreApplication::instance() == nullptr && !exit_cleanup_running) return;
    close_all();
  }
  static inline std::atomic<bool> exit_cleanup_running{false};
};

ThreadConnections& thread_connections() {
  static std::atomic<quint64> next_thread{0};
  thread_local ThreadConnections connections{QStringLiteral("lmk:%1:").arg(next_thread++), {}};
  return connections;
}

Q_GLOBAL_STATIC(QThreadPool, store_pool)

// At exit (QCoreApplication's destructor, while QtSql and its SQLite driver plugin are still
// loaded): the reads still queued or running end, the pool's threads close their connections as
// they exit, and so does the main thread. Left for static destruction, a connection's driver can
// be destroyed after its plugin was unloaded, and the process crashes on its way out (seen on CI
// after every test had passed).
void close_connections_at_exit() {
  static std::once_flag registered;
  std::call_once(registered, [] {
    qAddPostRoutine([] {
      ThreadConnections::exit_cleanup_running = true;
      store_pool()->clear();
      store_pool()->waitForDone();  // the pool's threads end here
      thread_connections().close_all();
      ThreadConnections::exit_cleanup_running = false;
    });
  });
}

qlonglong single_value(const QSqlDatabase& db, const QString& sql) {
  QSqlQuery query = run_query(db, sql);
  return query.next() ? query.value(0).toLongLong() : 0;
}

}  // namespace

QSqlDatabase store_connection(const QString& path) {
  close_connections_at_exit();
  ThreadConnections& connections = thread_connections();
  const QString name = connections.prefix + QFileInfo(path).absoluteFilePath();
  if (connections.names.contains(name)) return QSqlDatabase::database(name);
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
    // An older schema is brought up to date as lmk does when it opens the store (the core's
    // migrations; e.g. version 5's scores pooled over the parts), so that every view reads what
    // the CLI reads.
    if (version < store_schema::current_version()) {
      try {
        const ResultsStore upgraded(path.toStdString(), ResultsStore::OpenMode::Existing);
      } catch (const std::exception& e) {
        throw StoreError(e.what());
      }
    }
  } catch (const StoreError&) {
    db.close();
    db = QSqlDatabase();
    QSqlDatabase::removeDatabase(name);
    throw;
  }
  connections.names << name;
  return db;
}

const ResultsStore& store_reader(const QSqlDatabase& db) {
  // By file, for this thread (a ResultsStore is one SQLite connection and is not shared).
  thread_local std::map<std::string, std::unique_ptr<ResultsStore>> readers;
  const std::string path = QFileInfo(db.databaseName()).absoluteFilePath().toStdString();
  std::unique_ptr<ResultsStore>& reader = readers[path];
  if (!reader) {
    store_connection(db.databaseName());  // the checks and the schema upgrade, once
    try {
      reader = std::make_unique<ResultsStore>(path, ResultsStore::OpenMode::Existing);
    } catch (const std::exception& e) {
      throw StoreError(e.what());
    }
  }
  return *reader;
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

QThreadPool* store_thread_pool() {
  close_connections_at_exit();
  return store_pool();
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
