#pragma once

// The results store: one SQLite file holding experiments, runs (config, status, host), their
// parameters, metric series, evaluation results (per query too), attention profiles,
// document-length histograms, artifacts and jobs. Schema and migrations: core/store/schema.h;
// tables: docs/USER-GUIDE.md ("Results store").
//
// Concurrency: the file is in WAL mode, so readers never wait for writers and writers queue
// (busy timeout 10 s, and BEGIN IMMEDIATE retried while SQLITE_BUSY). One ResultsStore is one
// connection and is not shared: each thread and each process opens its own, and a child
// process made by fork() opens a new one rather than use its parent's. WAL needs the file on a
// local disk (not NFS).
//
// Errors: a file that is not a results store (not SQLite, another program's database, a newer
// schema, corrupt) is an InputError naming the file, raised before anything is written to it.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/store/run_selection.h"
#include "core/store/runs_table.h"

struct sqlite3;

namespace lmk {

enum class RunStatus { Scheduled, Running, Finished, Failed, Killed };

// "SCHEDULED", "RUNNING", "FINISHED", "FAILED", "KILLED".
std::string run_status_name(RunStatus status);
// Parses a status name (any case); throws InputError naming `where` otherwise.
RunStatus parse_run_status(const std::string& text, const std::string& where);
// Finished, failed and killed runs are over.
bool is_terminal(RunStatus status);

// A run config flattened to (key, value) pairs: nested objects join keys with "." ("a.b.c"),
// arrays index them ("a[0]"); strings are stored as they are, other scalars as JSON text
// ("32", "0.1", "true", "null"); empty objects and arrays as "{}" and "[]". Sorted by key.
std::vector<std::pair<std::string, std::string>> flatten_params(const nlohmann::json& config);

// The keys whose values are not the same in every run's flattened config (a key missing from
// some differs from any value, "" included): the one config diff of lmk results / compare, the
// workbench's diff tab and the resume check of training. Sorted.
std::set<std::string> differing_keys(const std::vector<std::map<std::string, std::string>>& runs);

struct Experiment {
  int64_t id = 0;
  std::string name, description, created_at;
};

// What create_run records; the run starts SCHEDULED.
struct NewRun {
  std::string name;
  std::string kind = "eval";                         // "eval", "train", "pretrain", ...
  nlohmann::json config = nlohmann::json::object();  // stored as text and flattened to params
  std::optional<int64_t> parent_run_id;
};

struct RunRecord {
  int64_t id = 0;
  int64_t experiment_id = 0;
  std::string experiment;  // the experiment's name
  std::string name, kind;
  nlohmann::json config;
  RunStatus status = RunStatus::Scheduled;
  std::string created_at, started_at, ended_at;  // ISO-8601 UTC; empty until it happens
  std::string host, device, code_revision;
  std::optional<int64_t> parent_run_id;
  std::string error_text;
  // The process that runs it on `host` (start_run): its pid (0: not recorded) and start time.
  int64_t pid = 0;
  std::string process_start;
};

// Which runs list_runs returns; empty fields match anything, all given conditions must hold.
struct RunFilter {
  std::string experiment;  // experiment name
  std::optional<RunStatus> status;
  std::vector<std::pair<std::string, std::string>> params;  // flattened key = value
  std::string name_contains;
  std::string kind;
};

// One point of a metric series (value NaN is kept).
struct Metric {
  std::string key;
  int64_t step = 0;
  double value = 0;
  std::string time;  // ISO-8601 UTC of logging
};

// One evaluation number. group_kind "all" is the whole split (group_value empty); other kinds
// slice it, e.g. "length" / "4k-8k" or "position" / "0.25".
struct EvalResult {
  std::string dataset, split, metric;
  double value = 0;
  std::string group_kind = "all", group_value;
};

// One query of an evaluation: its metric values and, where the task knows them, where its
// evidence sits and how long its target document is. part names the dataset part the query
// belongs to (a context length such as "4096" of a LongEmbed-style folder; "" for a dataset of
// one part): a query is identified by (dataset, split, part, query_id).
struct QueryResult {
  std::string dataset, split, part, query_id;
  std::optional<double> evidence_position;  // 0..1: where in the target document the evidence is
  std::optional<int64_t> target_length;     // tokens of the target document (before truncation)
  std::map<std::string, double> metrics;    // metric -> value
};

// One metric of one query, as paired tests and intervals read it.
struct QueryScore {
  std::string part, query_id;
  double value = 0;
  std::optional<double> evidence_position;
  std::optional<int64_t> target_length;
};

// What identifies a run in a plot of several: its experiment, name, pooling (the run's pooling
// parameter, else its training's, else "unknown") and evaluated length (max_length; 0: none).
struct RunLabel {
  int64_t run_id = 0;
  std::string experiment, run_name, pooling;
  int64_t max_length = 0;
};

// One evaluation result of a run, for the curves over length and position.
struct RunResultPoint {
  RunLabel run;
  std::string group_kind, group_value;
  double value = 0;
};

// One bin of one run's attention profile, for the attention-by-position plot.
struct RunAttentionBin {
  RunLabel run;
  std::string length_group;
  double bin_start = 0, bin_end = 0, weight = 0;
};

// A dataset split evaluated in the store, and the first run that has results on it.
struct StoredBenchmark {
  std::string dataset, split;
  int64_t first_run = 0;
};
struct StoredBenchmarks {
  std::vector<StoredBenchmark> benchmarks;
  std::vector<std::string> metrics;
};

// One result of a run with the parameters the paper's table groups runs by.
struct PivotSourceRow {
  int64_t run_id = 0;
  std::string experiment, run_name, pooling, granularity, max_length;
  EvalResult result;
};

// One bin of the attention of the pooling tokens over positions, for documents of one length
// (group); bin_start / bin_end are positions or fractions of the length.
struct AttentionProfileRow {
  std::string dataset, length_group;
  int64_t layer = 0;
  int64_t head = -1;  // -1: the mean over heads
  int64_t bin = 0;
  double bin_start = 0, bin_end = 0, weight = 0;
};

// Token counts of a dataset's texts under one tokenizer: bins [lo, hi) and percentiles.
struct LengthHistogram {
  struct Bin {
    int64_t lo = 0, hi = 0, count = 0;
  };
  std::string dataset, tokenizer;
  std::vector<Bin> bins;
  std::vector<std::pair<double, double>> percentiles;  // (percentile 0-100, length)
};

struct Artifact {
  std::string kind, path, created_at;
};

// How an executor runs a run (core/jobs/executor.h): one per run of a submitted study step.
struct JobRecord {
  int64_t run_id = 0;
  std::string executor;  // "local" or "slurm"
  std::string study_dir, step, step_key;
  std::vector<std::string> command;  // argv
  std::string log_path;
  std::vector<std::string> outputs;  // files or folders the step must leave
  std::vector<int64_t> depends_on;   // runs that must finish first
  std::string external_id;           // the process id (local) or Slurm job id, once started
  std::string process_start;         // local: the process's start time (tells a reused pid)
  int64_t attempts = 0;              // starts (a Slurm requeue is one more)
  bool cancel_requested = false;
  bool ended = false;  // the executor is done with it (its run has its final status)
  int64_t progress_done = -1, progress_total = -1;  // -1: not known
  double eta_s = -1;                                // seconds; -1: not known
  std::string progress_text;                        // the latest progress line
  std::string updated_at;                           // ISO-8601 UTC of the last update
};

// A run the job monitor watches: a job's run, or a run that runs without a job (a command
// started by hand with --db).
struct MonitoredRun {
  int64_t run_id = 0;
  std::string run_name, kind, status, error_text, experiment;
  std::optional<JobRecord> job;
  std::string since;  // without a job: when the run started (else was created)
};

// A run in a list of runs (its id, experiment, name, kind and status).
struct RunSummary {
  int64_t id = 0;
  std::string experiment, name, kind, status;
};

// One metric's points of a run after a step, thinned to about max_points (every k-th and the
// last); NaN values left out.
struct MetricCurve {
  std::string key;
  std::vector<int64_t> steps;
  std::vector<double> values;
  std::vector<double> seconds;  // per point, since the run started (its first metric when it
                                // has no start); NaN when unknown
  int64_t last_step = -1;       // the last step read, NaN or not
};

// What a job was submitted from: the study config and profile its submission recorded.
struct JobSubmission {
  std::string study_dir, executor, study_config, profile;
  std::string error;  // why there is none
};

class ResultsStore {
 public:
  enum class OpenMode {
    Create,    // creates the file and the schema when absent (writers)
    Existing,  // the file must exist and be a results store (readers)
  };

