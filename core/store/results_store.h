#pragma once

// The results store: one SQLite file holding experiments, runs (config, status, host), their
// parameters, metric series, evaluation results (per query too), attention profiles,
// document-length histograms, artifacts and jobs. Schema and migrations: core/store/schema.h;
// tables: docs/USER-GUIDE.md ("Results store"). A ResultsStore is one connection to the file;
// what it reads and writes is declared by unit, each with its own header, source and test:
// store_runs (experiments, runs, params, artifacts), store_metrics (metric series),
// store_evaluations (evaluation results), store_queries (per-query results), store_attention
// (attention profiles, length histograms) and store_jobs (jobs).
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
#include <memory>
#include <optional>
#include <string>

#include "core/store/store_attention.h"
#include "core/store/store_evaluations.h"
#include "core/store/store_jobs.h"
#include "core/store/store_metrics.h"
#include "core/store/store_queries.h"
#include "core/store/store_runs.h"

struct sqlite3;

namespace lmk {

class ResultsStore final : public StoredRuns,
                           public MetricSeries,
                           public EvaluationResults,
                           public QueryResults,
                           public AttentionProfiles,
                           public StoredJobs {
 public:
  enum class OpenMode {
    Create,    // creates the file and the schema when absent (writers)
    Existing,  // the file must exist and be a results store (readers)
  };

  // Opens (or creates) the store at path, upgrading an older schema in one transaction.
  // Throws InputError naming the file when it is not a results store, has a newer schema, or
  // (Existing) does not exist; the file is then left as it was.
  explicit ResultsStore(const std::string& path, OpenMode mode = OpenMode::Create);
  ~ResultsStore() override;
  ResultsStore(ResultsStore&&) noexcept;
  ResultsStore& operator=(ResultsStore&&) noexcept;

  const std::string& path() const { return path_; }
  // The schema version of the open file (always the current one after opening).
  int schema_version() const;

 protected:
  sqlite3* connection() const override;
  const std::string& file() const override;

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
