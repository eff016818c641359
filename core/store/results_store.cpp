#include "core/store/results_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "core/store/migrations.h"
#include "core/store/schema.h"
#include "core/store/sqlite_statement.h"
#include "core/util/error.h"

namespace lmk {

using nlohmann::json;
using namespace store_sql;

ResultsStore::ResultsStore(const std::string& path, OpenMode mode)
    : path_(path), db_(nullptr, sqlite3_close_v2) {
  std::error_code error;
  const auto type = std::filesystem::status(path, error).type();
  if (type == std::filesystem::file_type::not_found && mode == OpenMode::Existing)
    throw input_error(path, "no such results store (the file does not exist)");
  if (type == std::filesystem::file_type::directory)
    throw input_error(path, "is a folder, not a results store");

  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (mode == OpenMode::Create ? SQLITE_OPEN_CREATE : 0);
  const int code = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  db_.reset(db);
  if (code != SQLITE_OK) raise(db, path, code);
  sqlite3_busy_timeout(db, static_cast<int>(kBusyTimeout.count()));

  // Read before writing anything: a file that is not ours stays as it was.
  const int version =
      store_schema::usable_version(store_schema::read_file_state(db, path), path, mode);
  execute(db, path, "PRAGMA journal_mode = WAL");
  if (version < store_schema::current_version()) store_schema::migrate(db, path, mode);
  execute(db, path, "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON");
}

ResultsStore::~ResultsStore() = default;
ResultsStore::ResultsStore(ResultsStore&&) noexcept = default;
ResultsStore& ResultsStore::operator=(ResultsStore&&) noexcept = default;

int ResultsStore::schema_version() const {
  return static_cast<int>(single_integer(db_.get(), path_, "PRAGMA user_version"));
}

std::optional<int64_t> run_id_from_environment() {
  const char* value = std::getenv("LMK_RUN_ID");
  if (!value || !*value) return std::nullopt;
  const std::string text = value;
  const bool digits =
      std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  int64_t id = 0;
  if (digits && text.size() <= 18) id = std::stoll(text);
  if (id <= 0)
    throw input_error("LMK_RUN_ID", "'" + text + "' is not a run id (a positive integer)");
  return id;
}

void adopt_run(ResultsStore& store, int64_t run_id, const std::string& kind, const json& config) {
  const std::string where = "LMK_RUN_ID=" + std::to_string(run_id);
  RunRecord run;
  try {
    run = store.get_run(run_id);
  } catch (const InputError&) {
    throw input_error(where, "no run with id " + std::to_string(run_id) + " in " + store.path());
  }
  if (run.kind != kind) {
    throw input_error(where, "run " + std::to_string(run_id) + " in " + store.path() + " is a '" +
                                 run.kind + "' run, not '" + kind + "'");
  }
  store.set_run_config(run_id, config);
}

sqlite3* ResultsStore::connection() const {
  return db_.get();
}

const std::string& ResultsStore::file() const {
  return path_;
}

}  // namespace lmk