  // Opens (or creates) the store at path, upgrading an older schema in one transaction.
  // Throws InputError naming the file when it is not a results store, has a newer schema, or
  // (Existing) does not exist; the file is then left as it was.
  explicit ResultsStore(const std::string& path, OpenMode mode = OpenMode::Create);
  ~ResultsStore();
  ResultsStore(ResultsStore&&) noexcept;
  ResultsStore& operator=(ResultsStore&&) noexcept;

  const std::string& path() const { return path_; }
  // The schema version of the open file (always the current one after opening).
  int schema_version() const;

  // Returns the id of the experiment called name, creating it when absent.
  int64_t get_or_create_experiment(const std::string& name, const std::string& description = "");
  std::vector<Experiment> experiments() const;

  // Records a SCHEDULED run and its flattened params; returns its id.
  int64_t create_run(int64_t experiment_id, const NewRun& run);
  // Replaces the run's config and its flattened params (one transaction).
  void set_run_config(int64_t run_id, const nlohmann::json& config);
  // Sets the status; RUNNING stamps started_at (once), terminal statuses stamp ended_at.
  void set_run_status(int64_t run_id, RunStatus status, const std::string& error_text = "");
  // Records where the run executes.
  void set_run_info(int64_t run_id, const std::string& host, const std::string& device,
                    const std::string& code_revision);
  // What a command does as it starts its run's work: RUNNING, with this host, this process (pid
  // and start time), the device and the code revision, in one transaction.
  void start_run(int64_t run_id, const std::string& device, const std::string& code_revision);
  // Ends as FAILED every RUNNING run of this host whose recorded process is gone (or is another
  // process under its pid): it ended without recording how (SIGKILL, out of memory, a store it
  // could not write), and would otherwise stay RUNNING for ever. Returns how many; lmk results
  // and every poll of the jobs (lmk jobs, the workbench's monitor) call it.
  size_t end_lost_runs();

