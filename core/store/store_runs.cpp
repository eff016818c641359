// Experiments, runs, their params and artifacts (core/store/store_runs.h).
#include "core/store/store_runs.h"

#include <sqlite3.h>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <stdexcept>

#include "core/store/sqlite_statement.h"
#include "core/util/error.h"
#include "core/util/json_util.h"
#include "core/util/process.h"
#include "core/util/runtime.h"

namespace lmk {

using nlohmann::json;
using namespace store_sql;

namespace {

constexpr const char* kStatusNames[] = {"SCHEDULED", "RUNNING", "FINISHED", "FAILED", "KILLED"};

void flatten_into(const json& value, const std::string& key,
                  std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_object() && !value.empty()) {
    for (const auto& [member, inner] : value.items())
      flatten_into(inner, key.empty() ? member : key + "." + member, out);
  } else if (value.is_array() && !value.empty()) {
    for (size_t i = 0; i < value.size(); ++i)
      flatten_into(value[i], key + "[" + std::to_string(i) + "]", out);
  } else if (!key.empty()) {
    out.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
  }
}

const char* const kRunColumns =
    "SELECT r.id, r.experiment_id, e.name, r.name, r.kind, r.config, r.status, r.created_at, "
    "r.started_at, r.ended_at, r.host, r.device, r.code_revision, r.parent_run_id, r.error_text, "
    "r.pid, r.process_start FROM runs r JOIN experiments e ON e.id = r.experiment_id ";

RunRecord read_run(const Statement& row, const std::string& path) {
  RunRecord run;
  run.id = row.integer(0);
  run.experiment_id = row.integer(1);
  run.experiment = row.text(2);
  run.name = row.text(3);
  run.kind = row.text(4);
  run.config =
      json_util::parse(row.text(5), path + ": runs.config of run " + std::to_string(run.id));
  run.status =
      parse_run_status(row.text(6), path + ": runs.status of run " + std::to_string(run.id));
  run.created_at = row.text(7);
  run.started_at = row.text(8);
  run.ended_at = row.text(9);
  run.host = row.text(10);
  run.device = row.text(11);
  run.code_revision = row.text(12);
  if (!row.is_null(13)) run.parent_run_id = row.integer(13);
  run.error_text = row.text(14);
  run.pid = row.integer(15);
  run.process_start = row.text(16);
  return run;
}

}  // namespace

std::string run_status_name(RunStatus status) {
  return kStatusNames[static_cast<int>(status)];
}

RunStatus parse_run_status(const std::string& text, const std::string& where) {
  std::string upper = text;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (int i = 0; i < 5; ++i) {
    if (upper == kStatusNames[i]) return static_cast<RunStatus>(i);
  }
  throw input_error(
      where, "unknown run status '" + text + "' (SCHEDULED, RUNNING, FINISHED, FAILED or KILLED)");
}

bool is_terminal(RunStatus status) {
  return status == RunStatus::Finished || status == RunStatus::Failed ||
         status == RunStatus::Killed;
}

std::vector<std::pair<std::string, std::string>> flatten_params(const json& config) {
  std::vector<std::pair<std::string, std::string>> params;
  if (config.is_object()) flatten_into(config, "", params);
  std::sort(params.begin(), params.end());
  return params;
}

std::set<std::string> differing_keys(const std::vector<std::map<std::string, std::string>>& runs) {
  std::set<std::string> keys, differing;
  for (const auto& params : runs) {
    for (const auto& entry : params) keys.insert(entry.first);
  }
  for (const auto& key : keys) {
    std::set<std::optional<std::string>> values;
    for (const auto& params : runs) {
      const auto it = params.find(key);
      values.insert(it == params.end() ? std::nullopt : std::optional<std::string>(it->second));
    }
    if (values.size() > 1) differing.insert(key);
  }
  return differing;
}

int64_t StoredRuns::get_or_create_experiment(const std::string& name,
                                             const std::string& description) {
  require_nonempty(name, "experiment name");
  int64_t id = 0;
  write_transaction(connection(), file(), [&] {
    Statement(connection(), file(),
              "INSERT INTO experiments (name, description) VALUES (?, ?) "
              "ON CONFLICT (name) DO NOTHING")
        .bind(name, description)
        .run();
    Statement select(connection(), file(), "SELECT id FROM experiments WHERE name = ?");
    select.bind(name).next();
    id = select.integer(0);
  });
  return id;
}

std::vector<Experiment> StoredRuns::experiments() const {
  return select_rows(connection(), file(),
                     "SELECT id, name, description, created_at FROM experiments ORDER BY id",
                     [](const Statement& row) {
                       return Experiment{row.integer(0), row.text(1), row.text(2), row.text(3)};
                     });
}

