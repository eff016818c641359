#pragma once

// Retrieval evaluation of an encoder: encode the corpus and the queries (length-bucketed
// batches, progress with ETA), exact top-k by chunked matrix products (on the encoding device),
// metrics with trec_eval's definitions, broken down by evidence position. Under a launcher
// several processes share the encoding: each encodes its share, all gather the embeddings.

#include <ATen/core/Tensor.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/data/formats.h"
#include "core/eval/metrics.h"
#include "engine/embed/embed.h"

namespace lmk {

class DistributedContext;  // engine/dist/distributed.h

struct RetrievalOptions {
  EncodeOptions encode;  // pooling, granularity, lengths, device
  std::vector<int> ks = {1, 3, 5, 10, 100};
  std::string query_prefix, document_prefix;  // prepended to every query / document text
  size_t query_max_length = 0;                // 0: encode.max_length
  int position_buckets = 10;                  // evidence-position groups ("0-10%", ...)
  // Documents kept per query in SplitEvaluation::run: the largest k, or run_depth when deeper.
  size_t run_depth = 0;
  // Queries whose target has fewer tokens are left out of the metrics (and counted): at a length
  // L, a column of long-document retrieval then holds only targets at least L long.
  size_t min_target_length = 0;
  bool show_progress = true;  // bars on stderr while encoding
  // Data parallel evaluation (processes of one launcher): each encodes every world_size-th text
  // of the corpus and the queries in length order, the embeddings are gathered, and every
  // process then holds the whole split's results. Null or a world of one: this process alone.
  const DistributedContext* dist = nullptr;
};

// Seconds spent in each stage of one split's evaluation.
struct RetrievalTiming {
  double encode_documents = 0, encode_queries = 0, search = 0, metrics = 0;
};

// What is known of a query besides its metrics, for per-query results.
struct QueryFacts {
  std::optional<double> evidence_position;  // the query's evidence_position field (0..1)
  std::optional<int64_t> target_length;     // content tokens of its most relevant document
};

struct SplitEvaluation {
  Evaluation metrics;                       // overall, per query, per evidence-position bucket
  std::map<std::string, QueryFacts> facts;  // by query id, for every query of the split
  RunResults run;  // each query's ranking (max(largest k, run_depth) documents)
  RetrievalTiming timing;
  size_t documents = 0, queries = 0;
  // Documents with neither title nor text, and empty queries: embedded as the empty text
  // (document_input), counted so the report says so.
  size_t empty_documents = 0, empty_queries = 0;
  // Queries left out: target shorter than min_target_length (when that is every query, metrics
  // is empty: no query was scored).
  size_t short_targets = 0;
};

// Exact top-k by dot product (cosine for normalized embeddings): queries [Q, H] against
// documents [D, H], D processed in chunks of `chunk` rows so memory stays Q × chunk.
RunResults exact_search(const at::Tensor& queries, const std::vector<std::string>& query_ids,
                        const at::Tensor& documents, const std::vector<std::string>& document_ids,
                        size_t top_k, int64_t chunk = 8192);

// Evaluates one split: documents are "title text" (or text), queries their text; a query's
// evidence_position extra field (0..1) puts it in a position bucket. A query's target is its
// most relevant document (the first of equal ones), whose length is counted in the
// tokenizer's content tokens as encoded (prefix and title included, before truncation). The split
// is taken by value and its texts are moved out, so a large corpus is never held twice (pass
// std::move).
// `plan`: the command's plan of options.encode over the model (plan_pooling), passed down.
SplitEvaluation evaluate_retrieval(const LoadedModel& model, const Tokenizer& tokenizer,
                                   RetrievalSplit split, const RetrievalOptions& options,
                                   const PoolingPlan& plan);
// The same with plan_pooling(options.encode, model).
SplitEvaluation evaluate_retrieval(const LoadedModel& model, const Tokenizer& tokenizer,
                                   RetrievalSplit split, const RetrievalOptions& options);

}  // namespace lmk
