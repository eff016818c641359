#pragma once

// Retrieval metrics with the definitions of trec_eval / pytrec_eval as BEIR and MTEB call them
// (ndcg_cut, map_cut, recall, P) plus BEIR's MRR@k, per query, averaged, and per group of
// queries (length split, evidence position, ...).

#include <map>
#include <string>
#include <vector>

#include "core/data/qrels.h"

namespace lmk {

struct ScoredDoc {
  std::string doc_id;
  float score = 0;
};

// query id -> retrieved documents, in any order.
using RunResults = std::map<std::string, std::vector<ScoredDoc>>;

// metric name ("ndcg_at_10", "map_at_10", "recall_at_10", "precision_at_10", "mrr_at_10")
// -> value.
using MetricValues = std::map<std::string, double>;

// Sorts into trec_eval's order: score descending, equal scores by document id in descending
// byte order. Throws InputError on a NaN score.
void sort_ranking(std::vector<ScoredDoc>& ranking);

// The metrics of one query at every cutoff in ks (positive, no duplicates). relevant is the
// query's qrels; documents not in it are not relevant. Throws InputError on a bad cutoff, a
// NaN score or a document listed twice.
MetricValues query_metrics(const std::map<std::string, int>& relevant,
                           std::vector<ScoredDoc> ranking, const std::vector<int>& ks);

struct MetricMeans {
  MetricValues values;  // metric -> mean over the queries
  size_t queries = 0;
};

// A score over queries: each metric's mean over every query given (a metric some query lacks is
// averaged over those that have it). A run's score on a dataset is this over all its evaluated
// queries, pooled over the dataset's parts -- not the mean of the parts' means: evaluate() takes
// it per part, lmk eval's dataset rows over the parts (engine/eval/dataset_evaluation.cpp), and
// a comparison's cell is the same mean of one metric's per-query values (summarize_scores,
// core/eval/comparison.h). Schema version 5 (core/store/schema.cpp) recomputed stored rows by
// this definition in SQL.
MetricMeans mean_over_queries(const std::vector<const MetricValues*>& queries);

struct Evaluation {
  MetricMeans overall;
  std::map<std::string, MetricValues> per_query;  // the evaluated queries
  std::map<std::string, MetricMeans> groups;      // group label -> means over its queries
  size_t queries_without_results = 0;             // evaluated, absent from the run: all metrics 0
  size_t queries_without_relevant = 0;  // in the qrels with no document >= 1: not evaluated
  size_t queries_without_qrels = 0;     // in the run only: ignored
};

// Evaluates a run. The evaluated queries are those of the qrels with at least one relevant
// document (relevance >= 1); one missing from the run scores 0 everywhere. A query's group is
// group_of_query[query id]; queries without a label are in no group. The run is used as it is
// (BEIR's dropping of a document whose id equals the query id is the caller's choice). Throws
// InputError when no query can be evaluated, or as query_metrics does.
Evaluation evaluate(const Qrels& qrels, const RunResults& run,
                    const std::vector<int>& ks = {1, 3, 5, 10, 100},
                    const std::map<std::string, std::string>& group_of_query = {});

// The label of the bucket a relative position in [0, 1] falls into: "0-10%", ..., "90-100%"
// for 10 buckets (bucket b holds [b / n, (b + 1) / n); 1.0 goes into the last one).
std::string position_bucket(double relative_position, int buckets = 10);

}  // namespace lmk
