#include "core/eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>
#include <unordered_set>

#include "core/util/error.h"

// Definitions, as read in usnistgov/trec_eval (the code pytrec_eval runs):
// - form_res_rels.c: the run is sorted with qsort and comp_sim_docno: sim descending, then
//   strcmp(p2->docno, p1->docno), i.e. equal scores in DESCENDING document id order.
//   pytrec_eval (src/pytrec_eval.cpp) pre-sorts ties ascending, but every measure re-sorts
//   through te_form_res_rels, so the descending order is what it computes with. A document in
//   the run twice is an error there ("duplicate docs").
// - m_ndcg_cut.c: gain = the qrels value when > 0 (linear), discount log2(i + 2) for 0-based
//   i; the ideal ranking is the qrels' values >= 1 sorted descending, cut at the same k; 0 when
//   the ideal is 0.
// - m_map_cut.c: sum over relevant retrieved docs within k of (relevant so far / rank), divided
//   by the number of relevant docs in the qrels (not min(k, that)).
// - m_recall.c: relevant within k / relevant in the qrels. m_P.c: relevant within k / k, also
//   when fewer than k were retrieved. "Relevant" is rel >= relevance_level, which is 1 by
//   default in trec_eval and pytrec_eval.
// - BEIR beir/retrieval/custom_metrics.py mrr(): 1 / rank of the first doc with rel > 0 in the
//   top k, else 0. (BEIR orders ties there by Python's stable sort of the run dict; we use the
//   trec_eval order for every metric.)

