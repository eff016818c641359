#pragma once

// A model evaluated on a dataset folder (core/data/dataset_dir.h), as lmk eval, the workbench and
// studies run it: retrieval over every part of the folder, or classification. It gives the rows
// the results store keeps — per part, pooled over the parts (weighted by queries), per evidence
// position (over all parts and within each), per query — the attention profiles of the first
// documents of each part, and on request the ranking and judgments as TREC text. A summary is
// written to `report` as the parts finish.

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/data/dataset_dir.h"
#include "core/store/results_store.h"
#include "engine/eval/retrieval.h"

namespace lmk {

struct DatasetEvaluationOptions {
  RetrievalOptions retrieval;   // encoding, cutoffs, min_target_length, dist
  std::string split;            // qrels split; "" for the dataset's (dataset.json "split")
  size_t attention_docs = 0;    // documents per part whose attention profile is computed
  int attention_bins = 20;      // bins of each profile
  size_t ranking_depth = 0;     // > 0: keep each query's top documents as a TREC run
  std::string run_tag = "lmk";  // the TREC run's tag column (trec_tag)
};

struct DatasetEvaluation {
  std::vector<EvalResult> rows;
  std::vector<QueryResult> queries;
  std::vector<AttentionProfileRow> attention;
  // TREC run (qid Q0 docid rank score tag; a named part's queries as PART/QID) and qrels
  // (qid 0 docid relevance); empty unless ranking_depth > 0.
  std::string trec_run, trec_qrels;
  std::vector<std::pair<std::string, double>> timings;  // stage -> seconds (and counts)
  std::string timing_text;                              // the same in words
};

// Evaluates the dataset with `plan`, lmk eval's plan of options.retrieval.encode over the model
// (plan_pooling: the one the run records). Throws InputError when no query can be scored (every
// target shorter than retrieval.min_target_length) or a classification file is malformed
// (naming the file and line).
DatasetEvaluation evaluate_dataset(const LoadedModel& model, const Tokenizer& tokenizer,
                                   const DatasetInfo& dataset,
                                   const DatasetEvaluationOptions& options, const PoolingPlan& plan,
                                   std::ostream& report);

// A run name as a TREC run tag (the last column): whitespace becomes '_'; "" is "lmk".
std::string trec_tag(const std::string& name);

// Documents per query in a saved TREC run.
constexpr size_t kTrecRunDepth = 100;

}  // namespace lmk
