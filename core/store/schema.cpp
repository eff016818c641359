#include "core/store/schema.h"

namespace lmk::store_schema {

namespace {

// Version 1: experiments and runs, their parameters, metric series and artifacts. Timestamps are
// ISO-8601 UTC text with milliseconds; a NULL metric value stands for NaN, which SQLite cannot
// store.
const char* const kVersion1 = R"sql(
CREATE TABLE experiments (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'SCHEDULED'
    CHECK (status IN ('SCHEDULED', 'RUNNING', 'FINISHED', 'FAILED', 'KILLED')),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  started_at TEXT,
  ended_at TEXT,
  host TEXT NOT NULL DEFAULT '',
  device TEXT NOT NULL DEFAULT '',
  code_revision TEXT NOT NULL DEFAULT '',
  parent_run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
  error_text TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_by_experiment ON runs(experiment_id);
CREATE INDEX runs_by_status ON runs(status);
CREATE INDEX runs_by_parent ON runs(parent_run_id);
CREATE TABLE params (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE INDEX params_by_key_value ON params(key, value);
CREATE TABLE metrics (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  step INTEGER NOT NULL,
  value REAL,
  time TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX metrics_by_run_key_step ON metrics(run_id, key, step);
CREATE TABLE metric_latest (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  step INTEGER NOT NULL,
  value REAL,
  time TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
) WITHOUT ROWID;
CREATE TABLE artifacts (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  path TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX artifacts_by_run ON artifacts(run_id);
)sql";

// Version 2: evaluation results (whole split, or per length / evidence-position group),
// attention-position profiles and document-length statistics.
const char* const kVersion2 = R"sql(
CREATE TABLE eval_results (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  dataset TEXT NOT NULL,
  split TEXT NOT NULL,
  metric TEXT NOT NULL,
  group_kind TEXT NOT NULL DEFAULT 'all',
  group_value TEXT NOT NULL DEFAULT '',
  value REAL,
  PRIMARY KEY (run_id, dataset, split, metric, group_kind, group_value)
) WITHOUT ROWID;
CREATE INDEX eval_results_by_dataset_metric ON eval_results(dataset, metric);
CREATE TABLE attention_profiles (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  dataset TEXT NOT NULL,
  length_group TEXT NOT NULL,
  layer INTEGER NOT NULL,
  head INTEGER NOT NULL DEFAULT -1,
  bin INTEGER NOT NULL,
  bin_start REAL NOT NULL,
  bin_end REAL NOT NULL,
  weight REAL,
  PRIMARY KEY (run_id, dataset, length_group, layer, head, bin)
) WITHOUT ROWID;
CREATE TABLE length_histograms (
  dataset TEXT NOT NULL,
  tokenizer TEXT NOT NULL,
  bin_index INTEGER NOT NULL,
  lo INTEGER NOT NULL,
  hi INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (dataset, tokenizer, bin_index)
) WITHOUT ROWID;
CREATE TABLE length_percentiles (
  dataset TEXT NOT NULL,
  tokenizer TEXT NOT NULL,
  percentile REAL NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (dataset, tokenizer, percentile)
) WITHOUT ROWID;
)sql";

// Version 3: jobs — how an executor (core/jobs/executor.h) runs a run: the study step, its
// command, log, the process or Slurm job, dependencies and live progress.
const char* const kVersion3 = R"sql(
CREATE TABLE jobs (
  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  executor TEXT NOT NULL CHECK (executor IN ('local', 'slurm')),
  study_dir TEXT NOT NULL,
  step TEXT NOT NULL,
  step_key TEXT NOT NULL,
  command TEXT NOT NULL DEFAULT '[]',
  log_path TEXT NOT NULL DEFAULT '',
  outputs TEXT NOT NULL DEFAULT '[]',
  depends_on TEXT NOT NULL DEFAULT '[]',
  external_id TEXT NOT NULL DEFAULT '',
  process_start TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  ended INTEGER NOT NULL DEFAULT 0,
  progress_done INTEGER NOT NULL DEFAULT -1,
  progress_total INTEGER NOT NULL DEFAULT -1,
  eta_s REAL,
  progress_text TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX jobs_by_step ON jobs(study_dir, step_key);
CREATE INDEX jobs_unended ON jobs(ended);
)sql";

// Version 4: per-query results of evaluations, for paired tests and confidence intervals. One
// row per query (its part, the evidence position and the target document's length where the
// task has them), and one per query and metric; metric names are short and repeated values
// compress well in SQLite's record format (0 and 1 take no bytes).
const char* const kVersion4 = R"sql(
CREATE TABLE eval_queries (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  dataset TEXT NOT NULL,
  split TEXT NOT NULL,
  part TEXT NOT NULL DEFAULT '',
  query_id TEXT NOT NULL,
  evidence_position REAL,
  target_length INTEGER,
  UNIQUE (run_id, dataset, split, part, query_id)
);
CREATE TABLE query_metrics (
  query INTEGER NOT NULL REFERENCES eval_queries(id) ON DELETE CASCADE,
  metric TEXT NOT NULL,
  value REAL,
  PRIMARY KEY (query, metric)
) WITHOUT ROWID;
)sql";

// Version 5: one definition of a run's score on a dataset -- the mean of the metric over all the
// dataset's queries, pooled over its parts -- where lmk compare and the workbench's Compare had it
// and the stored 'all' rows did not (those held the mean of the parts' means, and a dataset of
// one named part had none). Recomputed from the per-query results wherever they exist.
const char* const kVersion5 = R"sql(
INSERT OR REPLACE INTO eval_results (run_id, dataset, split, metric, group_kind, group_value, value)
SELECT q.run_id, q.dataset, q.split, m.metric, 'all', '', AVG(m.value)
FROM eval_queries q JOIN query_metrics m ON m.query = q.id
GROUP BY q.run_id, q.dataset, q.split, m.metric;
)sql";

// Version 6: the process that runs a run (its pid and start time on runs.host), recorded when the
// command marks it RUNNING, so that a run whose process ended without recording how (SIGKILL,
// out of memory, a store it could not write) is told from a live one (end_lost_runs).
const char* const kVersion6 = R"sql(
ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN process_start TEXT NOT NULL DEFAULT '';
)sql";

}  // namespace

const std::vector<Migration>& migrations() {
  static const std::vector<Migration> all = {{1, kVersion1}, {2, kVersion2}, {3, kVersion3},
                                             {4, kVersion4}, {5, kVersion5}, {6, kVersion6}};
  return all;
}

int current_version() {
  return migrations().back().version;
}

}  // namespace lmk::store_schema
