#pragma once

// What the comparison panel (widgets/compare_view.h) reads: the eval runs with per-query results,
// two runs' values of one metric paired by query with their paired test
// (core/eval/comparison.h), and one query's text and target documents from its dataset folder.
// Every SQL statement of the panel is here; the functions run on a worker thread.

#include <QString>
#include <QStringList>
#include <QVector>

#include "core/eval/stats.h"

namespace lmk {
class ResultsStore;
}

namespace lmk::widgets {

// An eval run with per-query results, and what it evaluated.
struct ComparableRun {
  qint64 id = 0;
  QString label;         // "#id name" (with the experiment when the store has several)
  QString dataset_path;  // its `dataset` parameter (the folder), empty when not recorded
  QVector<QPair<QString, QString>> datasets;  // (dataset, split) with per-query results
};

// Every run with per-query results, by id; empty for a store without them.
QVector<ComparableRun> read_comparable_runs(const ResultsStore& store);

// The metrics a run has per-query values of on a dataset split, sorted.
QStringList read_query_metrics(const ResultsStore& db, qint64 run, const QString& dataset,
                               const QString& split);

// One query of both runs.
struct QueryPair {
  QString part, query_id;
  double a = 0, b = 0;
};

// Two runs on one metric, query by query.
struct RunPair {
  QVector<QueryPair> pairs;  // the shared queries, in (part, query id) order
  int only_a = 0, only_b = 0;
  bool compared = false;                    // at least 2 shared queries: comparison holds the test
  lmk::stats::PairedComparison comparison;  // a − b over the shared queries
  QString note;                             // why there is no test, or which queries were left out
};

// The per-query values of runs a and b for `metric` on `dataset` / `split`, paired, with `test`
// on them (seeded: the same numbers as lmk compare --intersection for these two runs).
RunPair read_run_pair(const ResultsStore& db, qint64 a, qint64 b, const QString& dataset,
                      const QString& split, const QString& metric, lmk::stats::PairedTest test);

// A query's text and its judged documents (most relevant first), read from the run's dataset
// folder (the part's subfolder for a dataset of several parts); error says why when it cannot.
struct QueryDetails {
  QString text;
  QStringList targets;  // "doc-id (relevance 1)"
  QString error;
};
QueryDetails read_query_details(const QString& dataset_path, const QString& part,
                                const QString& split, const QString& query_id);

}  // namespace lmk::widgets