int64_t StoredRuns::create_run(int64_t experiment_id, const NewRun& run) {
  require_nonempty(run.name, "run name");
  require_nonempty(run.kind, "run kind");
  if (!run.config.is_object() && !run.config.is_null())
    throw std::invalid_argument("results store: a run config must be a JSON object");
  int64_t id = 0;
  write_transaction(connection(), file(), [&] {
    Statement experiment(connection(), file(), "SELECT 1 FROM experiments WHERE id = ?");
    if (!experiment.bind(experiment_id).next())
      throw input_error(file(), "no experiment with id " + std::to_string(experiment_id));
    if (run.parent_run_id) require_run(connection(), file(), *run.parent_run_id);
    Statement(connection(), file(),
              "INSERT INTO runs (experiment_id, name, kind, config, parent_run_id) "
              "VALUES (?, ?, ?, ?, ?)")
        .bind(experiment_id, run.name, run.kind,
              run.config.is_null() ? std::string("{}") : run.config.dump(), run.parent_run_id)
        .run();
    id = sqlite3_last_insert_rowid(connection());
    Statement param(connection(), file(),
                    "INSERT INTO params (run_id, key, value) VALUES (?, ?, ?)");
    for (const auto& [key, value] : flatten_params(run.config)) param.bind(id, key, value).run();
  });
  return id;
}

void StoredRuns::set_run_config(int64_t run_id, const json& config) {
  if (!config.is_object() && !config.is_null())
    throw std::invalid_argument("results store: a run config must be a JSON object");
  write_run_transaction(connection(), file(), run_id, [&] {
    Statement(connection(), file(), "UPDATE runs SET config = ?2 WHERE id = ?1")
        .bind(run_id, config.is_null() ? std::string("{}") : config.dump())
        .run();
    Statement(connection(), file(), "DELETE FROM params WHERE run_id = ?").bind(run_id).run();
    Statement param(connection(), file(),
                    "INSERT INTO params (run_id, key, value) VALUES (?, ?, ?)");
    for (const auto& [key, value] : flatten_params(config)) param.bind(run_id, key, value).run();
  });
}

void StoredRuns::set_run_status(int64_t run_id, RunStatus status, const std::string& error_text) {
  write_run_transaction(connection(), file(), run_id, [&] {
    // A run that runs again (resumed) keeps its first start and is no longer ended.
    Statement(connection(), file(),
              "UPDATE runs SET status = ?2, error_text = ?3, "
              "started_at = CASE WHEN ?4 THEN coalesce(started_at, "
              "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) ELSE started_at END, "
              "ended_at = CASE WHEN ?5 THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
              "WHEN ?4 THEN NULL ELSE ended_at END WHERE id = ?1")
        .bind(run_id, run_status_name(status), error_text, status == RunStatus::Running,
              is_terminal(status))
        .run();
  });
}

void StoredRuns::set_run_info(int64_t run_id, const std::string& host, const std::string& device,
                              const std::string& code_revision) {
  write_run_transaction(connection(), file(), run_id, [&] {
    Statement(connection(), file(),
              "UPDATE runs SET host = ?2, device = ?3, code_revision = ?4 WHERE id = ?1")
        .bind(run_id, host, device, code_revision)
        .run();
  });
}

void StoredRuns::start_run(int64_t run_id, const std::string& device,
                           const std::string& code_revision) {
  const int64_t pid = ::getpid();
  const std::string started = process_start_time(pid);
  write_run_transaction(connection(), file(), run_id, [&] {
    Statement(connection(), file(),
              "UPDATE runs SET host = ?2, device = ?3, code_revision = ?4, pid = ?5, "
              "process_start = ?6 WHERE id = ?1")
        .bind(run_id, host_name(), device, code_revision, pid, started)
        .run();
  });
  set_run_status(run_id, RunStatus::Running);
}

size_t StoredRuns::end_lost_runs() {
  const std::string host = host_name();
  std::vector<RunRecord> lost;
  {
    Statement running(
        connection(), file(),
        std::string(kRunColumns) + "WHERE r.status = 'RUNNING' AND r.pid > 0 AND r.host = ?1");
    running.bind(host);
    while (running.next()) {
      RunRecord run = read_run(running, file());
      if (process_start_time(run.pid) != run.process_start) lost.push_back(std::move(run));
    }
  }
  size_t ended = 0;
  for (const RunRecord& run : lost) {
    // Conditional: the run may have ended (or started again elsewhere) since it was read.
    write_run_transaction(connection(), file(), run.id, [&] {
      Statement end(connection(), file(),
                    "UPDATE runs SET status = 'FAILED', ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', "
                    "'now'), error_text = ?2 WHERE id = ?1 AND status = 'RUNNING' AND pid = ?3 "
                    "AND process_start = ?4");
      end.bind(run.id,
               "its process (pid " + std::to_string(run.pid) + " on " + host +
                   ") ended without recording how: killed (SIGKILL, out of memory) or unable "
                   "to write this store",
               run.pid, run.process_start)
          .run();
      ended += sqlite3_changes(connection()) > 0;
    });
  }
  return ended;
}

