// Retrieval evaluation (engine/eval/retrieval.h): exact top-k against a brute-force ranking and a
// hand-made one; a split whose queries are their documents' texts (prefix and title included),
// so each query retrieves its document first and the metrics follow by hand; the facts kept per
// query (evidence position, target length in content tokens), the position groups, queries left
// out for short targets, and the errors of an empty split.
#include "engine/eval/retrieval.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>

#include "core/util/error.h"
#include "tests/support/explorer_tests.h"

namespace lmk {
namespace {

// The tiny encoder of the attention tests, read with mean pooling.
class RetrievalTest : public testing::ExplorerTest {
 protected:
  RetrievalOptions options() const {
    RetrievalOptions o;
    o.encode.pooling = Pooling::Mean;
    o.ks = {1, 4};
    o.show_progress = false;
    return o;
  }

  // Four documents (d1 with a title) and a query per document whose text is the document's as
  // encoded ("w900 " prefix, title, text), with the prefix added by the query prefix. Target
  // lengths in content tokens, prefix and title included: d0 1 + 6 = 7, d1 1 + 2 + 9 = 12,
  // d2 1 + 12 = 13, d3 1 + 3 = 4. q1 judges d1 (2) above d0 (1): target d1; q2 judges d2 and
  // d3 alike: target d2, the first. q0 sits at 5 % of its document, q1 at 95 %, the others
  // nowhere.
  static RetrievalSplit split() {
    RetrievalSplit s;
    s.corpus = {{"d0", "", testing::words_text(6, 0)},
                {"d1", "w100 w101", testing::words_text(9, 10)},
                {"d2", "", testing::words_text(12, 30)},
                {"d3", "", testing::words_text(3, 60)}};
    s.queries = {{"q0", s.corpus[0].text, {{"evidence_position", 0.05}}},
                 {"q1", "w100 w101 " + s.corpus[1].text, {{"evidence_position", 0.95}}},
                 {"q2", s.corpus[2].text},
                 {"q3", s.corpus[3].text}};
    s.qrels["q0"]["d0"] = 1;
    s.qrels["q1"]["d1"] = 2;
    s.qrels["q1"]["d0"] = 1;
    s.qrels["q2"]["d2"] = 1;
    s.qrels["q2"]["d3"] = 1;
    s.qrels["q3"]["d3"] = 1;
    return s;
  }
};

// exact_search against every query's documents sorted by dot product here, with a chunk smaller
// than the corpus (so the top-k is merged across chunks).
TEST(ExactSearchTest, TopKIsTheBruteForceRanking) {
  at::manual_seed(3);
  const at::Tensor queries = at::randn({7, 16});
  const at::Tensor documents = at::randn({53, 16});
  std::vector<std::string> query_ids, document_ids;
  for (int q = 0; q < 7; ++q) query_ids.push_back("q" + std::to_string(q));
  for (int d = 0; d < 53; ++d) document_ids.push_back("d" + std::to_string(d));
  const RunResults run = exact_search(queries, query_ids, documents, document_ids, 10, 8);
  ASSERT_EQ(run.size(), 7u);
  for (int q = 0; q < 7; ++q) {
    std::vector<std::pair<double, int>> scored;
    for (int d = 0; d < 53; ++d) {
      double dot = 0;
      for (int h = 0; h < 16; ++h)
        dot += static_cast<double>(queries[q][h].item<float>()) * documents[d][h].item<float>();
      scored.push_back({dot, d});
    }
    std::sort(scored.begin(), scored.end(), std::greater<>());
    std::vector<ScoredDoc> got = run.at("q" + std::to_string(q));
    sort_ranking(got);
    ASSERT_EQ(got.size(), 10u);
    for (size_t i = 0; i < 10; ++i) {
      EXPECT_EQ(got[i].doc_id, "d" + std::to_string(scored[i].second))
          << "query " << q << " rank " << i;
      EXPECT_NEAR(got[i].score, scored[i].first, 1e-4);
    }
  }
}

// Q = 2 queries against D = 3 documents in chunks of one row: q0 = (1, 0) scores a 1, b 0.5,
// c 0; q1 = (0, 1) scores a 0, b 0.5, c 2. A top_k above D keeps all D.
TEST(ExactSearchTest, HandMadeScoresAcrossChunks) {
  const at::Tensor queries = at::tensor({1.0f, 0.0f, 0.0f, 1.0f}).view({2, 2});
  const at::Tensor documents = at::tensor({1.0f, 0.0f, 0.5f, 0.5f, 0.0f, 2.0f}).view({3, 2});
  const RunResults two = exact_search(queries, {"q0", "q1"}, documents, {"a", "b", "c"}, 2, 1);
  ASSERT_EQ(two.size(), 2u);
  std::vector<ScoredDoc> q0 = two.at("q0"), q1 = two.at("q1");
  sort_ranking(q0);
  sort_ranking(q1);
  ASSERT_EQ(q0.size(), 2u);
  EXPECT_EQ(q0[0].doc_id, "a");
  EXPECT_EQ(q0[0].score, 1.0f);
  EXPECT_EQ(q0[1].doc_id, "b");
  EXPECT_EQ(q0[1].score, 0.5f);
  ASSERT_EQ(q1.size(), 2u);
  EXPECT_EQ(q1[0].doc_id, "c");
  EXPECT_EQ(q1[0].score, 2.0f);
  EXPECT_EQ(q1[1].doc_id, "b");
  EXPECT_EQ(q1[1].score, 0.5f);
  const RunResults all = exact_search(queries, {"q0", "q1"}, documents, {"a", "b", "c"}, 10);
  EXPECT_EQ(all.at("q0").size(), 3u);
  EXPECT_EQ(all.at("q1").size(), 3u);
  // One id per row.
  EXPECT_ANY_THROW(exact_search(queries, {"q0"}, documents, {"a", "b", "c"}, 2));
}

// Each query is its document's text as encoded, so it retrieves that document first: ndcg@1 is
// 1 for every query; recall@1 is 1 / (relevant documents): 1, 0.5, 0.5, 1 (mean 0.75); with
// k = 4 = D every relevant document is retrieved. The run keeps max(ks) documents per query.
TEST_F(RetrievalTest, EachQueryRetrievesItsDocumentFirst) {
  RetrievalOptions o = options();
  o.query_prefix = o.document_prefix = "w900 ";
  const SplitEvaluation e = evaluate_retrieval(model_, *tokenizer_, split(), o);
  EXPECT_EQ(e.documents, 4u);
  EXPECT_EQ(e.queries, 4u);
  EXPECT_EQ(e.short_targets, 0u);
  const std::map<std::string, std::string> first = {
      {"q0", "d0"}, {"q1", "d1"}, {"q2", "d2"}, {"q3", "d3"}};
  ASSERT_EQ(e.run.size(), 4u);
  for (const auto& [query, document] : first) {
    std::vector<ScoredDoc> ranking = e.run.at(query);
    ASSERT_EQ(ranking.size(), 4u) << query;
    sort_ranking(ranking);
    EXPECT_EQ(ranking[0].doc_id, document) << query;
    EXPECT_NEAR(ranking[0].score, 1.0, 1e-4) << "normalized embeddings of the same text";
    EXPECT_EQ(e.metrics.per_query.at(query).at("ndcg_at_1"), 1.0) << query;
    EXPECT_EQ(e.metrics.per_query.at(query).at("recall_at_4"), 1.0) << query;
  }
  EXPECT_EQ(e.metrics.per_query.at("q1").at("recall_at_1"), 0.5);
  EXPECT_EQ(e.metrics.per_query.at("q2").at("recall_at_1"), 0.5);
  EXPECT_EQ(e.metrics.overall.queries, 4u);
  EXPECT_DOUBLE_EQ(e.metrics.overall.values.at("ndcg_at_1"), 1.0);
  EXPECT_DOUBLE_EQ(e.metrics.overall.values.at("recall_at_1"), 0.75);

  // Without the query prefix the queries are other texts: d0's query no longer matches d0's
  // encoded text exactly.
  RetrievalOptions unprefixed = o;
  unprefixed.query_prefix.clear();
  unprefixed.run_depth = 2;
  unprefixed.ks = {1};
  const SplitEvaluation plain = evaluate_retrieval(model_, *tokenizer_, split(), unprefixed);
  std::vector<ScoredDoc> q0 = plain.run.at("q0");
  ASSERT_EQ(q0.size(), 2u) << "run_depth above the largest k";
  sort_ranking(q0);
  EXPECT_LT(q0[0].score, 0.99);
}

// Per query: its evidence position (when it has one) and its target's length in content tokens
// with the document prefix and title; the position buckets group only the queries with one.
TEST_F(RetrievalTest, FactsAndPositionGroupsPerQuery) {
  RetrievalOptions o = options();
  o.query_prefix = o.document_prefix = "w900 ";
  const SplitEvaluation e = evaluate_retrieval(model_, *tokenizer_, split(), o);
  ASSERT_EQ(e.facts.size(), 4u);
  EXPECT_EQ(e.facts.at("q0").evidence_position, std::optional<double>(0.05));
  EXPECT_EQ(e.facts.at("q1").evidence_position, std::optional<double>(0.95));
  EXPECT_FALSE(e.facts.at("q2").evidence_position.has_value());
  EXPECT_EQ(e.facts.at("q0").target_length, std::optional<int64_t>(7));
  EXPECT_EQ(e.facts.at("q1").target_length, std::optional<int64_t>(12));
  EXPECT_EQ(e.facts.at("q2").target_length, std::optional<int64_t>(13));
  EXPECT_EQ(e.facts.at("q3").target_length, std::optional<int64_t>(4));
  ASSERT_EQ(e.metrics.groups.size(), 2u);
  EXPECT_EQ(e.metrics.groups.at("0-10%").queries, 1u);
  EXPECT_EQ(e.metrics.groups.at("90-100%").queries, 1u);
  EXPECT_EQ(e.metrics.groups.at("90-100%").values.at("recall_at_1"), 0.5) << "q1's";
}

// Queries whose target is shorter than min_target_length are counted and left out of the
// metrics; when that is every query, nothing is scored.
TEST_F(RetrievalTest, ShortTargetsAreLeftOut) {
  RetrievalOptions o = options();
  o.query_prefix = o.document_prefix = "w900 ";
  o.min_target_length = 8;  // q0 (7) and q3 (4) are short
  const SplitEvaluation some = evaluate_retrieval(model_, *tokenizer_, split(), o);
  EXPECT_EQ(some.short_targets, 2u);
  EXPECT_EQ(some.metrics.overall.queries, 2u);
  EXPECT_EQ(some.metrics.per_query.count("q0"), 0u);
  EXPECT_EQ(some.metrics.per_query.count("q1"), 1u);
  EXPECT_EQ(some.metrics.per_query.count("q2"), 1u);
  EXPECT_EQ(some.metrics.per_query.count("q3"), 0u);
  EXPECT_DOUBLE_EQ(some.metrics.overall.values.at("recall_at_1"), 0.5);
  EXPECT_EQ(some.facts.size(), 4u) << "facts of every query";

  o.min_target_length = 100;
  const SplitEvaluation none = evaluate_retrieval(model_, *tokenizer_, split(), o);
  EXPECT_EQ(none.short_targets, 4u);
  EXPECT_EQ(none.metrics.overall.queries, 0u);
  EXPECT_TRUE(none.metrics.per_query.empty());
  EXPECT_EQ(none.run.size(), 4u);
}

// A split without documents or without queries is refused.
TEST_F(RetrievalTest, AnEmptySplitIsRefused) {
  RetrievalSplit no_corpus = split();
  no_corpus.corpus.clear();
  try {
    evaluate_retrieval(model_, *tokenizer_, std::move(no_corpus), options());
    ADD_FAILURE() << "evaluated without documents";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "retrieval evaluation: the corpus is empty");
  }
  RetrievalSplit no_queries = split();
  no_queries.queries.clear();
  try {
    evaluate_retrieval(model_, *tokenizer_, std::move(no_queries), options());
    ADD_FAILURE() << "evaluated without queries";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "retrieval evaluation: no queries");
  }
}

}  // namespace
}  // namespace lmk
