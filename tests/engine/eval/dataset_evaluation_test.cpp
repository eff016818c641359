// A model evaluated on a dataset folder of two length parts (engine/eval/dataset_evaluation.h),
// with a tiny random encoder: the pooled, per-part and per-position rows checked against the
// per-query results they summarize (means recomputed here), the TREC run against the ranking
// rules, the attention rows' shape, and a dataset no query of which can be scored.
#include "engine/eval/dataset_evaluation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>

#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::TempDir;

class DatasetEvaluationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EncoderConfig c = EncoderConfig::preset("tiny", 1005, 0);
    c.num_layers = 2;
    c.global_layers = {true, true};
    Encoder encoder(c, 11);
    folder_ = (dir_.path() / "model").string();
    save_model_folder(folder_, encoder,
                      dir_.write("tokenizer.json", testing::word_level_json(1000).dump()), {});
    model_ = load_model_folder(folder_);
    tokenizer_ = load_tokenizer(folder_);
    // Two parts ("64", "128"), 12 documents of that many words, 6 and 4 queries (unequal, so a
    // mean of the parts' means is not the pooled mean; 3 judged documents for the first query,
    // one for the others), each with an evidence position.
    dataset_.dir = (dir_.path() / "data").string();
    dataset_.task = "toy";
    dataset_.main_score = "ndcg_at_10";
    dataset_.split = "test";
    dataset_.part_kind = "length";
    dataset_.seed = 5;
    for (const int length : {64, 128}) {
      RetrievalSplit split;
      for (int d = 0; d < 12; ++d) {
        std::string text;
        for (int w = 0; w < length; ++w)
          text += (w ? " w" : "w") + std::to_string((d * 131 + w * 17 + length) % 1000);
        split.corpus.push_back({"d" + std::to_string(d), "", text, nlohmann::json::object()});
      }
      for (int q = 0; q < (length == 64 ? 6 : 4); ++q) {
        const std::string id = "q" + std::to_string(q);
        const std::string& target = split.corpus[static_cast<size_t>(2 * q)].text;
        split.queries.push_back(
            {id, target.substr(0, 40), {{"evidence_position", (q % 3) / 3.0 + 0.1}}});
        split.qrels[id]["d" + std::to_string(2 * q)] = 1;
        if (q == 0) split.qrels[id]["d1"] = split.qrels[id]["d3"] = 1;
      }
      const std::string name = std::to_string(length);
      write_beir((std::filesystem::path(dataset_.dir) / name).string(), "test", split);
      dataset_.parts.push_back({name, (std::filesystem::path(dataset_.dir) / name).string()});
    }
    write_dataset_info(dataset_.dir, dataset_);
  }

  DatasetEvaluationOptions options() const {
    DatasetEvaluationOptions o;
    o.retrieval.encode.pooling = Pooling::Mean;
    o.retrieval.show_progress = false;
    o.retrieval.ks = {1, 10};
    return o;
  }
  // As lmk eval evaluates: with the plan of the options over the model, made once.
  DatasetEvaluation evaluate(const DatasetInfo& dataset, const DatasetEvaluationOptions& o,
                             std::ostream& report) {
    return evaluate_dataset(model_, *tokenizer_, dataset, o,
                            plan_pooling(o.retrieval.encode, model_), report);
  }

  TempDir dir_;
  std::string folder_;
  LoadedModel model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  DatasetInfo dataset_;
};

double row_value(const std::vector<EvalResult>& rows, const std::string& metric,
                 const std::string& kind, const std::string& group) {
  for (const EvalResult& r : rows)
    if (r.metric == metric && r.group_kind == kind && r.group_value == group) return r.value;
  ADD_FAILURE() << "no row " << metric << " " << kind << " " << group;
  return -1;
}

