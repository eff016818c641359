#include "core/eval/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/util/error.h"

namespace lmk {
namespace {

constexpr double kTolerance = 1e-12;

// Graded judgments: d1 = 3, d2 = 2, d3 = 1 relevant, d4 judged not relevant.
const std::map<std::string, int> kGraded = {{"d1", 3}, {"d2", 2}, {"d3", 1}, {"d4", 0}};
// Ranked d2 (2), d4 (0), d1 (3), d3 (1); d5 is unjudged and last.
const std::vector<ScoredDoc> kRanking = {
    {"d1", 0.7f}, {"d3", 0.6f}, {"d5", 0.1f}, {"d2", 0.9f}, {"d4", 0.8f}};

std::vector<std::string> ids(const std::vector<ScoredDoc>& ranking) {
  std::vector<std::string> result;
  for (const ScoredDoc& doc : ranking) result.push_back(doc.doc_id);
  return result;
}

TEST(SortRankingTest, ScoreDescendingThenDocumentIdDescendingAsTrecEval) {
  // form_res_rels.c comp_sim_docno: equal sims -> strcmp(p2->docno, p1->docno).
  std::vector<ScoredDoc> ranking = {
      {"d10", 0.5f}, {"a", 0.1f}, {"d9", 0.5f}, {"d2", 0.7f}, {"D9", 0.5f}};
  sort_ranking(ranking);
  // "d9" > "d10" > "D9" byte-wise ('9' > '1', 'd' > 'D').
  EXPECT_EQ(ids(ranking), (std::vector<std::string>{"d2", "d9", "d10", "D9", "a"}));
}

TEST(QueryMetricsTest, NdcgUsesLinearGainsAndLog2RankPlusOneDiscount) {
  const MetricValues values = query_metrics(kGraded, kRanking, {3, 5});
  // DCG@3  = 2/log2(2) + 0/log2(3) + 3/log2(4)  = 2 + 0 + 1.5 = 3.5
  // IDCG@3 = 3/log2(2) + 2/log2(3) + 1/log2(4)  = 3 + 1.2618595071 + 0.5 = 4.7618595071
  // NDCG@3 = 0.7350069851 (exponential gains 2^r - 1 would give 6.5 / 9.3927892 = 0.6920;
  //          the old log2(rank) discount 3.8927892 / 5.6309298 = 0.6913)
  EXPECT_NEAR(values.at("ndcg_at_3"), 3.5 / (3 + 2 / std::log2(3.0) + 0.5), kTolerance);
  EXPECT_NEAR(values.at("ndcg_at_3"), 0.7350069851388743, kTolerance);
  // DCG@5 = 3.5 + 1/log2(5) (d3 at rank 4) + 0 (d5 unjudged) = 3.9306765581
  // IDCG@5 = IDCG@3: only three documents have a gain.  NDCG@5 = 0.8254499219
  EXPECT_NEAR(values.at("ndcg_at_5"), 0.8254499218587348, kTolerance);
}

TEST(QueryMetricsTest, PrecisionRecallMapAndMrrAtCutoffs) {
  const MetricValues values = query_metrics(kGraded, kRanking, {1, 3, 5, 10});
  // Relevant in rank order: d2 (rank 1), d1 (rank 3), d3 (rank 4); 3 relevant in the qrels.
  EXPECT_NEAR(values.at("precision_at_1"), 1.0, kTolerance);
  EXPECT_NEAR(values.at("precision_at_3"), 2.0 / 3, kTolerance);
  EXPECT_NEAR(values.at("precision_at_5"), 3.0 / 5, kTolerance);
  // P@10 with 5 retrieved: the denominator stays 10 (m_P.c).
  EXPECT_NEAR(values.at("precision_at_10"), 3.0 / 10, kTolerance);
  // More relevant documents (3) than k: recall@1 = 1/3, recall@3 = 2/3.
  EXPECT_NEAR(values.at("recall_at_1"), 1.0 / 3, kTolerance);
  EXPECT_NEAR(values.at("recall_at_3"), 2.0 / 3, kTolerance);
  EXPECT_NEAR(values.at("recall_at_5"), 1.0, kTolerance);
  // MAP@1 = (1/1) / 3: divided by all 3 relevant in the qrels, not by min(k, 3) = 1.
  EXPECT_NEAR(values.at("map_at_1"), 1.0 / 3, kTolerance);
  // MAP@3 = (1/1 + 2/3) / 3 = 0.5556: divided by all 3 relevant, not by those retrieved (2).
  EXPECT_NEAR(values.at("map_at_3"), (1.0 + 2.0 / 3) / 3, kTolerance);
  // MAP@5 = (1/1 + 2/3 + 3/4) / 3 = 0.8056
  EXPECT_NEAR(values.at("map_at_5"), (1.0 + 2.0 / 3 + 3.0 / 4) / 3, kTolerance);
  EXPECT_NEAR(values.at("mrr_at_1"), 1.0, kTolerance);
  EXPECT_EQ(values.size(), 4u * 5u);
}

TEST(QueryMetricsTest, MrrCountsOnlyTheFirstRelevantWithinTheCutoff) {
  const std::map<std::string, int> relevant = {{"r", 1}, {"s", 2}};
  const std::vector<ScoredDoc> ranking = {
      {"a", 0.9f}, {"b", 0.8f}, {"c", 0.7f}, {"r", 0.6f}, {"s", 0.5f}};
  const MetricValues values = query_metrics(relevant, ranking, {3, 4, 5});
  EXPECT_EQ(values.at("mrr_at_3"), 0.0);  // first relevant at rank 4
  EXPECT_NEAR(values.at("mrr_at_4"), 0.25, kTolerance);
  EXPECT_NEAR(values.at("mrr_at_5"), 0.25, kTolerance);  // not 1/4 + 1/5
}

TEST(QueryMetricsTest, TiesAreBrokenByDescendingDocumentId) {
  // "b" and "a" score the same: trec_eval ranks "b" first, so the relevant "a" is at rank 2.
  const std::map<std::string, int> relevant = {{"a", 1}};
  const MetricValues values = query_metrics(relevant, {{"a", 0.5f}, {"b", 0.5f}}, {1, 2});
  EXPECT_EQ(values.at("precision_at_1"), 0.0);
  EXPECT_EQ(values.at("ndcg_at_1"), 0.0);
  EXPECT_NEAR(values.at("mrr_at_2"), 0.5, kTolerance);
  EXPECT_NEAR(values.at("ndcg_at_2"), 1 / std::log2(3.0), kTolerance);  // 0.6309
}

TEST(QueryMetricsTest, NegativeAndZeroJudgmentsAreNotRelevant) {
  // -1 (trec_eval: in the pool but unjudged) and 0 neither count nor enter the ideal ranking.
  const std::map<std::string, int> relevant = {{"a", -1}, {"b", 0}, {"c", 1}};
  const MetricValues values = query_metrics(relevant, {{"a", 3}, {"b", 2}, {"c", 1}}, {3});
  EXPECT_NEAR(values.at("ndcg_at_3"), (1 / std::log2(4.0)) / 1.0, kTolerance);  // 0.5
  EXPECT_NEAR(values.at("recall_at_3"), 1.0, kTolerance);
  EXPECT_NEAR(values.at("map_at_3"), 1.0 / 3, kTolerance);
}

TEST(QueryMetricsTest, NoRelevantDocumentGivesZeros) {
  const MetricValues values = query_metrics({{"a", 0}}, {{"a", 1}}, {1});
  for (const auto& [name, value] : values) EXPECT_EQ(value, 0.0) << name;
}

TEST(QueryMetricsTest, RejectsBadCutoffsDuplicatesAndNaN) {
  EXPECT_THROW(query_metrics(kGraded, kRanking, {}), InputError);
  EXPECT_THROW(query_metrics(kGraded, kRanking, {0}), InputError);
  EXPECT_THROW(query_metrics(kGraded, kRanking, {5, 5}), InputError);
  EXPECT_THROW(query_metrics(kGraded, {{"a", 1}, {"a", 0.5f}}, {1}), InputError);
  EXPECT_THROW(query_metrics(kGraded, {{"a", std::numeric_limits<float>::quiet_NaN()}}, {1}),
               InputError);
}

// m_ndcg_cut.c, transcribed loop for loop (rel_levels counts per relevance value), as an
// independent check of the prefix sums on random graded rankings.
double trec_ndcg_cut(const std::map<std::string, int>& relevant, std::vector<ScoredDoc> ranking,
                     long cutoff) {
  sort_ranking(ranking);
  std::vector<long> rel_levels(4, 0);
  for (const auto& entry : relevant) rel_levels[entry.second]++;
  long num_rel_levels = 0;
  for (long level = 0; level < 4; ++level)
    if (rel_levels[level]) num_rel_levels = level + 1;
  double sum = 0, value = 0;
  long i = 0;
  for (; i < long(ranking.size()) && i < cutoff; i++) {
    auto judged = relevant.find(ranking[i].doc_id);
    double gain = judged == relevant.end() ? -1 : judged->second;
    if (gain > 0) sum += gain / std::log2(double(i + 2));
  }
  value = sum;
  long cur_lvl = num_rel_levels - 1, lvl_count = 0;
  double ideal_dcg = 0;
  for (i = 0; i < cutoff; i++) {
    lvl_count++;
    while (cur_lvl > 0 && lvl_count > rel_levels[cur_lvl]) {
      cur_lvl--;
      lvl_count = 1;
    }
    if (cur_lvl <= 0) break;
    ideal_dcg += double(cur_lvl) / std::log2(double(i + 2));
  }
  return ideal_dcg > 0 ? value / ideal_dcg : value;
}

TEST(QueryMetricsTest, NdcgMatchesATranscriptionOfTrecEvalOnRandomRankings) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::map<std::string, int> relevant;
    std::vector<ScoredDoc> ranking;
    for (int d = 0; d < 30; ++d) {
      const std::string id = "doc" + std::to_string(d);
      if (random() % 2) relevant[id] = int(random() % 4);
      // Few distinct scores, so ties are common.
      if (random() % 3) ranking.push_back({id, float(random() % 5)});
    }
    const MetricValues values = query_metrics(relevant, ranking, {1, 3, 10, 40});
    for (int k : {1, 3, 10, 40})
      EXPECT_NEAR(values.at("ndcg_at_" + std::to_string(k)), trec_ndcg_cut(relevant, ranking, k),
                  kTolerance)
          << "trial " << trial << " k " << k;
  }
}