namespace lmk {
namespace {

bool is_relevant(int relevance) {
  return relevance >= 1;
}

void sort_in_trec_order(std::vector<ScoredDoc>& ranking) {
  std::sort(ranking.begin(), ranking.end(), [](const ScoredDoc& a, const ScoredDoc& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.doc_id > b.doc_id;  // std::string compares bytes unsigned, as strcmp does
  });
}

void check_cutoffs(const std::vector<int>& ks) {
  if (ks.empty()) throw input_error("cutoffs", "no cutoff given");
  std::set<int> seen;
  for (int k : ks) {
    if (k <= 0) throw input_error("cutoffs", "a cutoff must be positive, got " + std::to_string(k));
    if (!seen.insert(k).second)
      throw input_error("cutoffs", "duplicate cutoff " + std::to_string(k));
  }
}

void check_scores(const std::vector<ScoredDoc>& ranking, const std::string& where) {
  for (const ScoredDoc& doc : ranking)
    if (std::isnan(doc.score))
      throw input_error(where, "document '" + doc.doc_id + "' has a NaN score");
}

void check_unique_documents(const std::vector<ScoredDoc>& ranking, const std::string& where) {
  std::unordered_set<std::string_view> seen;
  seen.reserve(ranking.size());
  for (const ScoredDoc& doc : ranking)
    if (!seen.insert(doc.doc_id).second)
      throw input_error(where, "document '" + doc.doc_id + "' is listed twice");
}

std::string metric_name(const char* measure, int k) {
  return std::string(measure) + "_at_" + std::to_string(k);
}

// query_metrics with the name of the query for errors; ks are already checked.
MetricValues metrics_of(const std::map<std::string, int>& relevant, std::vector<ScoredDoc> ranking,
                        const std::vector<int>& ks, const std::string& where) {
  check_scores(ranking, where);
  check_unique_documents(ranking, where);
  sort_in_trec_order(ranking);

  const size_t max_k = static_cast<size_t>(*std::max_element(ks.begin(), ks.end()));
  const size_t depth = std::min(ranking.size(), max_k);

  std::vector<int> ideal_gains;
  for (const auto& [doc_id, relevance] : relevant)
    if (relevance > 0) ideal_gains.push_back(relevance);
  std::sort(ideal_gains.rbegin(), ideal_gains.rend());
  const size_t num_relevant = ideal_gains.size();

  // Prefix sums over ranks: value[r] covers the first r retrieved documents.
  std::vector<double> dcg(depth + 1, 0.0), ideal_dcg(max_k + 1, 0.0), precision_sum(depth + 1, 0.0);
  std::vector<size_t> hits(depth + 1, 0);
  size_t first_relevant_rank = 0;  // 1-based; 0: none within depth
  for (size_t i = 0; i < depth; ++i) {
    const auto judged = relevant.find(ranking[i].doc_id);
    const int relevance = judged == relevant.end() ? 0 : judged->second;
    const double discount = std::log2(static_cast<double>(i + 2));
    dcg[i + 1] = dcg[i] + (relevance > 0 ? relevance / discount : 0.0);
    hits[i + 1] = hits[i] + (is_relevant(relevance) ? 1 : 0);
    precision_sum[i + 1] =
        precision_sum[i] + (is_relevant(relevance) ? double(hits[i + 1]) / double(i + 1) : 0.0);
    if (is_relevant(relevance) && first_relevant_rank == 0) first_relevant_rank = i + 1;
  }
  for (size_t i = 0; i < max_k; ++i) {
    const double gain = i < ideal_gains.size() ? ideal_gains[i] : 0.0;
    ideal_dcg[i + 1] = ideal_dcg[i] + gain / std::log2(static_cast<double>(i + 2));
  }

  MetricValues values;
  for (int k : ks) {
    const size_t seen = std::min(static_cast<size_t>(k), depth);
    const double ideal = ideal_dcg[static_cast<size_t>(k)];
    values[metric_name("ndcg", k)] = ideal > 0 ? dcg[seen] / ideal : 0.0;
    values[metric_name("map", k)] = num_relevant ? precision_sum[seen] / double(num_relevant) : 0.0;
    values[metric_name("recall", k)] =
        num_relevant ? double(hits[seen]) / double(num_relevant) : 0.0;
    values[metric_name("precision", k)] = double(hits[seen]) / double(k);
    values[metric_name("mrr", k)] =
        first_relevant_rank != 0 && first_relevant_rank <= static_cast<size_t>(k)
            ? 1.0 / double(first_relevant_rank)
            : 0.0;
  }
  return values;
}

// "33.3" for 33.33..., "10" for 10.
std::string format_percent(double percent) {
  char text[32];
  const double rounded = std::round(percent);
  if (std::fabs(percent - rounded) < 1e-9)
    std::snprintf(text, sizeof text, "%.0f", rounded);
  else
    std::snprintf(text, sizeof text, "%.1f", percent);
  return text;
}

}  // namespace

void sort_ranking(std::vector<ScoredDoc>& ranking) {
  check_scores(ranking, "ranking");
  sort_in_trec_order(ranking);
}

MetricValues query_metrics(const std::map<std::string, int>& relevant,
                           std::vector<ScoredDoc> ranking, const std::vector<int>& ks) {
  check_cutoffs(ks);
  return metrics_of(relevant, std::move(ranking), ks, "ranking");
}

MetricMeans mean_over_queries(const std::vector<const MetricValues*>& queries) {
  MetricMeans means;
  std::map<std::string, size_t> counts;
  for (const MetricValues* values : queries) {
    for (const auto& [name, value] : *values) {
      means.values[name] += value;
      ++counts[name];
    }
  }
  for (auto& [name, value] : means.values) value /= static_cast<double>(counts[name]);
  means.queries = queries.size();
  return means;
}

Evaluation evaluate(const Qrels& qrels, const RunResults& run, const std::vector<int>& ks,
                    const std::map<std::string, std::string>& group_of_query) {
  check_cutoffs(ks);
  Evaluation evaluation;
  std::vector<const MetricValues*> overall;
  std::map<std::string, std::vector<const MetricValues*>> groups;
  for (const auto& [query_id, judged] : qrels) {
    if (std::none_of(judged.begin(), judged.end(),
                     [](const auto& entry) { return is_relevant(entry.second); })) {
      ++evaluation.queries_without_relevant;
      continue;
    }
    const auto retrieved = run.find(query_id);
    if (retrieved == run.end()) ++evaluation.queries_without_results;
    MetricValues values =
        metrics_of(judged, retrieved == run.end() ? std::vector<ScoredDoc>{} : retrieved->second,
                   ks, "run: query '" + query_id + "'");
    const MetricValues& kept =
        evaluation.per_query.emplace(query_id, std::move(values)).first->second;
    overall.push_back(&kept);
    const auto group = group_of_query.find(query_id);
    if (group != group_of_query.end()) groups[group->second].push_back(&kept);
  }
  for (const auto& entry : run)
    if (qrels.count(entry.first) == 0) ++evaluation.queries_without_qrels;
  if (overall.empty())
    throw input_error("qrels", "no query has a relevant document (relevance >= 1)");

  evaluation.overall = mean_over_queries(overall);
  for (const auto& [label, queries] : groups)
    evaluation.groups.emplace(label, mean_over_queries(queries));
  return evaluation;
}

std::string position_bucket(double relative_position, int buckets) {
  if (buckets < 1)
    throw input_error("position buckets", "need at least one, got " + std::to_string(buckets));
  if (!(relative_position >= 0.0 && relative_position <= 1.0))
    throw input_error(
        "position", "a relative position lies in [0, 1], got " + std::to_string(relative_position));
  const int bucket =
      std::min(static_cast<int>(std::floor(relative_position * buckets)), buckets - 1);
  return format_percent(100.0 * bucket / buckets) + "-" +
         format_percent(100.0 * (bucket + 1) / buckets) + "%";
}

}  // namespace lmk
