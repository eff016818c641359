#pragma once

// A unit of the results store (core/store/results_store.h). The runs: experiments, runs (config,
// status, host, process), their flattened parameters and artifacts, and the selections and lists of
// runs the CLI and the workbench read.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/store/run_selection.h"
#include "core/store/runs_table.h"
#include "core/store/store_unit.h"

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

// What identifies a run in a plot of several: its experiment, name, pooling (the run's pooling
// parameter, else its training's, else "unknown") and evaluated length (max_length; 0: none).
struct RunLabel {
  int64_t run_id = 0;
  std::string experiment, run_name, pooling;
  int64_t max_length = 0;
};

// A run in a list of runs (its id, experiment, name, kind and status).
struct RunSummary {
  int64_t id = 0;
  std::string experiment, name, kind, status;
};

struct Artifact {
  std::string kind, path, created_at;
};

class StoredRuns : public virtual StoreUnit {
 public:
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
  // Every parameter key of any run, sorted.
  std::vector<std::string> param_keys() const;
  // The training lengths of training and pretraining runs (train.passage_max_length,
  // train.max_length) with the run's name, by length then run id.
  std::vector<std::pair<int64_t, std::string>> training_lengths() const;
  std::vector<Artifact> artifacts(int64_t run_id) const;
  // Rows [offset, offset + limit) of the runs table's query (core/store/runs_table.h), in its
  // order; fewer at its end. Each page is one statement: rows written between two pages can
  // shift the later pages by as many rows (the workbench reloads the table when it refreshes).
  std::vector<RunsTableRow> runs_table_page(const SqlQuery& query, int64_t offset,
                                            int64_t limit) const;
};

}  // namespace lmk
