#include "core/store/sqlite_statement.h"

#include <stdexcept>
#include <thread>

#include "core/util/error.h"

namespace lmk::store_sql {

// Raises the failure `code` of a call on db: "database is locked" (the wait ran out) as a
// runtime_error, anything else (not a database, corrupt, disk full, ...) as an InputError
// naming the file.
[[noreturn]] void raise(sqlite3* db, const std::string& path, int code) {
  const std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  if ((code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED)
    throw std::runtime_error(path + ": " + message);
  throw input_error(path, message);
}

// Executes SQL without results, trying again while the database stays busy past the busy
// handler's wait (WAL can answer SQLITE_BUSY without calling it, e.g. during recovery).
void execute(sqlite3* db, const std::string& path, const char* sql) {
  const auto deadline = std::chrono::steady_clock::now() + kBusyTimeout;
  for (int attempt = 0;; ++attempt) {
    const int code = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (code == SQLITE_OK) return;
    if ((code & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline)
      raise(db, path, code);
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + attempt % 8));
  }
}

// Runs fn inside BEGIN IMMEDIATE ... COMMIT: one write transaction, rolled back when fn throws.
void write_transaction(sqlite3* db, const std::string& path, const std::function<void()>& fn) {
  execute(db, path, "BEGIN IMMEDIATE");
  try {
    fn();
    execute(db, path, "COMMIT");
  } catch (...) {
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

int64_t single_integer(sqlite3* db, const std::string& path, const std::string& sql) {
  Statement statement(db, path, sql);
  return statement.next() ? statement.integer(0) : 0;
}

void require_run(sqlite3* db, const std::string& path, int64_t run_id) {
  Statement statement(db, path, "SELECT 1 FROM runs WHERE id = ?");
  if (!statement.bind(run_id).next())
    throw input_error(path, "no run with id " + std::to_string(run_id));
}

void write_run_transaction(sqlite3* db, const std::string& path, int64_t run_id,
                           const std::function<void()>& fn) {
  write_transaction(db, path, [&] {
    require_run(db, path, run_id);
    fn();
  });
}

void require_nonempty(const std::string& value, const char* what) {
  if (value.empty()) throw std::invalid_argument(std::string("results store: empty ") + what);
}

}  // namespace lmk::store_sql