  // Appends one step of metrics and updates each key's latest value (the highest step).
  void log_metrics(int64_t run_id, int64_t step,
                   const std::vector<std::pair<std::string, double>>& values);
  // Adds evaluation results; a row with the same run, dataset, split, metric and group
  // replaces the stored one.
  void add_eval_results(int64_t run_id, const std::vector<EvalResult>& rows);
  // Adds per-query results: the queries of a (dataset, split, part) replace any stored for it.
  void add_query_results(int64_t run_id, const std::vector<QueryResult>& rows);
  // Adds attention-profile bins (same key: replaced).
  void add_attention_profile(int64_t run_id, const std::vector<AttentionProfileRow>& rows);
  // Stores the histogram of (dataset, tokenizer), replacing an earlier one.
  void add_length_histogram(const LengthHistogram& histogram);
  void add_artifact(int64_t run_id, const std::string& kind, const std::string& path);

  // Runs matching the filter, oldest first.
  std::vector<RunRecord> list_runs(const RunFilter& filter = {}) const;
  // The runs a filter text selects (core/store/run_selection.h): their number, and their ids in
  // id order.
  int64_t count_runs(const RunSelection& selection) const;
  std::vector<int64_t> selected_runs(const RunSelection& selection) const;
  // The run with this id; throws InputError naming the file when there is none.
  RunRecord get_run(int64_t run_id) const;
  std::map<std::string, std::string> run_params(int64_t run_id) const;
  // The value of each metric key at its highest step, by key.
  std::vector<Metric> latest_metrics(int64_t run_id) const;
  // One metric's points in step order.
  std::vector<Metric> metric_series(int64_t run_id, const std::string& key) const;
  // The run's evaluation results (of one dataset when given), ordered by dataset, split,
  // metric, group.
  std::vector<EvalResult> eval_results(int64_t run_id, const std::string& dataset = "") const;
  // Whether the run has per-query results (runs evaluated before schema 4 have none).
  bool has_query_results(int64_t run_id) const;
  // The run's per-query results (of one dataset when given), by dataset, split, part, query.
  std::vector<QueryResult> query_results(int64_t run_id, const std::string& dataset = "") const;
  // One metric's per-query values of a run on a dataset split, by part and query id; empty when
  // the run has none.
  std::vector<QueryScore> query_scores(int64_t run_id, const std::string& dataset,
                                       const std::string& split, const std::string& metric) const;
  // The same for several runs at once (every run with such results when `runs` is empty), by
  // run id: what the workbench's curves, maps and pivot read.
  std::map<int64_t, std::vector<QueryScore>> query_scores(
      const std::string& dataset, const std::string& split, const std::string& metric,
      const std::vector<int64_t>& runs = {}) const;
  // The (run, dataset, split) of every stored set of per-query results, sorted.
  std::vector<std::tuple<int64_t, std::string, std::string>> query_result_sets() const;
  // The metrics stored per query for a run's dataset split (those of its first query), sorted.
  std::vector<std::string> query_metric_names(int64_t run_id, const std::string& dataset,
                                              const std::string& split) const;
  // The (dataset, split, metric) triples of per-query results that have parts and evidence
  // positions (the needle maps' sources), sorted.
  std::vector<std::tuple<std::string, std::string, std::string>> positioned_query_metrics() const;
  // One metric of one query of a run, from the part `prefer_part` when the query is in several
  // parts, else from any; nullopt when the run stores none.
  std::optional<double> query_metric(int64_t run_id, const std::string& query_id,
                                     const std::string& metric,
                                     const std::string& prefer_part = "") const;
  std::vector<AttentionProfileRow> attention_profiles(int64_t run_id,
                                                      const std::string& dataset = "") const;

