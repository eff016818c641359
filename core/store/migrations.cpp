// Opening a results store file: its state, the checks and the migrations
// (core/store/migrations.h).
#include <string>

#include "core/store/migrations.h"
#include "core/store/schema.h"
#include "core/store/sqlite_statement.h"
#include "core/util/error.h"

namespace lmk::store_schema {

using namespace store_sql;

FileState read_file_state(sqlite3* db, const std::string& path) {
  try {
    Statement row(db, path,
                  "SELECT a.application_id, v.user_version, (SELECT group_concat(name, ', ') "
                  "FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)) "
                  "FROM pragma_application_id() a, pragma_user_version() v");
    row.next();
    return {row.integer(0), static_cast<int>(row.integer(1)), row.text(2)};
  } catch (const InputError& e) {
    // Only a file SQLite cannot read as a database is "not a results store"; an I/O error
    // (a full disk, EIO) is said as SQLite says it.
    if ((sqlite3_errcode(db) & 0xff) != SQLITE_NOTADB) throw;
    throw InputError(std::string(e.what()) + " (not a results store)");
  }
}

int usable_version(const FileState& state, const std::string& path, ResultsStore::OpenMode mode) {
  const bool empty = state.tables.empty() && state.application_id == 0 && state.version == 0;
  if (empty) {
    if (mode == ResultsStore::OpenMode::Existing)
      throw input_error(path, "is an empty database, not a results store");
    return 0;
  }
  if (state.application_id != store_schema::kApplicationId) {
    throw input_error(path, "is an SQLite database of another program, not a results store " +
                                (state.tables.empty() ? "(no tables" : "(tables: " + state.tables) +
                                "; schema version " + std::to_string(state.version) + ")");
  }
  if (state.version > store_schema::current_version()) {
    throw input_error(path, "was written by a newer lmk (schema version " +
                                std::to_string(state.version) + "; this lmk knows up to " +
                                std::to_string(store_schema::current_version()) + ")");
  }
  if (state.version < 1) throw input_error(path, "results store without a schema version");
  return state.version;
}

void migrate(sqlite3* db, const std::string& path, ResultsStore::OpenMode mode) {
  write_transaction(db, path, [&] {
    const int version = usable_version(read_file_state(db, path), path, mode);
    for (const auto& migration : store_schema::migrations()) {
      if (migration.version > version) execute(db, path, migration.sql);
    }
    const std::string stamp =
        "PRAGMA application_id = " + std::to_string(store_schema::kApplicationId) +
        "; PRAGMA user_version = " + std::to_string(store_schema::current_version());
    execute(db, path, stamp.c_str());
  });
}

}  // namespace lmk::store_schema
