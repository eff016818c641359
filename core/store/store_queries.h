#pragma once

// A unit of the results store (core/store/results_store.h). The per-query results of evaluations
// (eval_queries, query_metrics): what intervals and paired tests are computed from.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/store/store_unit.h"

namespace lmk {

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

class QueryResults : public virtual StoreUnit {
 public:
  // Adds per-query results: the queries of a (dataset, split, part) replace any stored for it.
  void add_query_results(int64_t run_id, const std::vector<QueryResult>& rows);
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
};

}  // namespace lmk
