#pragma once

// The results store's schema, written as forward migrations. A database records its version in
// PRAGMA user_version and that it is a results store in PRAGMA application_id; opening one
// applies the migrations it lacks, in order, in one transaction (core/store/results_store.h).

#include <cstdint>
#include <vector>

namespace lmk::store_schema {

// PRAGMA application_id of a results store: "LMKW".
constexpr int32_t kApplicationId = 0x4C4D4B57;

// One step: its SQL takes a database at version - 1 to `version`.
struct Migration {
  int version;
  const char* sql;
};

// Every migration, oldest first; versions are 1, 2, ... without gaps.
const std::vector<Migration>& migrations();

// The version this program writes (the last migration's).
int current_version();

}  // namespace lmk::store_schema
