#include "core/store/results_store.h"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <stdexcept>

#include "core/store/migrations.h"
#include "core/store/schema.h"
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

Metric read_metric(const Statement& row) {
  return {row.text(0), row.integer(1), row.real(2), row.text(3)};
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

int64_t ResultsStore::get_or_create_experiment(const std::string& name,
                                               const std::string& description) {
  require_nonempty(name, "experiment name");
  int64_t id = 0;
  write_transaction(db_.get(), path_, [&] {
    Statement(db_.get(), path_,
              "INSERT INTO experiments (name, description) VALUES (?, ?) "
              "ON CONFLICT (name) DO NOTHING")
        .bind(name, description)
        .run();
    Statement select(db_.get(), path_, "SELECT id FROM experiments WHERE name = ?");
    select.bind(name).next();
    id = select.integer(0);
  });
  return id;
}

std::vector<Experiment> ResultsStore::experiments() const {
  return select_rows(db_.get(), path_,
                     "SELECT id, name, description, created_at FROM experiments ORDER BY id",
                     [](const Statement& row) {
                       return Experiment{row.integer(0), row.text(1), row.text(2), row.text(3)};
                     });
}

int64_t ResultsStore::create_run(int64_t experiment_id, const NewRun& run) {
  require_nonempty(run.name, "run name");
  require_nonempty(run.kind, "run kind");
  if (!run.config.is_object() && !run.config.is_null())
    throw std::invalid_argument("results store: a run config must be a JSON object");
  int64_t id = 0;
  write_transaction(db_.get(), path_, [&] {
    Statement experiment(db_.get(), path_, "SELECT 1 FROM experiments WHERE id = ?");
    if (!experiment.bind(experiment_id).next())
      throw input_error(path_, "no experiment with id " + std::to_string(experiment_id));
    if (run.parent_run_id) require_run(db_.get(), path_, *run.parent_run_id);
    Statement(db_.get(), path_,
              "INSERT INTO runs (experiment_id, name, kind, config, parent_run_id) "
              "VALUES (?, ?, ?, ?, ?)")
        .bind(experiment_id, run.name, run.kind,
              run.config.is_null() ? std::string("{}") : run.config.dump(), run.parent_run_id)
        .run();
    id = sqlite3_last_insert_rowid(db_.get());
    Statement param(db_.get(), path_, "INSERT INTO params (run_id, key, value) VALUES (?, ?, ?)");
    for (const auto& [key, value] : flatten_params(run.config)) param.bind(id, key, value).run();
  });
  return id;
}

void ResultsStore::set_run_config(int64_t run_id, const json& config) {
  if (!config.is_object() && !config.is_null())
    throw std::invalid_argument("results store: a run config must be a JSON object");
  write_run_transaction(db_.get(), path_, run_id, [&] {
    Statement(db_.get(), path_, "UPDATE runs SET config = ?2 WHERE id = ?1")
        .bind(run_id, config.is_null() ? std::string("{}") : config.dump())
        .run();
    Statement(db_.get(), path_, "DELETE FROM params WHERE run_id = ?").bind(run_id).run();
    Statement param(db_.get(), path_, "INSERT INTO params (run_id, key, value) VALUES (?, ?, ?)");
    for (const auto& [key, value] : flatten_params(config)) param.bind(run_id, key, value).run();
  });
}

void ResultsStore::set_run_status(int64_t run_id, RunStatus status, const std::string& error_text) {
  write_run_transaction(db_.get(), path_, run_id, [&] {
    // A run that runs again (resumed) keeps its first start and is no longer ended.
    Statement(db_.get(), path_,
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

void ResultsStore::set_run_info(int64_t run_id, const std::string& host, const std::string& device,
                                const std::string& code_revision) {
  write_run_transaction(db_.get(), path_, run_id, [&] {
    Statement(db_.get(), path_,
              "UPDATE runs SET host = ?2, device = ?3, code_revision = ?4 WHERE id = ?1")
        .bind(run_id, host, device, code_revision)
        .run();
  });
}

void ResultsStore::start_run(int64_t run_id, const std::string& device,
                             const std::string& code_revision) {
  const int64_t pid = ::getpid();
  const std::string started = process_start_time(pid);
  write_run_transaction(db_.get(), path_, run_id, [&] {
    Statement(db_.get(), path_,
              "UPDATE runs SET host = ?2, device = ?3, code_revision = ?4, pid = ?5, "
              "process_start = ?6 WHERE id = ?1")
        .bind(run_id, host_name(), device, code_revision, pid, started)
        .run();
  });
  set_run_status(run_id, RunStatus::Running);
}

size_t ResultsStore::end_lost_runs() {
  const std::string host = host_name();
  std::vector<RunRecord> lost;
  {
    Statement running(
        db_.get(), path_,
        std::string(kRunColumns) + "WHERE r.status = 'RUNNING' AND r.pid > 0 AND r.host = ?1");
    running.bind(host);
    while (running.next()) {
      RunRecord run = read_run(running, path_);
      if (process_start_time(run.pid) != run.process_start) lost.push_back(std::move(run));
    }
  }
  size_t ended = 0;
  for (const RunRecord& run : lost) {
    // Conditional: the run may have ended (or started again elsewhere) since it was read.
    write_run_transaction(db_.get(), path_, run.id, [&] {
      Statement end(db_.get(), path_,
                    "UPDATE runs SET status = 'FAILED', ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', "
                    "'now'), error_text = ?2 WHERE id = ?1 AND status = 'RUNNING' AND pid = ?3 "
                    "AND process_start = ?4");
      end.bind(run.id,
               "its process (pid " + std::to_string(run.pid) + " on " + host +
                   ") ended without recording how: killed (SIGKILL, out of memory) or unable "
                   "to write this store",
               run.pid, run.process_start)
          .run();
      ended += sqlite3_changes(db_.get()) > 0;
    });
  }
  return ended;
}

void ResultsStore::log_metrics(int64_t run_id, int64_t step,
                               const std::vector<std::pair<std::string, double>>& values) {
  for (const auto& value : values) require_nonempty(value.first, "metric key");
  write_run_transaction(db_.get(), path_, run_id, [&] {
    Statement point(db_.get(), path_,
                    "INSERT INTO metrics (run_id, key, step, value) VALUES (?, ?, ?, ?)");
    // The latest value is the point with the highest step (a later one at the same step wins).
    Statement latest(db_.get(), path_,
                     "INSERT INTO metric_latest (run_id, key, step, value, time) "
                     "SELECT run_id, key, step, value, time FROM metrics WHERE rowid = ? "
                     "ON CONFLICT (run_id, key) DO UPDATE SET step = excluded.step, "
                     "value = excluded.value, time = excluded.time "
                     "WHERE excluded.step >= metric_latest.step");
    for (const auto& [key, value] : values) {
      point.bind(run_id, key, step, value).run();
      latest.bind(sqlite3_last_insert_rowid(db_.get())).run();
    }
  });
}

void ResultsStore::add_eval_results(int64_t run_id, const std::vector<EvalResult>& rows) {
  for (const auto& row : rows) {
    require_nonempty(row.dataset, "eval result dataset");
    require_nonempty(row.split, "eval result split");
    require_nonempty(row.metric, "eval result metric");
    require_nonempty(row.group_kind, "eval result group kind");
    if (row.group_kind == "all" && !row.group_value.empty())
      throw std::invalid_argument("results store: group kind 'all' takes no group value");
  }
  write_run_transaction(db_.get(), path_, run_id, [&] {
    Statement insert(db_.get(), path_,
                     "INSERT OR REPLACE INTO eval_results "
                     "(run_id, dataset, split, metric, group_kind, group_value, value) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?)");
    for (const auto& r : rows)
      insert.bind(run_id, r.dataset, r.split, r.metric, r.group_kind, r.group_value, r.value).run();
  });
}

void ResultsStore::add_attention_profile(int64_t run_id,
                                         const std::vector<AttentionProfileRow>& rows) {
  write_run_transaction(db_.get(), path_, run_id, [&] {
    Statement insert(db_.get(), path_,
                     "INSERT OR REPLACE INTO attention_profiles (run_id, dataset, length_group, "
                     "layer, head, bin, bin_start, bin_end, weight) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const auto& r : rows) {
      insert
          .bind(run_id, r.dataset, r.length_group, r.layer, r.head, r.bin, r.bin_start, r.bin_end,
                r.weight)
          .run();
    }
  });
}

void ResultsStore::add_length_histogram(const LengthHistogram& histogram) {
  require_nonempty(histogram.dataset, "histogram dataset");
  write_transaction(db_.get(), path_, [&] {
    for (const char* table : {"length_histograms", "length_percentiles"}) {
      Statement(db_.get(), path_,
                std::string("DELETE FROM ") + table + " WHERE dataset = ? AND tokenizer = ?")
          .bind(histogram.dataset, histogram.tokenizer)
          .run();
    }
    Statement bin(db_.get(), path_,
                  "INSERT INTO length_histograms (dataset, tokenizer, bin_index, lo, hi, count) "
                  "VALUES (?, ?, ?, ?, ?, ?)");
    for (size_t i = 0; i < histogram.bins.size(); ++i) {
      const auto& b = histogram.bins[i];
      bin.bind(histogram.dataset, histogram.tokenizer, i, b.lo, b.hi, b.count).run();
    }
    Statement percentile(db_.get(), path_,
                         "INSERT OR REPLACE INTO length_percentiles "
                         "(dataset, tokenizer, percentile, value) VALUES (?, ?, ?, ?)");
    for (const auto& [p, value] : histogram.percentiles)
      percentile.bind(histogram.dataset, histogram.tokenizer, p, value).run();
  });
}

void ResultsStore::add_artifact(int64_t run_id, const std::string& kind, const std::string& path) {
  write_run_transaction(db_.get(), path_, run_id, [&] {
    Statement(db_.get(), path_, "INSERT INTO artifacts (run_id, kind, path) VALUES (?, ?, ?)")
        .bind(run_id, kind, path)
        .run();
  });
}

std::vector<RunRecord> ResultsStore::list_runs(const RunFilter& filter) const {
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
  Statement rows(db_.get(), path_, sql + " ORDER BY r.id");
  rows.bind_texts(values);
  std::vector<RunRecord> runs;
  while (rows.next()) runs.push_back(read_run(rows, path_));
  return runs;
}

RunRecord ResultsStore::get_run(int64_t run_id) const {
  Statement row(db_.get(), path_, std::string(kRunColumns) + "WHERE r.id = ?");
  if (!row.bind(run_id).next())
    throw input_error(path_, "no run with id " + std::to_string(run_id));
  return read_run(row, path_);
}

std::map<std::string, std::string> ResultsStore::run_params(int64_t run_id) const {
  Statement rows(db_.get(), path_, "SELECT key, value FROM params WHERE run_id = ?");
  rows.bind(run_id);
  std::map<std::string, std::string> params;
  while (rows.next()) params.emplace(rows.text(0), rows.text(1));
  return params;
}

std::vector<Metric> ResultsStore::latest_metrics(int64_t run_id) const {
  return select_rows(
      db_.get(), path_,
      "SELECT key, step, value, time FROM metric_latest WHERE run_id = ? ORDER BY key", read_metric,
      run_id);
}

std::vector<Metric> ResultsStore::metric_series(int64_t run_id, const std::string& key) const {
  return select_rows(db_.get(), path_,
                     "SELECT key, step, value, time FROM metrics WHERE run_id = ? AND key = ? "
                     "ORDER BY step, rowid",
                     read_metric, run_id, key);
}

std::vector<EvalResult> ResultsStore::eval_results(int64_t run_id,
                                                   const std::string& dataset) const {
  return select_rows(
      db_.get(), path_,
      "SELECT dataset, split, metric, value, group_kind, group_value FROM eval_results "
      "WHERE run_id = ?1 AND (?2 = '' OR dataset = ?2) "
      "ORDER BY dataset, split, metric, group_kind, group_value",
      [](const Statement& row) {
        return EvalResult{row.text(0), row.text(1), row.text(2),
                          row.real(3), row.text(4), row.text(5)};
      },
      run_id, dataset);
}

std::vector<AttentionProfileRow> ResultsStore::attention_profiles(
    int64_t run_id, const std::string& dataset) const {
  return select_rows(
      db_.get(), path_,
      "SELECT dataset, length_group, layer, head, bin, bin_start, bin_end, weight "
      "FROM attention_profiles WHERE run_id = ?1 AND (?2 = '' OR dataset = ?2) "
      "ORDER BY dataset, length_group, layer, head, bin",
      [](const Statement& row) {
        return AttentionProfileRow{row.text(0),    row.text(1), row.integer(2), row.integer(3),
                                   row.integer(4), row.real(5), row.real(6),    row.real(7)};
      },
      run_id, dataset);
}

std::vector<LengthHistogram> ResultsStore::length_histograms(const std::string& dataset) const {
  auto histograms = select_rows(
      db_.get(), path_,
      "SELECT dataset, tokenizer FROM length_histograms WHERE ?1 = '' OR dataset = ?1 "
      "UNION SELECT dataset, tokenizer FROM length_percentiles WHERE ?1 = '' OR dataset = ?1 "
      "ORDER BY 1, 2",
      [](const Statement& row) {
        return LengthHistogram{row.text(0), row.text(1), {}, {}};
      },
      dataset);
  for (auto& histogram : histograms) {
    histogram.bins = select_rows(
        db_.get(), path_,
        "SELECT lo, hi, count FROM length_histograms WHERE dataset = ? AND tokenizer = ? "
        "ORDER BY bin_index",
        [](const Statement& row) {
          return LengthHistogram::Bin{row.integer(0), row.integer(1), row.integer(2)};
        },
        histogram.dataset, histogram.tokenizer);
    histogram.percentiles = select_rows(
        db_.get(), path_,
        "SELECT percentile, value FROM length_percentiles WHERE dataset = ? AND tokenizer = ? "
        "ORDER BY percentile",
        [](const Statement& row) { return std::make_pair(row.real(0), row.real(1)); },
        histogram.dataset, histogram.tokenizer);
  }
  return histograms;
}

std::vector<Artifact> ResultsStore::artifacts(int64_t run_id) const {
  return select_rows(
      db_.get(), path_, "SELECT kind, path, created_at FROM artifacts WHERE run_id = ? ORDER BY id",
      [](const Statement& row) {
        return Artifact{row.text(0), row.text(1), row.text(2)};
      },
      run_id);
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

}  // namespace lmk
