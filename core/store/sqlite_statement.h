#pragma once

// The SQLite layer of the results store (internal to core/store): prepared statements with
// typed binds and reads, write transactions that wait out a busy database, and the checks every
// writer makes.

#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/store/run_selection.h"

namespace lmk::store_sql {

// How long a writer waits for the database lock.
constexpr std::chrono::milliseconds kBusyTimeout{10000};

// Raises the failure `code` of a call on db: "database is locked" (the wait ran out) as a
// runtime_error, anything else (not a database, corrupt, disk full, ...) as an InputError
// naming the file.
[[noreturn]] void raise(sqlite3* db, const std::string& path, int code);

// One prepared statement; parameters bind in order (?1, ?2, ...).
class Statement {
 public:
  Statement(sqlite3* db, const std::string& path, const std::string& sql) : db_(db), path_(path) {
    const int code = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr);
    if (code != SQLITE_OK) raise(db, path, code);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Resets the statement and binds args to ?1, ?2, ...
  template <typename... Args>
  Statement& bind(const Args&... args) {
    sqlite3_reset(stmt_);
    [[maybe_unused]] int index = 0;
    (bind_one(++index, args), ...);
    return *this;
  }
  // Resets the statement and binds texts to ?1, ?2, ...
  Statement& bind_texts(const std::vector<std::string>& values) {
    sqlite3_reset(stmt_);
    for (size_t i = 0; i < values.size(); ++i) bind_one(static_cast<int>(i) + 1, values[i]);
    return *this;
  }
  // Resets the statement and binds the values (a RunSelection's condition) to ?1, ?2, ...,
  // after `first` other parameters (bound with bind_at).
  Statement& bind_values(const std::vector<SqlValue>& values, int first = 0) {
    if (first == 0) sqlite3_reset(stmt_);
    for (size_t i = 0; i < values.size(); ++i)
      std::visit([&](const auto& value) { bind_one(first + static_cast<int>(i) + 1, value); },
                 values[i]);
    return *this;
  }
  // Steps once; true while there is a row.
  bool next() {
    const int code = sqlite3_step(stmt_);
    if (code == SQLITE_ROW) return true;
    if (code == SQLITE_DONE) return false;
    raise(db_, path_, code);
  }
  // Steps a statement that returns no rows.
  void run() {
    while (next()) {
    }
  }
  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  // The number of columns of a row, and the storage class of one (SQLITE_INTEGER, ...).
  int columns() const { return sqlite3_column_count(stmt_); }
  int type(int column) const { return sqlite3_column_type(stmt_, column); }
  int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  // NULL reads as NaN (SQLite stores NaN as NULL).
  double real(int column) const {
    return is_null(column) ? std::numeric_limits<double>::quiet_NaN()
                           : sqlite3_column_double(stmt_, column);
  }
  std::string text(int column) const {
    const auto* bytes = sqlite3_column_text(stmt_, column);
    return bytes ? std::string(reinterpret_cast<const char*>(bytes),
                               static_cast<size_t>(sqlite3_column_bytes(stmt_, column)))
                 : std::string();
  }

 private:
  template <typename T>
  void bind_one(int index, const T& value) {
    int code;
    if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
      code = value ? sqlite3_bind_int64(stmt_, index, *value) : sqlite3_bind_null(stmt_, index);
    } else if constexpr (std::is_floating_point_v<T>) {
      code = std::isnan(value) ? sqlite3_bind_null(stmt_, index)
                               : sqlite3_bind_double(stmt_, index, value);
    } else if constexpr (std::is_integral_v<T>) {
      code = sqlite3_bind_int64(stmt_, index, static_cast<int64_t>(value));
    } else {
      const std::string_view text(value);
      code = sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                               SQLITE_TRANSIENT);
    }
    if (code != SQLITE_OK) raise(db_, path_, code);
  }

  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Executes SQL without results, trying again while the database stays busy past the busy
// handler's wait (WAL can answer SQLITE_BUSY without calling it, e.g. during recovery).
void execute(sqlite3* db, const std::string& path, const char* sql);

// Runs fn inside BEGIN IMMEDIATE ... COMMIT: one write transaction, rolled back when fn throws.
void write_transaction(sqlite3* db, const std::string& path, const std::function<void()>& fn);

// The first column of the first row of `sql` as an integer (0 when there is no row).
int64_t single_integer(sqlite3* db, const std::string& path, const std::string& sql);

// An InputError naming the file when there is no run with this id.
void require_run(sqlite3* db, const std::string& path, int64_t run_id);

// A write transaction that first checks the run exists (InputError naming the file if not).
void write_run_transaction(sqlite3* db, const std::string& path, int64_t run_id,
                           const std::function<void()>& fn);

// A programming error (invalid_argument) when a required text field is empty.
void require_nonempty(const std::string& value, const char* what);

// The rows of a query, each made by read(row); args bind to ?1, ?2, ...
template <typename Read, typename... Args>
auto select_rows(sqlite3* db, const std::string& path, const std::string& sql, Read&& read,
                 const Args&... args) {
  Statement rows(db, path, sql);
  rows.bind(args...);
  std::vector<decltype(read(rows))> out;
  while (rows.next()) out.push_back(read(rows));
  return out;
}

}  // namespace lmk::store_sql