  // Reads across runs, for views that plot several runs at once (core/store/run_reads.cpp).
  // The (dataset, split, metric) triples of stored evaluation results, sorted.
  std::vector<std::tuple<std::string, std::string, std::string>> eval_result_metrics() const;
  // One metric's results of every run on a dataset split, of the groups a curve reads (all,
  // length, position, position@PART), by run id.
  std::vector<RunResultPoint> result_points(const std::string& dataset, const std::string& split,
                                            const std::string& metric) const;
  // The (dataset, layer, head, length group) of stored attention profiles, sorted.
  std::vector<std::tuple<std::string, int64_t, int64_t, std::string>> attention_profile_keys()
      const;
  // Every run's attention profile bins of a dataset, layer and head, by run, group and bin.
  std::vector<RunAttentionBin> attention_profile_bins(const std::string& dataset, int64_t layer,
                                                      int64_t head) const;
  // The model folders (the runs' model parameter) of the runs with attention profiles of dataset.
  std::vector<std::string> attention_profile_models(const std::string& dataset) const;
  // One metric's whole-split and per-length results of the runs `selection` selects (and of
  // `runs` when not empty), each with its run's experiment and name and its pooling,
  // granularity and max_length parameters as stored ("" when absent): what the paper's table
  // is built of (core/eval/store_comparison.h, pivot_inputs). By run id.
  std::vector<PivotSourceRow> pivot_source_rows(const std::string& metric,
                                                const RunSelection& selection = {},
                                                const std::vector<int64_t>& runs = {}) const;
  // Every parameter key of any run, sorted.
  std::vector<std::string> param_keys() const;
  // The (dataset, split) pairs with evaluation results, in the order their first run was
  // written, and every metric of any result, sorted.
  StoredBenchmarks benchmarks() const;
  // The training lengths of training and pretraining runs (train.passage_max_length,
  // train.max_length) with the run's name, by length then run id.
  std::vector<std::pair<int64_t, std::string>> training_lengths() const;
  // Histograms of one dataset when given, else all; by dataset and tokenizer.
  std::vector<LengthHistogram> length_histograms(const std::string& dataset = "") const;
  std::vector<Artifact> artifacts(int64_t run_id) const;

