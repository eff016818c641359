#include "engine/eval/retrieval.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "core/util/error.h"
#include "core/util/progress.h"
#include "engine/dist/distributed.h"

namespace lmk {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

at::Tensor encode_with_progress(const LoadedModel& model, const Tokenizer& tokenizer,
                                const std::vector<std::string>& texts, const EncodeOptions& options,
                                const PoolingPlan& plan, const std::string& label,
                                bool show_progress) {
  if (!show_progress) return encode_texts(model, tokenizer, texts, options, plan);
  Progress progress(label, texts.size(), "texts");
  at::Tensor out = encode_texts(model, tokenizer, texts, options, plan,
                                [&](size_t done) { progress.update(done); });
  progress.finish();
  return out;
}

// The texts' embeddings, rows in the texts' order. With other processes (dist), this one
// encodes its share: the texts sorted by length (characters, longest first) dealt round-robin,
// so every process gets a like mix of lengths; the shares, padded to one row count, are gathered
// and put back in order. Fewer texts than processes: each encodes them all.
at::Tensor encode_shared(const LoadedModel& model, const Tokenizer& tokenizer,
                         const std::vector<std::string>& texts, const EncodeOptions& options,
                         const PoolingPlan& plan, const std::string& label, bool show_progress,
                         const DistributedContext* dist) {
  const size_t world = dist ? static_cast<size_t>(dist->world_size()) : 1;
  if (world == 1 || texts.size() < world)
    return encode_with_progress(model, tokenizer, texts, options, plan, label, show_progress);
  const size_t rank = static_cast<size_t>(dist->rank());
  std::vector<size_t> order(texts.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return texts[a].size() > texts[b].size(); });
  std::vector<std::string> share;
  for (size_t i = rank; i < order.size(); i += world) share.push_back(texts[order[i]]);
  const int64_t rows = static_cast<int64_t>((texts.size() + world - 1) / world);
  const at::Tensor mine =
      encode_with_progress(model, tokenizer, share, options, plan,
                           label + " (this process's share)", show_progress && dist->is_main());
  at::Tensor padded = at::zeros({rows, mine.size(1)}, mine.options());
  padded.narrow(0, 0, mine.size(0)).copy_(mine);
  const at::Tensor all = dist->all_gather(padded);  // [world * rows, H]
  // Process p's j-th row is text order[j * world + p].
  std::vector<int64_t> source(texts.size());
  for (size_t i = 0; i < order.size(); ++i)
    source[order[i]] = static_cast<int64_t>((i % world) * static_cast<size_t>(rows) + i / world);
  return all.index_select(0, at::tensor(source, at::kLong));
}

}  // namespace

RunResults exact_search(const at::Tensor& queries, const std::vector<std::string>& query_ids,
                        const at::Tensor& documents, const std::vector<std::string>& document_ids,
                        size_t top_k, int64_t chunk) {
  TORCH_CHECK(queries.dim() == 2 && documents.dim() == 2 && queries.size(1) == documents.size(1),
              "exact_search: [Q, H] and [D, H] expected");
  TORCH_CHECK(static_cast<size_t>(queries.size(0)) == query_ids.size() &&
                  static_cast<size_t>(documents.size(0)) == document_ids.size(),
              "exact_search: one id per row expected");
  const int64_t Q = queries.size(0), D = documents.size(0);
  const int64_t k = std::min<int64_t>(static_cast<int64_t>(top_k), D);
  at::NoGradGuard no_grad;
  // Running best k per query: scores [Q, k] and document rows [Q, k].
  at::Tensor best_scores = at::zeros({Q, 0}, queries.options()),
             best_rows = at::zeros({Q, 0}, queries.options().dtype(at::kLong));
  for (int64_t start = 0; start < D; start += chunk) {
    const int64_t n = std::min(chunk, D - start);
    const at::Tensor scores = at::matmul(queries, documents.narrow(0, start, n).t());  // [Q, n]
    const auto [top_scores, top_rows] = scores.topk(std::min(k, n), 1);
    const at::Tensor merged_scores = at::cat({best_scores, top_scores}, 1);
    const at::Tensor merged_rows = at::cat({best_rows, top_rows + start}, 1);
    const auto [kept_scores, kept_at] =
        merged_scores.topk(std::min<int64_t>(k, merged_scores.size(1)), 1);
    best_scores = kept_scores;
    best_rows = merged_rows.gather(1, kept_at);
  }
  const at::Tensor scores_cpu = best_scores.to(at::kCPU, at::kFloat).contiguous(),
                   rows_cpu = best_rows.to(at::kCPU).contiguous();
  const auto scores = scores_cpu.accessor<float, 2>();
  const auto rows = rows_cpu.accessor<int64_t, 2>();
  RunResults run;
  for (int64_t q = 0; q < Q; ++q) {
    auto& ranking = run[query_ids[static_cast<size_t>(q)]];
    for (int64_t r = 0; r < scores.size(1); ++r)
      ranking.push_back({document_ids[static_cast<size_t>(rows[q][r])], scores[q][r]});
  }
  return run;
}

