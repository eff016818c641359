#pragma once

// Opening a results store file (internal to core/store): what the file holds, whether this
// program may write to it, and applying the migrations of core/store/schema.h it lacks.

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "core/store/results_store.h"

namespace lmk::store_schema {

// What a file holds before this program touches it.
struct FileState {
  int64_t application_id = 0;
  int version = 0;
  std::string tables;  // "a, b, c"
};

// Reads the state in one statement, hence from one snapshot (a process creating the schema
// meanwhile is seen before or after, never halfway).
FileState read_file_state(sqlite3* db, const std::string& path);

// The schema version of a usable file (0: empty, to be created); throws InputError for a file
// this program must not write to.
int usable_version(const FileState& state, const std::string& path, ResultsStore::OpenMode mode);

// Brings the schema to the current version: the missing migrations in one transaction. The
// state is read again inside it, since another process may have migrated meanwhile.
void migrate(sqlite3* db, const std::string& path, ResultsStore::OpenMode mode);

}  // namespace lmk::store_schema