void StoredRuns::add_artifact(int64_t run_id, const std::string& kind, const std::string& path) {
  write_run_transaction(connection(), file(), run_id, [&] {
    Statement(connection(), file(), "INSERT INTO artifacts (run_id, kind, path) VALUES (?, ?, ?)")
        .bind(run_id, kind, path)
        .run();
  });
}

std::vector<RunRecord> StoredRuns::list_runs(const RunFilter& filter) const {
  std::string sql = std::string(kRunColumns) + "WHERE 1";
  std::vector<std::string> values;
  auto condition = [&](const char* text, const std::string& value) {
    sql += text;
    values.push_back(value);
  };
  if (!filter.experiment.empty()) condition(" AND e.name = ?", filter.experiment);
  if (filter.status) condition(" AND r.status = ?", run_status_name(*filter.status));
  if (!filter.name_contains.empty()) condition(" AND instr(r.name, ?) > 0", filter.name_contains);
  if (!filter.kind.empty()) condition(" AND r.kind = ?", filter.kind);
  for (const auto& [key, value] : filter.params) {
    condition(" AND EXISTS (SELECT 1 FROM params p WHERE p.run_id = r.id AND p.key = ?", key);
    condition(" AND p.value = ?)", value);
  }
  Statement rows(connection(), file(), sql + " ORDER BY r.id");
  rows.bind_texts(values);
  std::vector<RunRecord> runs;
  while (rows.next()) runs.push_back(read_run(rows, file()));
  return runs;
}

RunRecord StoredRuns::get_run(int64_t run_id) const {
  Statement row(connection(), file(), std::string(kRunColumns) + "WHERE r.id = ?");
  if (!row.bind(run_id).next())
    throw input_error(file(), "no run with id " + std::to_string(run_id));
  return read_run(row, file());
}

std::map<std::string, std::string> StoredRuns::run_params(int64_t run_id) const {
  Statement rows(connection(), file(), "SELECT key, value FROM params WHERE run_id = ?");
  rows.bind(run_id);
  std::map<std::string, std::string> params;
  while (rows.next()) params.emplace(rows.text(0), rows.text(1));
  return params;
}

std::vector<Artifact> StoredRuns::artifacts(int64_t run_id) const {
  return select_rows(
      connection(), file(),
      "SELECT kind, path, created_at FROM artifacts WHERE run_id = ? ORDER BY id",
      [](const Statement& row) {
        return Artifact{row.text(0), row.text(1), row.text(2)};
      },
      run_id);
}

int64_t StoredRuns::count_runs(const RunSelection& selection) const {
  const SqlCondition where = run_selection_condition(selection);
  Statement count(connection(), file(),
                  "SELECT count(*) FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                  "WHERE " +
                      where.sql);
  return count.bind_values(where.bindings).next() ? count.integer(0) : 0;
}

std::vector<int64_t> StoredRuns::selected_runs(const RunSelection& selection) const {
  const SqlCondition where = run_selection_condition(selection);
  Statement rows(connection(), file(),
                 "SELECT r.id FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE " +
                     where.sql + " ORDER BY r.id");
  rows.bind_values(where.bindings);
  std::vector<int64_t> ids;
  while (rows.next()) ids.push_back(rows.integer(0));
  return ids;
}

std::vector<std::string> StoredRuns::param_keys() const {
  return select_rows(connection(), file(), "SELECT DISTINCT key FROM params ORDER BY key",
                     [](const Statement& row) { return row.text(0); });
}

std::vector<std::pair<int64_t, std::string>> StoredRuns::training_lengths() const {
  return select_rows(
      connection(), file(),
      "SELECT CAST(p.value AS INTEGER) AS tokens, r.name FROM params p JOIN runs r ON r.id = "
      "p.run_id WHERE ((r.kind = 'train' AND p.key = 'train.passage_max_length') "
      "OR (r.kind = 'pretrain' AND p.key = 'train.max_length')) AND tokens > 0 "
      "ORDER BY tokens, r.id",
      [](const Statement& row) {
        return std::pair{row.integer(0), row.text(1)};
      });
}

}  // namespace lmk