SplitEvaluation evaluate_retrieval(const LoadedModel& model, const Tokenizer& tokenizer,
                                   RetrievalSplit split, const RetrievalOptions& options) {
  return evaluate_retrieval(model, tokenizer, std::move(split), options,
                            plan_pooling(options.encode, model));
}

SplitEvaluation evaluate_retrieval(const LoadedModel& model, const Tokenizer& tokenizer,
                                   RetrievalSplit split, const RetrievalOptions& options,
                                   const PoolingPlan& plan) {
  if (split.corpus.empty()) throw InputError("retrieval evaluation: the corpus is empty");
  if (split.queries.empty()) throw InputError("retrieval evaluation: no queries");
  SplitEvaluation out;
  out.documents = split.corpus.size();
  out.queries = split.queries.size();
  std::vector<std::string> document_texts, document_ids, query_texts, query_ids;
  for (Document& d : split.corpus) {
    std::string input = document_input(d.title, std::move(d.text));
    out.empty_documents += input.empty();
    document_texts.push_back(options.document_prefix.empty() ? std::move(input)
                                                             : options.document_prefix + input);
    d.text.clear();
    d.text.shrink_to_fit();
    document_ids.push_back(std::move(d.id));
  }
  std::map<std::string, std::string> bucket_of_query;
  for (const Query& q : split.queries) {
    out.empty_queries += q.text.empty();
    query_texts.push_back(options.query_prefix + q.text);
    query_ids.push_back(q.id);
    QueryFacts& facts = out.facts[q.id];
    if (q.extra.is_object() && q.extra.contains("evidence_position") &&
        q.extra["evidence_position"].is_number()) {
      facts.evidence_position = q.extra["evidence_position"].get<double>();
      bucket_of_query[q.id] = position_bucket(*facts.evidence_position, options.position_buckets);
    }
  }
  // Target lengths: one tokenization per target document (a few per query, not the corpus).
  {
    std::map<std::string, size_t> row_of_document;
    for (size_t i = 0; i < document_ids.size(); ++i) row_of_document.emplace(document_ids[i], i);
    std::map<size_t, int64_t> tokens_of_row;
    for (auto& [query_id, facts] : out.facts) {
      const auto judged = split.qrels.find(query_id);
      if (judged == split.qrels.end()) continue;
      const std::string* target = nullptr;
      int best = 0;
      for (const auto& [doc_id, relevance] : judged->second) {
        if (relevance > best) best = relevance, target = &doc_id;
      }
      const auto row = target ? row_of_document.find(*target) : row_of_document.end();
      if (row == row_of_document.end()) continue;
      auto [counted, fresh] = tokens_of_row.emplace(row->second, 0);
      if (fresh)
        counted->second =
            static_cast<int64_t>(tokenizer.encode(document_texts[row->second]).ids.size());
      facts.target_length = counted->second;
    }
  }
  auto start = std::chrono::steady_clock::now();
  at::Tensor documents = encode_shared(model, tokenizer, document_texts, options.encode, plan,
                                       "documents", options.show_progress, options.dist);
  out.timing.encode_documents = seconds_since(start);
  start = std::chrono::steady_clock::now();
  EncodeOptions query_options = options.encode;
  if (options.query_max_length > 0) query_options.max_length = options.query_max_length;
  at::Tensor queries = encode_shared(model, tokenizer, query_texts, query_options, plan, "queries",
                                     options.show_progress, options.dist);
  out.timing.encode_queries = seconds_since(start);
  start = std::chrono::steady_clock::now();
  // The search runs where the encoding did (a GPU's matrix products when there is one).
  if (options.encode.device != "cpu") {
    documents = documents.to(c10::Device(options.encode.device));
    queries = queries.to(c10::Device(options.encode.device));
  }
  const int max_k =
      options.ks.empty() ? 10 : *std::max_element(options.ks.begin(), options.ks.end());
  out.run = exact_search(queries, query_ids, documents, document_ids,
                         std::max(static_cast<size_t>(max_k), options.run_depth));
  out.timing.search = seconds_since(start);
  start = std::chrono::steady_clock::now();
  Qrels evaluated = std::move(split.qrels);
  if (options.min_target_length > 0) {
    for (auto it = evaluated.begin(); it != evaluated.end();) {
      const auto facts = out.facts.find(it->first);
      const bool short_target =
          facts != out.facts.end() && facts->second.target_length &&
          static_cast<size_t>(*facts->second.target_length) < options.min_target_length;
      out.short_targets += short_target;
      it = short_target ? evaluated.erase(it) : std::next(it);
    }
    if (evaluated.empty()) return out;  // nothing to score: every target too short
  }
  out.metrics = evaluate(evaluated, out.run, options.ks, bucket_of_query);
  out.timing.metrics = seconds_since(start);
  return out;
}

}  // namespace lmk