TEST(EvaluateTest, AveragesOverQueriesWithARelevantDocumentAndGroupsThem) {
  const Qrels qrels = {
      {"q1", {{"a", 1}}},            // found at rank 1
      {"q2", {{"a", 1}, {"b", 1}}},  // found at rank 2 only
      {"q3", {{"x", 2}}},            // absent from the run: zeros
      {"q4", {{"a", 0}}},            // nothing relevant: not evaluated
  };
  const RunResults run = {
      {"q1", {{"a", 0.9f}, {"b", 0.1f}}},
      {"q2", {{"c", 0.9f}, {"b", 0.8f}}},
      {"q4", {{"a", 0.9f}}},
      {"q9", {{"a", 0.9f}}},  // no qrels: ignored
  };
  const Evaluation evaluation =
      evaluate(qrels, run, {1, 2}, {{"q1", "short"}, {"q2", "long"}, {"q3", "long"}});
  EXPECT_EQ(evaluation.overall.queries, 3u);
  EXPECT_EQ(evaluation.queries_without_results, 1u);
  EXPECT_EQ(evaluation.queries_without_relevant, 1u);
  EXPECT_EQ(evaluation.queries_without_qrels, 1u);
  ASSERT_EQ(evaluation.per_query.size(), 3u);
  EXPECT_EQ(evaluation.per_query.count("q4"), 0u);

  // Per query MRR@2: q1 1, q2 1/2, q3 0 -> mean 0.5. Recall@2: q1 1, q2 1/2, q3 0 -> 0.5.
  EXPECT_NEAR(evaluation.overall.values.at("mrr_at_2"), 0.5, kTolerance);
  EXPECT_NEAR(evaluation.overall.values.at("recall_at_2"), 0.5, kTolerance);
  // P@1: q1 1, q2 0, q3 0 -> 1/3.
  EXPECT_NEAR(evaluation.overall.values.at("precision_at_1"), 1.0 / 3, kTolerance);
  // NDCG@2 of q2: DCG = 1/log2(3) = 0.6309; IDCG = 1 + 1/log2(3) = 1.6309 -> 0.3869.
  const double q2_ndcg = (1 / std::log2(3.0)) / (1 + 1 / std::log2(3.0));
  EXPECT_NEAR(evaluation.per_query.at("q2").at("ndcg_at_2"), q2_ndcg, kTolerance);
  EXPECT_NEAR(evaluation.overall.values.at("ndcg_at_2"), (1 + q2_ndcg + 0) / 3, kTolerance);

  ASSERT_EQ(evaluation.groups.size(), 2u);
  EXPECT_EQ(evaluation.groups.at("short").queries, 1u);
  EXPECT_EQ(evaluation.groups.at("long").queries, 2u);
  EXPECT_NEAR(evaluation.groups.at("short").values.at("mrr_at_2"), 1.0, kTolerance);
  EXPECT_NEAR(evaluation.groups.at("long").values.at("mrr_at_2"), 0.25, kTolerance);  // (1/2+0)/2
  EXPECT_NEAR(evaluation.groups.at("long").values.at("ndcg_at_2"), q2_ndcg / 2, kTolerance);
}

