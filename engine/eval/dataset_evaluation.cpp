#include "engine/eval/dataset_evaluation.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>

#include "core/util/error.h"
#include "core/util/text_table.h"
#include "engine/eval/attention_profile.h"
#include "engine/eval/classify.h"

namespace lmk {

namespace {

namespace fs = std::filesystem;

// A TREC run file's lines for one part's rankings (qid Q0 docid rank score tag), the best first
// in trec_eval's order; a part's queries are named PART/QID so the parts of a dataset stay apart.
std::string trec_run_lines(const RunResults& run, const std::string& part, size_t depth,
                           const std::string& tag) {
  std::string lines;
  for (const auto& [query_id, ranking] : run) {
    std::vector<ScoredDoc> sorted = ranking;
    sort_ranking(sorted);
    const std::string qid = part.empty() ? query_id : part + "/" + query_id;
    for (size_t rank = 0; rank < std::min(depth, sorted.size()); ++rank) {
      char score[32];
      std::snprintf(score, sizeof score, "%.9g", static_cast<double>(sorted[rank].score));
      lines += qid + " Q0 " + sorted[rank].doc_id + " " + std::to_string(rank + 1) + " " + score +
               " " + tag + "\n";
    }
  }
  return lines;
}

// The judgments in TREC qrels form (qid 0 docid relevance), queries named as trec_run_lines does.
std::string trec_qrels_lines(const Qrels& qrels, const std::string& part) {
  std::string lines;
  for (const auto& [query_id, judged] : qrels) {
    const std::string qid = part.empty() ? query_id : part + "/" + query_id;
    for (const auto& [doc_id, relevance] : judged)
      lines += qid + " 0 " + doc_id + " " + std::to_string(relevance) + "\n";
  }
  return lines;
}

// The mean attention profile of the pooling tokens over `texts` (the last layer, mean over
// heads), as the store's rows of one part.
std::vector<AttentionProfileRow> mean_attention_profile(
    const LoadedModel& model, const Tokenizer& tokenizer, const std::vector<std::string>& texts,
    const EncodeOptions& encode, const PoolingPlan& plan, const std::string& dataset,
    const std::string& group, int bins) {
  std::vector<double> mean(static_cast<size_t>(bins), 0.0);
  for (const AttentionProfile& profile :
       attention_profiles(model, tokenizer, texts, encode, plan, {})) {
    const auto binned = profile.binned(bins);
    for (size_t b = 0; b < binned.size(); ++b)
      mean[b] += binned[b] / static_cast<double>(texts.size());
  }
  std::vector<AttentionProfileRow> rows;
  for (int b = 0; b < bins; ++b)
    rows.push_back({dataset, group, model.encoder->config().num_layers - 1, -1, b,
                    static_cast<double>(b) / bins, static_cast<double>(b + 1) / bins,
                    mean[static_cast<size_t>(b)]});
  return rows;
}

// Means by evidence position pooled over the parts, weighted by queries: bucket -> metric ->
// (sum of means x queries, queries).
using PositionSums = std::map<std::string, std::map<std::string, std::pair<double, size_t>>>;

// One part's rows, its overall means and (a named part) its means by evidence position; adds the
// part's position means to `by_position`.
void add_part_rows(const SplitEvaluation& result, const DatasetInfo& dataset,
                   const std::string& split, const DatasetPart& part, std::vector<EvalResult>& rows,
                   PositionSums& by_position) {
  const std::string group_kind = part.name.empty()           ? "all"
                                 : dataset.part_kind.empty() ? "part"
                                                             : dataset.part_kind;
  for (const auto& [metric, value] : result.metrics.overall.values)
    rows.push_back({dataset.task, split, metric, value, group_kind, part.name});
  for (const auto& [bucket, means] : result.metrics.groups) {
    for (const auto& [metric, value] : means.values) {
      auto& [sum, count] = by_position[bucket][metric];
      sum += value * static_cast<double>(means.queries);
      count += means.queries;
      if (!part.name.empty()) {
        rows.push_back({dataset.task, split, metric, value, "position@" + part.name, bucket});
      }
    }
  }
}

// The report's line of one part: its size, what was left out, and its main scores.
std::string part_summary(const SplitEvaluation& result, const DatasetInfo& dataset,
                         size_t min_target_length) {
  // A metric of the part's overall means (0 when the cutoffs asked for leave it out).
  auto overall_value = [&](const std::string& metric) {
    const auto found = result.metrics.overall.values.find(metric);
    return found == result.metrics.overall.values.end() ? 0.0 : found->second;
  };
  std::string line = std::to_string(result.documents) + " documents, " +
                     std::to_string(result.queries) + " queries";
  if (result.short_targets > 0)
    line += " (" + std::to_string(result.short_targets) + " left out: target shorter than " +
            std::to_string(min_target_length) + " tokens)";
  if (result.empty_documents + result.empty_queries > 0)
    line += " (" + std::to_string(result.empty_documents) + " documents and " +
            std::to_string(result.empty_queries) +
            " queries without text, embedded as the empty text)";
  return line + ", " + dataset.main_score + " " + format_metric(overall_value(dataset.main_score)) +
         ", ndcg_at_10 " + format_metric(overall_value("ndcg_at_10")) + ", recall_at_10 " +
         format_metric(overall_value("recall_at_10"));
}

// The dataset's rows over all its parts and the report's lines of them. Its score is the mean over
// all its queries, pooled over the parts (mean_over_queries, core/eval/metrics.h; not the mean of
// the parts' means, which weighs a part of 8 queries as one of 31); a dataset of one unnamed part
// has it already. Its means by evidence position are the parts' pooled.
void add_dataset_rows(const DatasetInfo& dataset, const std::string& split,
                      const PositionSums& by_position, DatasetEvaluation& outcome,
                      std::ostream& report) {
  std::vector<const MetricValues*> all_queries;
  for (const QueryResult& query : outcome.queries) all_queries.push_back(&query.metrics);
  const MetricMeans overall = mean_over_queries(all_queries);
  const bool one_unnamed_part = dataset.parts.size() == 1 && dataset.parts[0].name.empty();
  if (!one_unnamed_part) {
    for (const auto& [metric, mean] : overall.values)
      outcome.rows.push_back({dataset.task, split, metric, mean, "all", ""});
  }
  report << "  overall (all " << overall.queries << " queries";
  if (!one_unnamed_part)
    report << ", pooled over the " << (dataset.part_kind.empty() ? "" : dataset.part_kind + " ")
           << "parts";
  report << "): " << dataset.main_score << " "
         << format_metric(overall.values.count(dataset.main_score)
                              ? overall.values.at(dataset.main_score)
                              : 0.0)
         << "\n  by evidence position (" << dataset.main_score << ", queries):\n";
  for (const auto& [bucket, metrics] : by_position) {
    for (const auto& [metric, sum_count] : metrics) {
      const double mean =
          sum_count.second ? sum_count.first / static_cast<double>(sum_count.second) : 0.0;
      outcome.rows.push_back({dataset.task, split, metric, mean, "position", bucket});
      if (metric == dataset.main_score)
        report << "    " << bucket << "  " << format_metric(mean) << "  (" << sum_count.second
               << ")\n";
    }
  }
}

DatasetEvaluation evaluate_retrieval_dataset(const LoadedModel& model, const Tokenizer& tokenizer,
                                             const DatasetInfo& dataset,
                                             const DatasetEvaluationOptions& evaluation,
                                             const PoolingPlan& plan, std::ostream& report) {
  RetrievalOptions options = evaluation.retrieval;
  if (evaluation.ranking_depth > 0) options.run_depth = evaluation.ranking_depth;
  const std::string split = evaluation.split.empty() ? dataset.split : evaluation.split;
  const int granularity = plan.granularity;
  DatasetEvaluation outcome;
  RetrievalTiming total;
  size_t short_targets = 0;
  report << "dataset " << dataset.task << " (" << dataset.parts.size() << " part"
         << (dataset.parts.size() == 1 ? "" : "s") << "), split " << split << ", pooling "
         << pooling_name(options.encode.pooling)
         << (granularity > 0 ? " g=" + std::to_string(granularity) : "") << "\n";
  PositionSums by_position;
  for (const DatasetPart& part : dataset.parts) {
    RetrievalSplit data = read_beir(part.path, split);
    if (evaluation.ranking_depth > 0) outcome.trec_qrels += trec_qrels_lines(data.qrels, part.name);
    // The documents whose attention profile is computed, taken before the corpus moves on.
    std::vector<std::string> profile_texts;
    for (size_t d = 0; d < std::min(evaluation.attention_docs, data.corpus.size()); ++d) {
      const Document& doc = data.corpus[d];
      profile_texts.push_back(document_input(doc.title, doc.text));
    }
    const SplitEvaluation result =
        evaluate_retrieval(model, tokenizer, std::move(data), options, plan);
    short_targets += result.short_targets;
    const std::string part_label =
        part.name.empty() ? std::string("all") : dataset.part_kind + " " + part.name;
    if (result.metrics.per_query.empty()) {
      report << "  " << part_label << ": left out, every target shorter than "
             << options.min_target_length << " tokens (" << result.short_targets << " queries)\n";
      continue;
    }
    for (const auto& [query_id, metrics] : result.metrics.per_query) {
      const QueryFacts& facts = result.facts.at(query_id);
      outcome.queries.push_back({dataset.task, split, part.name, query_id, facts.evidence_position,
                                 facts.target_length, metrics});
    }
    if (evaluation.ranking_depth > 0)
      outcome.trec_run +=
          trec_run_lines(result.run, part.name, options.run_depth, evaluation.run_tag);
    total.encode_documents += result.timing.encode_documents;
    total.encode_queries += result.timing.encode_queries;
    total.search += result.timing.search;
    total.metrics += result.timing.metrics;
    add_part_rows(result, dataset, split, part, outcome.rows, by_position);
    report << "  " << part_label << ": " << part_summary(result, dataset, options.min_target_length)
           << "\n";
    if (!profile_texts.empty()) {
      // Where the pooling tokens look, on the first documents of the part.
      const auto profile = mean_attention_profile(
          model, tokenizer, profile_texts, options.encode, plan, dataset.task,
          part.name.empty() ? "all" : part.name, evaluation.attention_bins);
      outcome.attention.insert(outcome.attention.end(), profile.begin(), profile.end());
    }
  }
  if (outcome.queries.empty())
    throw InputError("every query's target is shorter than " +
                     std::to_string(options.min_target_length) + " tokens (" +
                     std::to_string(short_targets) + " queries): nothing to score");
  add_dataset_rows(dataset, split, by_position, outcome, report);
  outcome.timings = {{"queries_short_target", static_cast<double>(short_targets)},
                     {"encode_documents_seconds", total.encode_documents},
                     {"encode_queries_seconds", total.encode_queries},
                     {"search_seconds", total.search},
                     {"metrics_seconds", total.metrics}};
  outcome.timing_text = "encode documents " + format_metric(total.encode_documents) + ", queries " +
                        format_metric(total.encode_queries) + ", search " +
                        format_metric(total.search) + ", metrics " + format_metric(total.metrics);
  return outcome;
}

DatasetEvaluation evaluate_classification_dataset(const LoadedModel& model,
                                                  const Tokenizer& tokenizer,
                                                  const DatasetInfo& dataset,
                                                  const EncodeOptions& encode,
                                                  const PoolingPlan& plan, std::ostream& report) {
  const LabelledTexts train = read_labelled((fs::path(dataset.dir) / "train.jsonl").string());
  const LabelledTexts test = read_labelled((fs::path(dataset.dir) / "test.jsonl").string());
  const ClassificationEvaluation result =
      evaluate_classification(model, tokenizer, train, test, encode, plan);
  DatasetEvaluation outcome;
  outcome.rows = {{dataset.task, "test", "accuracy", result.report.accuracy, "all", ""},
                  {dataset.task, "test", "f1", result.report.macro_f1, "all", ""}};
  for (const auto& [label, f1] : result.report.f1_per_class)
    outcome.rows.push_back(
        {dataset.task, "test", "f1", f1, "label", result.labels[static_cast<size_t>(label)]});
  // Accuracy is the mean of one 0 / 1 per test text: those are its per-query results (macro-F1
  // is not a mean over texts and has none).
  for (size_t i = 0; i < result.truth.size(); ++i)
    outcome.queries.push_back({dataset.task,
                               "test",
                               "",
                               test.ids[i],
                               std::nullopt,
                               std::nullopt,
                               {{"accuracy", result.truth[i] == result.predicted[i] ? 1.0 : 0.0}}});
  outcome.timings = {{"encode_seconds", result.encode_seconds},
                     {"fit_seconds", result.fit_seconds}};
  outcome.timing_text = "encode " + format_metric(result.encode_seconds) + ", fit " +
                        format_metric(result.fit_seconds);
  report << "classification " << dataset.task << ": " << result.train << " train, " << result.test
         << " test texts, " << result.labels.size() << " labels: accuracy "
         << format_metric(result.report.accuracy) << ", macro-F1 "
         << format_metric(result.report.macro_f1) << "\n";
  return outcome;
}

}  // namespace

DatasetEvaluation evaluate_dataset(const LoadedModel& model, const Tokenizer& tokenizer,
                                   const DatasetInfo& dataset,
                                   const DatasetEvaluationOptions& options, const PoolingPlan& plan,
                                   std::ostream& report) {
  if (dataset.type == "classification")
    return evaluate_classification_dataset(model, tokenizer, dataset, options.retrieval.encode,
                                           plan, report);
  return evaluate_retrieval_dataset(model, tokenizer, dataset, options, plan, report);
}

std::string trec_tag(const std::string& name) {
  std::string tag = name;
  for (char& c : tag)
    if (std::isspace(static_cast<unsigned char>(c))) c = '_';
  return tag.empty() ? "lmk" : tag;
}

}  // namespace lmk
