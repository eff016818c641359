// Jobs (core/store/store_jobs.h).
#include "core/store/store_jobs.h"

#include <algorithm>
#include <limits>

#include "core/store/sqlite_statement.h"
#include "core/util/error.h"
#include "core/util/json_util.h"

namespace lmk {

using nlohmann::json;
using namespace store_sql;

namespace {

// The columns read_job reads, in its order.
const std::string kJobFields =
    "SELECT j.run_id, j.executor, j.study_dir, j.step, j.step_key, j.command, j.log_path, "
    "j.depends_on, j.external_id, j.process_start, j.attempts, j.cancel_requested, "
    "j.progress_done, j.progress_total, j.eta_s, j.progress_text, j.updated_at, j.outputs, "
    "j.ended";
const std::string kJobColumns = kJobFields + " FROM jobs j ";
// Then the job's run: name, kind, status, error text, experiment (columns 19-23).
const std::string kJobAndRunColumns =
    kJobFields +
    ", r.name, r.kind, r.status, r.error_text, e.name FROM jobs j JOIN runs r ON r.id = "
    "j.run_id JOIN experiments e ON e.id = r.experiment_id ";

JobRecord read_job(const Statement& row, const std::string& path) {
  JobRecord job;
  job.run_id = row.integer(0);
  const std::string where = path + ": jobs of run " + std::to_string(job.run_id);
  job.executor = row.text(1);
  job.study_dir = row.text(2);
  job.step = row.text(3);
  job.step_key = row.text(4);
  const json command = json_util::parse(row.text(5), where + ", command");
  const json deps = json_util::parse(row.text(7), where + ", depends_on");
  const json outputs = json_util::parse(row.text(17), where + ", outputs");
  try {
    job.command = command.get<std::vector<std::string>>();
    job.outputs = outputs.get<std::vector<std::string>>();
    job.depends_on = deps.get<std::vector<int64_t>>();
  } catch (const json::exception&) {
    throw input_error(where,
                      "command and outputs must be arrays of strings, depends_on of run ids");
  }
  job.log_path = row.text(6);
  job.external_id = row.text(8);
  job.process_start = row.text(9);
  job.attempts = row.integer(10);
  job.cancel_requested = row.integer(11) != 0;
  job.progress_done = row.integer(12);
  job.progress_total = row.integer(13);
  job.eta_s = row.is_null(14) ? -1 : row.real(14);
  job.progress_text = row.text(15);
  job.updated_at = row.text(16);
  job.ended = row.integer(18) != 0;
  return job;
}

// Runs one UPDATE in a write transaction; whether it changed a row.
template <typename... Args>
bool update_one(sqlite3* db, const std::string& path, const char* sql, const Args&... args) {
  bool changed = false;
  write_transaction(db, path, [&] {
    Statement(db, path, sql).bind(args...).run();
    changed = sqlite3_changes(db) > 0;
  });
  return changed;
}

}  // namespace

void StoredJobs::add_job(const JobRecord& job) {
  require_nonempty(job.executor, "job executor");
  write_run_transaction(connection(), file(), job.run_id, [&] {
    Statement(connection(), file(),
              "INSERT INTO jobs (run_id, executor, study_dir, step, step_key, command, log_path, "
              "depends_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        .bind(job.run_id, job.executor, job.study_dir, job.step, job.step_key,
              json(job.command).dump(), job.log_path, json(job.depends_on).dump())
        .run();
  });
  update_job(job);
}

void StoredJobs::update_job(const JobRecord& job) {
  write_transaction(connection(), file(), [&] {
    Statement update(
        connection(), file(),
        "UPDATE jobs SET executor = ?, study_dir = ?, step = ?, step_key = ?, "
        "command = ?, log_path = ?, outputs = ?, depends_on = ?, external_id = ?, "
        "process_start = ?, attempts = ?, cancel_requested = ?, ended = ?, progress_done = ?, "
        "progress_total = ?, eta_s = ?, progress_text = ?, "
        "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE run_id = ?");
    update
        .bind(job.executor, job.study_dir, job.step, job.step_key, json(job.command).dump(),
              job.log_path, json(job.outputs).dump(), json(job.depends_on).dump(), job.external_id,
              job.process_start, job.attempts, job.cancel_requested ? 1 : 0, job.ended ? 1 : 0,
              job.progress_done, job.progress_total,
              job.eta_s < 0 ? std::numeric_limits<double>::quiet_NaN() : job.eta_s,
              job.progress_text, job.run_id)
        .run();
    if (sqlite3_changes(connection()) == 0)
      throw input_error(file(), "no job for run " + std::to_string(job.run_id));
  });
}

bool StoredJobs::claim_job_end(int64_t run_id) {
  return update_one(connection(), file(),
                    "UPDATE jobs SET ended = 1, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', "
                    "'now') WHERE run_id = ? AND ended = 0",
                    run_id);
}

bool StoredJobs::mark_job_started(int64_t run_id, const std::string& external_id,
                                  const std::string& process_start) {
  return update_one(connection(), file(),
                    "UPDATE jobs SET external_id = ?, process_start = ?, attempts = attempts + 1, "
                    "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
                    "WHERE run_id = ? AND ended = 0 AND cancel_requested = 0",
                    external_id, process_start, run_id);
}

bool StoredJobs::request_job_cancel(int64_t run_id) {
  return update_one(connection(), file(),
                    "UPDATE jobs SET cancel_requested = 1, updated_at = "
                    "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE run_id = ? AND ended = 0",
                    run_id);
}

void StoredJobs::set_job_progress(int64_t run_id, int64_t done, int64_t total, double eta_s,
                                  const std::string& text) {
  update_one(connection(), file(),
             "UPDATE jobs SET progress_done = ?, progress_total = ?, eta_s = ?, "
             "progress_text = ?, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') "
             "WHERE run_id = ?",
             done, total, eta_s < 0 ? std::numeric_limits<double>::quiet_NaN() : eta_s, text,
             run_id);
}

std::optional<JobRecord> StoredJobs::job(int64_t run_id) const {
  Statement row(connection(), file(), kJobColumns + "WHERE j.run_id = ?");
  if (!row.bind(run_id).next()) return std::nullopt;
  return read_job(row, file());
}

std::vector<JobRecord> StoredJobs::jobs(const std::string& study_dir, bool unfinished) const {
  std::string sql = kJobColumns + "WHERE 1";
  std::vector<std::string> values;
  if (!study_dir.empty()) {
    sql += " AND j.study_dir = ?";
    values.push_back(study_dir);
  }
  if (unfinished) sql += " AND j.ended = 0";
  Statement rows(connection(), file(), sql + " ORDER BY j.run_id");
  rows.bind_texts(values);
  std::vector<JobRecord> out;
  while (rows.next()) out.push_back(read_job(rows, file()));
  return out;
}

std::vector<MonitoredRun> StoredJobs::monitored_runs(bool include_ended) const {
  std::vector<MonitoredRun> out;
  Statement job_runs(
      connection(), file(),
      kJobAndRunColumns + (include_ended ? "" : "WHERE j.ended = 0 ") + "ORDER BY j.run_id");
  while (job_runs.next())
    out.push_back({job_runs.integer(0), job_runs.text(19), job_runs.text(20), job_runs.text(21),
                   job_runs.text(22), job_runs.text(23), read_job(job_runs, file()), ""});
  Statement running(connection(), file(),
                    "SELECT r.id, r.name, r.kind, r.status, r.error_text, e.name, "
                    "COALESCE(r.started_at, r.created_at) FROM runs r JOIN experiments e ON e.id "
                    "= r.experiment_id WHERE r.status = 'RUNNING' AND NOT EXISTS (SELECT 1 FROM "
                    "jobs WHERE jobs.run_id = r.id) ORDER BY r.id");
  while (running.next())
    out.push_back({running.integer(0), running.text(1), running.text(2), running.text(3),
                   running.text(4), running.text(5), std::nullopt, running.text(6)});
  std::stable_sort(out.begin(), out.end(), [](const MonitoredRun& a, const MonitoredRun& b) {
    return a.run_id < b.run_id;
  });
  return out;
}

JobSubmission StoredJobs::job_submission(int64_t run_id) const {
  JobSubmission submission;
  const std::optional<JobRecord> record = job(run_id);
  if (!record) {
    submission.error = "run " + std::to_string(run_id) + " is not a job";
    return submission;
  }
  submission.study_dir = record->study_dir;
  submission.executor = record->executor;
  const auto parsed = [](const std::string& text) {
    const json config = json::parse(text, nullptr, false);
    return config.is_object() ? config : json::object();
  };
  Statement own(connection(), file(), "SELECT config FROM runs WHERE id = ?");
  json config = own.bind(run_id).next() ? parsed(own.text(0)) : json::object();
  if (!config.contains("study")) {
    Statement others(connection(), file(),
                     "SELECT r.config FROM jobs j JOIN runs r ON r.id = j.run_id WHERE "
                     "j.study_dir = ? AND r.config LIKE '%\"study\"%' ORDER BY abs(r.id - ?) "
                     "LIMIT 50");
    others.bind(submission.study_dir, run_id);
    while (!config.contains("study") && others.next()) config = parsed(others.text(0));
  }
  const auto text = [&](const char* key) {
    const auto found = config.find(key);
    return found != config.end() && found->is_string() ? found->get<std::string>() : "";
  };
  submission.study_config = text("study");
  submission.profile = text("profile");
  if (submission.study_config.empty())
    submission.error =
        "no run of " + submission.study_dir + " records the study config it was submitted from";
  return submission;
}

}  // namespace lmk
