#include "widgets/store_connection.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/store/results_store.h"

namespace lmk::widgets {
namespace {

Q_GLOBAL_STATIC(QThreadPool, store_pool)

// At exit (QCoreApplication's destructor): the reads still queued end and the running ones are
// waited for, so that none runs while the program's statics are destroyed. Each thread's
// readers close as their thread ends.
void wait_for_reads_at_exit() {
  static std::once_flag registered;
  std::call_once(registered, [] {
    qAddPostRoutine([] {
      store_pool()->clear();
      store_pool()->waitForDone();
    });
  });
}

}  // namespace

const ResultsStore& store_connection(const QString& path) {
  wait_for_reads_at_exit();
  // By file, for this thread (a ResultsStore is one SQLite connection and is not shared).
  thread_local std::map<std::string, std::unique_ptr<ResultsStore>> readers;
  const std::string file = QFileInfo(path).absoluteFilePath().toStdString();
  std::unique_ptr<ResultsStore>& reader = readers[file];
  if (!reader) {
    try {
      reader = std::make_unique<ResultsStore>(path.toStdString(), ResultsStore::OpenMode::Existing);
    } catch (const std::exception& e) {
      readers.erase(file);
      throw StoreError(e.what());
    }
  }
  return *reader;
}

QThreadPool* store_thread_pool() {
  wait_for_reads_at_exit();
  return store_pool();
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