  // Jobs. add_job records the job of an existing run; update_job rewrites every field but
  // run_id (and stamps updated_at).
  void add_job(const JobRecord& job);
  void update_job(const JobRecord& job);
  // Single-column changes that several processes (a queue, lmk cancel, lmk jobs, a Slurm
  // poller) may race for; each applies only to a job not ended and says whether it did.
  // Claims the end of the job (ended = 1): exactly one caller gets true and ends its run.
  bool claim_job_end(int64_t run_id);
  // Records a start (its process or Slurm job, attempts + 1) unless it was cancelled meanwhile.
  bool mark_job_started(int64_t run_id, const std::string& external_id,
                        const std::string& process_start);
  bool request_job_cancel(int64_t run_id);
  void set_job_progress(int64_t run_id, int64_t done, int64_t total, double eta_s,
                        const std::string& text);
  // The runs the job monitor shows: every job's run (only jobs not ended unless
  // include_ended) and the runs RUNNING without a job, by run id.
  std::vector<MonitoredRun> monitored_runs(bool include_ended) const;
  // A job's submission: the study config and profile of its run's config, else of the nearest
  // run of the same study folder that records them (a training or evaluation step replaces its
  // run's config with its own).
  JobSubmission job_submission(int64_t run_id) const;
  // The runs that logged metric `key`, by id, and every metric key those runs logged, sorted.
  std::vector<RunSummary> runs_logging(const std::string& key) const;
  std::vector<std::string> metric_keys_of_runs_logging(const std::string& key) const;
  // The run's curves of each (key, after step), each after its own step, in one read
  // transaction (one snapshot of the store); keys without points after their step are left out.
  std::vector<MetricCurve> metric_curves(int64_t run_id,
                                         const std::vector<std::pair<std::string, int64_t>>& keys,
                                         int64_t max_points) const;
  // Rows [offset, offset + limit) of the runs table's query (core/store/runs_table.h), in its
  // order; fewer at its end. Each page is one statement: rows written between two pages can
  // shift the later pages by as many rows (the workbench reloads the table when it refreshes).
  std::vector<RunsTableRow> runs_table_page(const SqlQuery& query, int64_t offset,
                                            int64_t limit) const;
  // The run's job, if it has one.
  std::optional<JobRecord> job(int64_t run_id) const;
  // Jobs by run id; of one study folder when given; only those not ended when `unfinished`.
  std::vector<JobRecord> jobs(const std::string& study_dir = "", bool unfinished = false) const;

 private:
  std::string path_;
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db_;
};

// A job system creates the run a command records into and names it in $LMK_RUN_ID: the
// command's own run is then that one instead of a new one. Returns its id, nullopt when the
// variable is unset or empty; a value that is not a positive integer is an InputError naming
// LMK_RUN_ID.
std::optional<int64_t> run_id_from_environment();
// Makes the pre-created run `run_id` the run of a command of `kind`: it must exist and be of
// that kind (else an InputError naming LMK_RUN_ID, the id and the file); its name stays, its
// config and params become `config`.
void adopt_run(ResultsStore& store, int64_t run_id, const std::string& kind,
               const nlohmann::json& config);

}  // namespace lmk