TEST(EvaluateTest, DefaultCutoffsAndErrors) {
  const Evaluation evaluation = evaluate({{"q", {{"a", 1}}}}, {{"q", {{"a", 1.0f}}}});
  for (const char* name : {"ndcg_at_1", "map_at_3", "recall_at_5", "precision_at_10", "mrr_at_100"})
    EXPECT_EQ(evaluation.overall.values.count(name), 1u) << name;
  EXPECT_NEAR(evaluation.overall.values.at("precision_at_100"), 0.01, kTolerance);

  EXPECT_THROW(evaluate({{"q", {{"a", 0}}}}, {{"q", {{"a", 1.0f}}}}), InputError);
  try {
    evaluate({{"q7", {{"a", 1}}}}, {{"q7", {{"a", 1.0f}, {"a", 0.5f}}}});
    ADD_FAILURE() << "duplicate document accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("q7"), std::string::npos) << e.what();
  }
}

TEST(PositionBucketTest, TenPercentBucketsWithOneInTheLast) {
  EXPECT_EQ(position_bucket(0.0), "0-10%");
  EXPECT_EQ(position_bucket(0.05), "0-10%");
  EXPECT_EQ(position_bucket(0.1), "10-20%");
  EXPECT_EQ(position_bucket(0.5), "50-60%");
  EXPECT_EQ(position_bucket(0.95), "90-100%");
  EXPECT_EQ(position_bucket(1.0), "90-100%");
  EXPECT_EQ(position_bucket(0.5, 3), "33.3-66.7%");
  EXPECT_EQ(position_bucket(0.2, 4), "0-25%");
  EXPECT_THROW(position_bucket(-0.1), InputError);
  EXPECT_THROW(position_bucket(1.5), InputError);
  EXPECT_THROW(position_bucket(std::nan("")), InputError);
  EXPECT_THROW(position_bucket(0.5, 0), InputError);
}

}  // namespace
}  // namespace lmk