TEST_F(DatasetEvaluationTest, PooledAndPartRowsAreTheMeansOfTheirQueries) {
  const DatasetInfo read = read_dataset_info(dataset_.dir);
  std::ostringstream report;
  const DatasetEvaluation e = evaluate(read, options(), report);
  ASSERT_EQ(e.queries.size(), 10u);
  for (const std::string metric : {"ndcg_at_10", "recall_at_10", "ndcg_at_1"}) {
    std::map<std::string, std::vector<double>> by_part;
    std::vector<double> all;
    for (const QueryResult& q : e.queries) {
      EXPECT_EQ(q.dataset, "toy");
      EXPECT_EQ(q.split, "test");
      ASSERT_TRUE(q.evidence_position.has_value());
      by_part[q.part].push_back(q.metrics.at(metric));
      all.push_back(q.metrics.at(metric));
    }
    auto mean = [](const std::vector<double>& v) {
      return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    ASSERT_EQ(by_part.size(), 2u);
    for (const auto& [part, values] : by_part)
      EXPECT_NEAR(row_value(e.rows, metric, "length", part), mean(values), 1e-12) << part;
    EXPECT_NEAR(row_value(e.rows, metric, "all", ""), mean(all), 1e-12);
    // Per evidence position over both parts: every query sits in the bucket of its position.
    std::map<std::string, std::vector<double>> position_groups;
    for (const EvalResult& r : e.rows)
      if (r.metric == metric && r.group_kind == "position") position_groups[r.group_value];
    EXPECT_EQ(position_groups.size(), 3u) << "three evidence positions";
  }
  EXPECT_NE(report.str().find("overall (all 10 queries, pooled over the length parts)"),
            std::string::npos)
      << report.str();
  EXPECT_TRUE(e.trec_run.empty());
  EXPECT_TRUE(e.attention.empty());
  EXPECT_EQ(read.seed, std::optional<uint64_t>(5));
  EXPECT_EQ(dataset_revision(read), std::optional<std::string>("lmk-seed-5"));
}

TEST_F(DatasetEvaluationTest, RankingAndAttentionOnRequest) {
  DatasetEvaluationOptions o = options();
  o.ranking_depth = 5;
  o.run_tag = trec_tag("my run");
  o.attention_docs = 2;
  o.attention_bins = 4;
  std::ostringstream report;
  const DatasetEvaluation e = evaluate(dataset_, o, report);
  // 10 queries x 5 documents, ranks 1..5 with scores not rising, tag without spaces.
  std::istringstream run(e.trec_run);
  std::map<std::string, std::vector<std::pair<int, double>>> ranks;
  for (std::string qid, q0, doc, tag; run >> qid >> q0 >> doc;) {
    int rank = 0;
    double score = 0;
    run >> rank >> score >> tag;
    EXPECT_EQ(q0, "Q0");
    EXPECT_EQ(tag, "my_run");
    EXPECT_TRUE(qid.rfind("64/", 0) == 0 || qid.rfind("128/", 0) == 0) << qid;
    ranks[qid].push_back({rank, score});
  }
  ASSERT_EQ(ranks.size(), 10u);
  for (const auto& [qid, list] : ranks) {
    ASSERT_EQ(list.size(), 5u) << qid;
    for (size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(list[i].first, static_cast<int>(i + 1));
      if (i) EXPECT_LE(list[i].second, list[i - 1].second);
    }
  }
  // 6 + 2 and 4 + 2 judgments.
  EXPECT_EQ(std::count(e.trec_qrels.begin(), e.trec_qrels.end(), '\n'), 14);
  ASSERT_EQ(e.attention.size(), 8u);  // 4 bins x 2 parts
  EXPECT_EQ(e.attention.front().length_group, "64");
  EXPECT_EQ(e.attention.back().length_group, "128");
  EXPECT_EQ(e.attention.back().bin, 3);
  EXPECT_DOUBLE_EQ(e.attention.back().bin_end, 1.0);
}

TEST_F(DatasetEvaluationTest, NoScorableQueryIsAnInputError) {
  DatasetEvaluationOptions o = options();
  o.retrieval.min_target_length = 100000;
  std::ostringstream report;
  try {
    evaluate(dataset_, o, report);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("every query's target is shorter than 100000"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NE(report.str().find("length 64: left out"), std::string::npos) << report.str();
}

}  // namespace
}  // namespace lmk
