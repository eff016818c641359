#pragma once

// The workbench's access to a results store (core/store/results_store.h): one core ResultsStore
// per thread and file, read-mostly, safe beside a run that is still writing (WAL, busy timeout).
// The views read through the core only, with the queries and row types lmk reads, so a view
// shows what the CLI prints; the workbench links no SQL layer of its own. Views never open
// stores themselves; their models call these.

#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrent>

#include <functional>
#include <stdexcept>
#include <utility>

namespace lmk {
class ResultsStore;
}

namespace lmk::widgets {

// A store that cannot be opened or read; what() names the file and the reason.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Returns this thread's reader of the results store at `path`, opening it on first use (it
// closes when the thread ends). Opening brings an older schema up to date as lmk does (the
// core's migrations). Throws StoreError when the file is missing, is not a results store, or is
// newer than this program.
const ResultsStore& store_connection(const QString& path);

// The path of the lmk CLI the workbench starts jobs with: $LMK_BIN, else the lmk beside this
// executable, else the one of this build tree, else "lmk" on PATH.
QString lmk_program();

// The threads store reads run on. Not QThreadPool::globalInstance(): Qt's raster paint engine
// splits large fills across that pool and waits for its threads, so reads that hold all of them
// stop the GUI thread's painting until one ends.
QThreadPool* store_thread_pool();

// Runs `work(store)` on a worker thread with that thread's reader of `db_path`, then
// `done(result, error)` on `receiver`'s thread; error is empty when work did not throw. Nothing is
// delivered when receiver is gone by then.
template <typename Result>
void load_in_background(QObject* receiver, const QString& db_path,
                        std::function<Result(const ResultsStore&)> work,
                        std::function<void(Result, QString)> done) {
  auto* watcher = new QFutureWatcher<std::pair<Result, QString>>(receiver);
  QObject::connect(watcher, &QFutureWatcherBase::finished, receiver, [watcher, done] {
    std::pair<Result, QString> out = watcher->result();
    watcher->deleteLater();
    done(std::move(out.first), out.second);
  });
  watcher->setFuture(
      QtConcurrent::run(store_thread_pool(), [db_path, work]() -> std::pair<Result, QString> {
        try {
          return {work(store_connection(db_path)), QString()};
        } catch (const std::exception& e) {
          return {Result{}, QString::fromUtf8(e.what())};
        }
      }));
}

}  // namespace lmk::widgets
