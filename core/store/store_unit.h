#pragma once

// What the results store's units (core/store/store_runs.h, store_metrics.h, store_evaluations.h,
// store_queries.h, store_attention.h, store_jobs.h) have in common: each is a set of the store's
// tables with what reads and writes them, holds no state, and reaches the one SQLite connection
// of the ResultsStore it is part of (core/store/results_store.h) through these.

#include <string>

struct sqlite3;

namespace lmk {

class StoreUnit {
 public:
  virtual ~StoreUnit() = default;

 protected:
  // The store's connection, and its file (for messages).
  virtual sqlite3* connection() const = 0;
  virtual const std::string& file() const = 0;
};

}  // namespace lmk
