// Runs the real lmk binary: lmk data generates datasets that lmk eval scores into the results
// store and MTEB JSON; bad input exits 2 and a failed evaluation is recorded as FAILED.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/data/formats.h"
#include "core/store/results_store.h"
#include "core/util/file.h"
#include "tests/support/run_lmk.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::Result;
using testing::run_lmk;
using testing::TempDir;

class DataEvalCliTest : public ::testing::Test {
 protected:
  DataEvalCliTest()
      : tokenizer_(dir_.write("tokenizer.json", testing::word_level_json(100).dump())) {
    // A folder of "man pages": paragraphs of real sentences with a heading line each.
    fs::create_directories(dir_.path() / "pages");
    for (int d = 0; d < 30; ++d) {
      std::string text = "PAGE" + std::to_string(d) + "(7)\n\nNAME\n\n";
      const std::string topic = d % 3 == 0   ? "system call"
                                : d % 3 == 1 ? "file format"
                                             : "overview";
      for (int p = 0; p < 6; ++p) {
        for (int s = 0; s < 4; ++s)
          text += "Page " + std::to_string(d) + " explains in paragraph " + std::to_string(p) +
                  " how setting " + std::to_string(s) + " changes the " + topic + ". ";
        text += "\n\n";
      }
      // Named like rendered man pages: NAME.SECTION.txt, the section being the class label.
      dir_.write("pages/page" + std::to_string(d) + "." + "257"[d % 3] + ".txt", text);
    }
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  TempDir dir_;
  std::string tokenizer_;
};

// A run records the granularity its encoding used: without --granularity, lmk reads the model
// folder's eval layout (here fixed:16, not the usual 32) and multicls / mean_every_k their
// default; the rankings equal those of the same evaluation with that granularity given.
TEST_F(DataEvalCliTest, RecordedGranularityIsTheOneTheEncodingUsed) {
  Result r = run_lmk("data passkey --tokenizer " + tokenizer_ + " --out " + path("passkey") +
                     " --lengths 128 --documents 8 --queries 4 --seed 5");
  ASSERT_EQ(r.code, 0) << r.output;
  r = run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + path("model"));
  ASSERT_EQ(r.code, 0) << r.output;
  nlohmann::json settings = nlohmann::json::parse(read_file(path("model/lmk_pooling.json")));
  ASSERT_EQ(settings.at("eval_landmark"), "fixed:32");
  settings["eval_landmark"] = "fixed:16";
  dir_.write("model/lmk_pooling.json", settings.dump());

  const auto eval = [&](const std::string& pooling, const std::string& extra,
                        const std::string& name) {
    const Result e = run_lmk("eval --model " + path("model") + " --dataset " + path("passkey") +
                             " --pooling " + pooling + extra + " --db " + path("results.db") +
                             " --run-name " + name + " --save-run " + path(name + ".trec"));
    EXPECT_EQ(e.code, 0) << e.output;
  };
  eval("lmk", "", "lmk-folder");
  eval("lmk", " --granularity 16", "lmk-16");
  eval("lmk", " --granularity 32", "lmk-32");
  eval("multicls", "", "multicls-default");
  eval("multicls", " --granularity 32", "multicls-32");
  eval("mean_every_k", "", "every-k-default");
  eval("cls", "", "cls");

  ResultsStore store(path("results.db"), ResultsStore::OpenMode::Existing);
  std::map<std::string, std::map<std::string, std::string>> params;
  for (const auto& run : store.list_runs()) params[run.name] = store.run_params(run.id);
  ASSERT_EQ(params.size(), 7u);
  EXPECT_EQ(params["lmk-folder"].at("granularity"), "16");
  EXPECT_EQ(params["lmk-folder"].at("landmarks"), "fixed:16");
  EXPECT_EQ(params["lmk-16"].at("granularity"), "16");
  EXPECT_EQ(params["multicls-default"].at("granularity"), "32");
  EXPECT_EQ(params["multicls-default"].at("landmarks"), "multicls:32");
  EXPECT_EQ(params["every-k-default"].at("granularity"), "32");
  EXPECT_EQ(params["cls"].at("granularity"), "0");
  EXPECT_EQ(params["cls"].count("landmarks"), 0u);
  // Same recorded settings, same ranking and scores; a different granularity scores differently.
  const auto ranking = [&](const std::string& name) {  // the TREC lines without the run's tag
    std::istringstream lines(read_file(path(name + ".trec")));
    std::string out;
    for (std::string line; std::getline(lines, line);)
      out += line.substr(0, line.rfind(' ')) + "\n";
    EXPECT_FALSE(out.empty()) << name;
    return out;
  };
  EXPECT_EQ(ranking("lmk-folder"), ranking("lmk-16"));
  EXPECT_NE(ranking("lmk-folder"), ranking("lmk-32"));
  EXPECT_EQ(ranking("multicls-default"), ranking("multicls-32"));
}

TEST_F(DataEvalCliTest, PasskeyEvaluatedIntoTheStoreAndMteb) {
  Result r = run_lmk("data passkey --tokenizer " + tokenizer_ + " --out " + path("passkey") +
                     " --lengths 64,128 --documents 8 --queries 4 --seed 3");
  ASSERT_EQ(r.code, 0) << r.output;
  const RetrievalSplit part = read_beir(path("passkey/128"), "test");
  EXPECT_EQ(part.corpus.size(), 8u);
  EXPECT_EQ(part.queries.size(), 4u);
  r = run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + path("model"));
  ASSERT_EQ(r.code, 0) << r.output;
  r = run_lmk("eval --model " + path("model") + " --dataset " + path("passkey") +
              " --pooling lmk --granularity 16 --db " + path("results.db") + " --mteb-out " +
              path("mteb") + " --run-name tiny-lmk --experiment passkey --save-run " +
              path("runs/passkey.trec"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("length 64"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("by evidence position"), std::string::npos) << r.output;

  ResultsStore store(path("results.db"), ResultsStore::OpenMode::Existing);
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].name, "tiny-lmk");
  EXPECT_EQ(runs[0].status, RunStatus::Finished);
  EXPECT_EQ(store.run_params(runs[0].id).at("pooling"), "lmk");
  EXPECT_EQ(store.run_params(runs[0].id).at("granularity"), "16");
  std::set<std::string> lengths, positions;
  double overall = -1, length_sum = 0;
  for (const EvalResult& e : store.eval_results(runs[0].id, "passkey")) {
    if (e.metric != "ndcg_at_1") continue;
    EXPECT_GE(e.value, 0.0);
    EXPECT_LE(e.value, 1.0);
    if (e.group_kind == "length") lengths.insert(e.group_value), length_sum += e.value;
    if (e.group_kind == "position") positions.insert(e.group_value);
    if (e.group_kind == "all") overall = e.value;
  }
  EXPECT_EQ(lengths, (std::set<std::string>{"64", "128"}));
  EXPECT_FALSE(positions.empty());
  // Both lengths have 4 queries, so the mean over the 8 queries is the mean of the two means.
  EXPECT_NEAR(overall, length_sum / 2, 1e-9) << "overall = the mean over all the queries";
  // Attention profiles of the pooling tokens: per length, bins summing to 1.
  std::map<std::string, double> profile_sums;
  for (const auto& row : store.attention_profiles(runs[0].id))
    profile_sums[row.length_group] += row.weight;
  ASSERT_EQ(profile_sums.size(), 2u);
  for (const auto& [length, sum] : profile_sums) EXPECT_NEAR(sum, 1.0, 1e-6) << length;

  // One row per query and part with every metric, the evidence position and the target's length
  // as the generator wrote them; their means are the stored per-length results.
  std::map<std::string, std::map<std::string, const Query*>> queries;  // part -> id -> query
  std::map<std::string, RetrievalSplit> parts;
  for (const std::string length : {"64", "128"}) {
    parts[length] = read_beir(path("passkey/" + length), "test");
    for (const Query& q : parts[length].queries) queries[length][q.id] = &q;
  }
  const std::vector<QueryResult> per_query = store.query_results(runs[0].id);
  ASSERT_EQ(per_query.size(), 8u);
  std::map<std::string, double> sums;
  for (const QueryResult& q : per_query) {
    EXPECT_EQ(q.dataset, "passkey");
    EXPECT_EQ(q.split, "test");
    const Query& source = *queries.at(q.part).at(q.query_id);
    ASSERT_TRUE(q.evidence_position.has_value());
    EXPECT_DOUBLE_EQ(*q.evidence_position, source.extra["evidence_position"].get<double>());
    ASSERT_TRUE(q.target_length.has_value());
    EXPECT_EQ(*q.target_length, source.extra["tokens"].get<int64_t>()) << q.query_id;
    EXPECT_EQ(q.metrics.size(), 25u) << "5 metrics at 5 cutoffs";
    sums[q.part] += q.metrics.at("ndcg_at_1");
  }
  for (const EvalResult& e : store.eval_results(runs[0].id, "passkey")) {
    if (e.metric == "ndcg_at_1" && e.group_kind == "length")
      EXPECT_NEAR(e.value, sums.at(e.group_value) / 4, 1e-12) << e.group_value;
  }
  // The ranking as a TREC run (qid Q0 docid rank score tag, best first) and the judgments
  // beside it, both recorded as artifacts of the run.
  std::istringstream ranking(read_file(path("runs/passkey.trec")));
  std::map<std::string, std::vector<std::pair<int, double>>> ranked;
  for (std::string line; std::getline(ranking, line);) {
    std::istringstream fields(line);
    std::string qid, q0, doc, tag;
    int rank = 0;
    double score = 0;
    ASSERT_TRUE(fields >> qid >> q0 >> doc >> rank >> score >> tag) << line;
    EXPECT_EQ(q0, "Q0");
    EXPECT_EQ(tag, "tiny-lmk");
    ranked[qid].push_back({rank, score});
  }
  EXPECT_EQ(ranked.size(), 8u);
  for (const auto& [qid, list] : ranked) {
    EXPECT_EQ(list.size(), 8u) << qid << ": every document (fewer than 100)";
    for (size_t i = 0; i < list.size(); ++i) {
      EXPECT_EQ(list[i].first, static_cast<int>(i + 1)) << qid;
      if (i) EXPECT_LE(list[i].second, list[i - 1].second) << qid;
    }
  }
  std::istringstream judgments(read_file(path("runs/passkey.trec.qrels")));
  size_t judged = 0;
  for (std::string line; std::getline(judgments, line); ++judged) {
    std::istringstream fields(line);
    std::string qid, zero, doc;
    int relevance = 0;
    ASSERT_TRUE(fields >> qid >> zero >> doc >> relevance) << line;
    const std::string part = qid.substr(0, qid.find('/'));
    EXPECT_EQ(parts.at(part).qrels.at(qid.substr(qid.find('/') + 1)).at(doc), relevance) << line;
  }
  EXPECT_EQ(judged, 8u);
  std::set<std::string> artifacts;
  for (const Artifact& a : store.artifacts(runs[0].id)) artifacts.insert(a.kind);
  EXPECT_EQ(artifacts, (std::set<std::string>{"trec-qrels", "trec-run"}));

  const auto mteb = nlohmann::json::parse(read_file(path("mteb/passkey.json")));
  EXPECT_EQ(mteb["task_name"], "passkey");
  ASSERT_TRUE(mteb["scores"].contains("test_64"));
  const auto& entry = mteb["scores"]["test_128"][0];
  EXPECT_EQ(entry["main_score"], entry["ndcg_at_1"]) << "passkey is scored by P@1 = nDCG@1";
  EXPECT_EQ(entry["hf_subset"], "default");
  EXPECT_TRUE(entry.contains("ndcg_at_10"));
  EXPECT_TRUE(mteb["evaluation_time"].is_number());

  // Only targets at least 100 tokens long: the 64-token part's queries are left out and counted;
  // a length no target has is exit 2.
  r = run_lmk("eval --model " + path("model") + " --dataset " + path("passkey") +
                  " --pooling cls --min-target-length 100",
              "", testing::kQuickEnv);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("length 64: left out, every target shorter than 100 tokens (4 queries)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("length 128: 8 documents, 4 queries,"), std::string::npos) << r.output;
  r = run_lmk("eval --model " + path("model") + " --dataset " + path("passkey") +
                  " --pooling cls --min-target-length 100000",
              "", testing::kQuickEnv);
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("every query's target is shorter than 100000 tokens"), std::string::npos)
      << r.output;
}

// A run's score on a dataset is the mean over all its queries, pooled over its parts: the one
// definition of lmk results, lmk compare, the store and the workbench's views. (It was the mean
// of the parts' means in the store, the pooled mean in compare: two winners for the same runs.)
// A dataset of one named part has its score too, so lmk compare pairs it by default.
TEST_F(DataEvalCliTest, ADatasetsScoreIsTheMeanOverAllItsQueriesPooledOverItsParts) {
  Result r = run_lmk("data passkey --tokenizer " + tokenizer_ + " --out " + path("passkey") +
                     " --lengths 64,128 --documents 8 --queries 6 --seed 5");
  ASSERT_EQ(r.code, 0) << r.output;
  // Part 128 keeps 2 of its 6 queries: 6 + 2, so the two definitions differ.
  for (const std::string file : {"queries.jsonl", "qrels/test.tsv"}) {
    const std::string name = path("passkey/128/" + file);
    std::istringstream lines(read_file(name));
    std::string kept, line;
    for (int n = 0; std::getline(lines, line);) {
      const bool header = line.rfind("query-id", 0) == 0;
      if (header || n++ < 2) kept += line + "\n";
    }
    AtomicFile out(name);
    out.write(kept);
    out.commit();
  }
  r = run_lmk("data passkey --tokenizer " + tokenizer_ + " --out " + path("one-part") +
              " --lengths 64 --documents 8 --queries 4 --seed 6");
  ASSERT_EQ(r.code, 0) << r.output;
  ASSERT_EQ(
      run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + path("m")).code,
      0);
  const std::string db = path("scores.db");
  for (const std::string dataset : {"passkey", "one-part"})
    for (const std::string pooling : {"cls", "mean"}) {
      r = run_lmk("eval --model " + path("m") + " --dataset " + path(dataset) + " --pooling " +
                      pooling + " --db " + db,
                  "", testing::kQuickEnv);
      ASSERT_EQ(r.code, 0) << r.output;
      if (dataset == "passkey") {
        EXPECT_NE(r.output.find("overall (all 8 queries, pooled over the length parts)"),
                  std::string::npos)
            << r.output;
      }
    }
  ResultsStore store(db, ResultsStore::OpenMode::Existing);
  std::vector<double> pooled;
  for (int64_t run : {1, 2}) {
    double sum = 0;
    const std::vector<QueryScore> scores = store.query_scores(run, "passkey", "test", "ndcg_at_10");
    ASSERT_EQ(scores.size(), 8u);
    for (const QueryScore& s : scores) sum += s.value;
    pooled.push_back(sum / 8);
    double all = -1, parts = 0;
    for (const EvalResult& e : store.eval_results(run, "passkey")) {
      if (e.metric != "ndcg_at_10") continue;
      if (e.group_kind == "all") all = e.value;
      if (e.group_kind == "length") parts += e.value / 2;
    }
    EXPECT_NEAR(all, pooled.back(), 1e-12) << "run " << run;
    EXPECT_GT(std::abs(parts - pooled.back()), 1e-6) << "run " << run
                                                     << ": the test needs the two "
                                                        "definitions to differ";
  }
  // lmk compare pairs them by default, each cell the pooled mean over the 8 queries, and lmk
  // results shows the same scores with N.
  r = run_lmk("compare --db " + db + " 1 2 --format csv");
  ASSERT_EQ(r.code, 0) << r.output;
  std::vector<double> compared;
  std::istringstream csv(r.output);
  for (std::string line; std::getline(csv, line);) {
    if (line.rfind("cell,", 0) != 0) continue;
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
    ASSERT_GE(fields.size(), 8u) << line;
    EXPECT_EQ(fields[6], "8") << line;  // n
    compared.push_back(std::stod(fields[7]));
  }
  ASSERT_EQ(compared.size(), 2u) << r.output;
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(compared[i], pooled[i], 1e-12);
  r = run_lmk("results --db " + db);
  ASSERT_EQ(r.code, 0) << r.output;
  for (double mean : pooled) {
    char text[32];
    std::snprintf(text, sizeof text, "%.4f ±", mean);
    EXPECT_NE(r.output.find(text), std::string::npos) << text << "\n" << r.output;
  }
  EXPECT_NE(r.output.find("(N 8)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the mean over all its queries, pooled over its parts"),
            std::string::npos)
      << r.output;
  // One named part: its score is stored, and compare needs no --group.
  r = run_lmk("compare --db " + db + " 3 4");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("passkey/test ndcg_at_10"), std::string::npos) << r.output;
}

TEST_F(DataEvalCliTest, CorpusPairsAndStats) {
  Result r = run_lmk("data corpus --source " + path("pages") + " --out " + path("corpus"));
  ASSERT_EQ(r.code, 0) << r.output;
  // Qrels per split; a document's queries all sit in its own split.
  std::map<std::string, std::string> split_of_doc;
  for (const char* split : {"train", "dev", "test"}) {
    if (!fs::exists(path("corpus/documents/qrels/") + split + ".tsv")) continue;
    const RetrievalSplit data = read_beir(path("corpus/documents"), split);
    for (const auto& [query, docs] : data.qrels) {
      for (const auto& [doc, relevance] : docs) {
        EXPECT_EQ(relevance, 1);
        EXPECT_TRUE(split_of_doc.emplace(doc, split).second) << doc << " in two splits";
      }
    }
  }
  EXPECT_EQ(split_of_doc.size(), 30u);
  EXPECT_TRUE(fs::exists(path("corpus/passages/qrels/train.tsv")));
  r = run_lmk("data pairs --source " + path("pages") + " --out " + path("pairs.jsonl") +
              " --negatives 2");
  ASSERT_EQ(r.code, 0) << r.output;
  size_t examples = 0;
  for_each_training_example(path("pairs.jsonl"), [&](TrainingExample&& e, const std::string&) {
    EXPECT_EQ(e.neg.size(), 2u);
    EXPECT_FALSE(e.pos.empty());
    ++examples;
    return true;
  });
  EXPECT_GT(examples, 10u);
  r = run_lmk("data stats " + path("corpus/documents") + " --tokenizer " + tokenizer_ + " --db " +
              path("stats.db"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("30 texts"), std::string::npos) << r.output;
  ResultsStore store(path("stats.db"), ResultsStore::OpenMode::Existing);
  const auto histograms = store.length_histograms("documents");
  ASSERT_EQ(histograms.size(), 1u);
  int64_t counted = 0;
  for (const auto& bin : histograms[0].bins) counted += bin.count;
  EXPECT_EQ(counted, 30);
  // Classification by the file name's section, with frozen embeddings.
  const auto info = nlohmann::json::parse(read_file(path("corpus/classification/dataset.json")));
  EXPECT_EQ(info["type"], "classification");
  ASSERT_EQ(
      run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + path("model"))
          .code,
      0);
  r = run_lmk("eval --model " + path("model") + " --dataset " + path("corpus/classification") +
              " --pooling mean --db " + path("stats.db") + " --mteb-out " + path("mteb"));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("3 labels"), std::string::npos) << r.output;
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  std::set<std::string> metrics;
  for (const EvalResult& e : store.eval_results(runs[0].id)) {
    metrics.insert(e.metric + ":" + e.group_kind);
    EXPECT_GE(e.value, 0.0);
    EXPECT_LE(e.value, 1.0);
  }
  EXPECT_EQ(metrics, (std::set<std::string>{"accuracy:all", "f1:all", "f1:label"}));
  const auto mteb = nlohmann::json::parse(read_file(path("mteb/pages-classification.json")));
  EXPECT_EQ(mteb["scores"]["test"][0]["main_score"], mteb["scores"]["test"][0]["accuracy"]);
  // Accuracy is stored per test text (0 or 1), and its mean is the stored accuracy; macro-F1
  // has no per-text values.
  const std::string task = info["task"];
  const auto per_text = store.query_scores(runs[0].id, task, "test", "accuracy");
  size_t test_texts = 0;
  {
    std::istringstream lines(read_file(path("corpus/classification/test.jsonl")));
    for (std::string line; std::getline(lines, line);) test_texts += line.empty() ? 0 : 1;
  }
  ASSERT_EQ(per_text.size(), test_texts);
  double correct = 0;
  for (const QueryScore& s : per_text) {
    EXPECT_TRUE(s.value == 0.0 || s.value == 1.0) << s.value;
    correct += s.value;
  }
  for (const EvalResult& e : store.eval_results(runs[0].id))
    if (e.metric == "accuracy") EXPECT_NEAR(correct / double(test_texts), e.value, 1e-12);
  EXPECT_TRUE(store.query_scores(runs[0].id, task, "test", "f1").empty());
  // So two classification runs compare with intervals and a paired test on accuracy.
  r = run_lmk("eval --model " + path("model") + " --dataset " + path("corpus/classification") +
              " --pooling cls --db " + path("stats.db"));
  ASSERT_EQ(r.code, 0) << r.output;
  r = run_lmk("compare --db " + path("stats.db") +
              " 1 2 --baseline 1 --metric accuracy --metric f1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("Fisher"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("±"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("f1 on " + task + " has no per-query values"), std::string::npos)
      << r.output;
  // A test file naming one id twice is refused with its line: the run is recorded as failed
  // with that message (as every evaluation's failure is), the two before it kept.
  {
    std::ofstream bad(path("corpus/classification/test.jsonl"), std::ios::app);
    bad << R"({"id": "x", "text": "a", "label": "1"})"
        << "\n"
        << R"({"id": "x", "text": "b", "label": "1"})"
        << "\n";
  }
  r = run_lmk("eval --model " + path("model") + " --dataset " + path("corpus/classification") +
              " --db " + path("stats.db"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("test.jsonl:" + std::to_string(test_texts + 2) + ": id x appears twice"),
            std::string::npos)
      << r.output;
  const auto after = store.list_runs();
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[2].status, RunStatus::Failed);
  EXPECT_NE(after[2].error_text.find("id x appears twice"), std::string::npos);
  EXPECT_EQ(after[0].status, RunStatus::Finished);
  EXPECT_EQ(after[1].status, RunStatus::Finished);
}

// --lengths: documents/ holds one part per length, windows of at least that many tokens; with
// --splits dev,test no training document is in any corpus; lmk eval scores a part per length.
TEST_F(DataEvalCliTest, CorpusWindowsOfFixedLengths) {
  Result r = run_lmk("data corpus --source " + path("pages") + " --out " + path("win") +
                     " --lengths 64,200 --tokenizer " + tokenizer_ +
                     " --queries-per-document 3 --windows-per-document 2 --splits dev,test");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("documents@200: "), std::string::npos) << r.output;
  const auto info = nlohmann::json::parse(read_file(path("win/documents/dataset.json")));
  EXPECT_EQ(info["parts"], nlohmann::json::array({"64", "200"}));
  EXPECT_EQ(info["part_kind"], "length");
  size_t windows = 0;
  for (const char* split : {"dev", "test"}) {
    const RetrievalSplit data = read_beir(path("win/documents/200"), split);
    for (const Query& q : data.queries) EXPECT_EQ(q.extra.at("split"), split);
    windows = data.corpus.size();
  }
  EXPECT_EQ(info["counts"]["200"]["windows"]["dev"].get<size_t>() +
                info["counts"]["200"]["windows"]["test"].get<size_t>(),
            windows);
  EXPECT_FALSE(fs::exists(path("win/documents/200/qrels/train.tsv")));
  EXPECT_FALSE(fs::exists(path("win/passages/qrels/train.tsv")));
  ASSERT_EQ(
      run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + path("model"))
          .code,
      0);
  r = run_lmk("eval --model " + path("model") + " --dataset " + path("win/documents") +
                  " --pooling cls --split dev --db " + path("win.db"),
              "", testing::kQuickEnv);
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("split dev"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("length 200: "), std::string::npos) << r.output;
  // Bad options: exit 2, the option named.
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {" --lengths 64", "--lengths and --tokenizer go together"},
           {" --lengths 64 --tokenizer " + tokenizer_ + " --splits dev,validation",
            "'validation' is not a split"},
           {" --lengths 100000 --tokenizer " + tokenizer_, "holds 100000 tokens"},
           {" --queries-per-document 0", "--queries-per-document"}}) {
    r = run_lmk("data corpus --source " + path("pages") + " --out " + path("bad") + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << args << "\n" << r.output;
  }
}

// --pairs-out: the generated task as training pairs instead of a dataset.
TEST_F(DataEvalCliTest, SyntheticTrainingPairs) {
  Result r =
      run_lmk("data passkey --tokenizer " + tokenizer_ + " --pairs-out " + path("synthetic.jsonl") +
              " --lengths 64 --queries 5 --documents 5 --negatives 2 --seed 7");
  ASSERT_EQ(r.code, 0) << r.output;
  size_t examples = 0;
  for_each_training_example(path("synthetic.jsonl"), [&](TrainingExample&& e, const std::string&) {
    EXPECT_EQ(e.query.rfind("what is the pass key for ", 0), 0u) << e.query;
    EXPECT_EQ(e.pos.size(), 1u);
    EXPECT_EQ(e.neg.size(), 2u);
    ++examples;
    return true;
  });
  EXPECT_EQ(examples, 5u);
  r = run_lmk("data passkey --tokenizer " + tokenizer_ + " --lengths 64");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--out"), std::string::npos) << r.output;
}

TEST_F(DataEvalCliTest, RecordsIntoTheRunNamedByLmkRunId) {
  ASSERT_EQ(run_lmk("data passkey --tokenizer " + tokenizer_ + " --out " + path("passkey") +
                    " --lengths 64 --documents 4 --queries 2 --seed 3")
                .code,
            0);
  ASSERT_EQ(
      run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + path("model"))
          .code,
      0);
  const std::string db = path("jobs.db");
  int64_t job = 0, train_run = 0;
  {
    ResultsStore store(db);
    const int64_t experiment = store.get_or_create_experiment("jobs");
    job = store.create_run(experiment, {"job/e", "eval", {{"placeholder", true}}});
    train_run = store.create_run(experiment, {"job/t", "train", {}});
  }
  const std::string eval = "eval --model " + path("model") + " --dataset " + path("passkey") +
                           " --pooling lmk --granularity 16 --run-name ignored";
  Result r =
      run_lmk(eval + " --db " + db, "", testing::kQuickEnv + " LMK_RUN_ID=" + std::to_string(job));
  ASSERT_EQ(r.code, 0) << r.output;
  {
    ResultsStore store(db, ResultsStore::OpenMode::Existing);
    EXPECT_EQ(store.list_runs().size(), 2u) << "no run created";
    const RunRecord run = store.get_run(job);
    EXPECT_EQ(run.name, "job/e");
    EXPECT_EQ(run.status, RunStatus::Finished);
    EXPECT_EQ(store.run_params(job).at("pooling"), "lmk");
    EXPECT_EQ(store.run_params(job).count("placeholder"), 0u);
    EXPECT_FALSE(store.eval_results(job, "passkey").empty());
  }
  struct Case {
    std::string value, db;
    std::vector<std::string> message;
  } cases[] = {
      {"abc", db, {"LMK_RUN_ID", "'abc'"}},
      {"0", db, {"LMK_RUN_ID", "'0'"}},
      {"999", db, {"LMK_RUN_ID", "999", db}},
      {std::to_string(train_run), db, {"LMK_RUN_ID", "'train'", "'eval'"}},
      {std::to_string(job), "", {"LMK_RUN_ID is set but the command has no results store"}},
  };
  for (const Case& c : cases) {
    r = run_lmk(eval + (c.db.empty() ? "" : " --db " + c.db), "",
                testing::kQuickEnv + " LMK_RUN_ID=" + c.value);
    EXPECT_EQ(r.code, 2) << c.value << "\n" << r.output;
    for (const std::string& part : c.message)
      EXPECT_NE(r.output.find(part), std::string::npos) << c.value << ": " << part << "\n"
                                                        << r.output;
  }
  ResultsStore store(db, ResultsStore::OpenMode::Existing);
  EXPECT_EQ(store.list_runs().size(), 2u);
  EXPECT_EQ(store.get_run(train_run).status, RunStatus::Scheduled);
}

TEST_F(DataEvalCliTest, BadInputExitsTwoAndFailedRunsAreRecorded) {
  struct Case {
    std::string args, message;
  } cases[] = {
      {"data passkey --tokenizer " + tokenizer_ + " --out " + path("p") + " --lengths 64,x",
       "--lengths"},
      {"data passkey --tokenizer " + tokenizer_ + " --out " + path("p") +
           " --queries 9 --documents 3",
       "--queries"},
      {"data corpus --source " + path("nowhere") + " --out " + path("c"), "nowhere"},
      {"eval --model " + path("nomodel") + " --dataset " + path("pages"), "pages"},
  };
  for (const auto& c : cases) {
    const Result r = run_lmk(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
  }
  // A dataset whose qrels name an unknown document: the run is stored as FAILED.
  ASSERT_EQ(
      run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + path("model"))
          .code,
      0);
  fs::create_directories(path("broken/qrels"));
  dir_.write("broken/corpus.jsonl", "{\"_id\": \"d1\", \"text\": \"w1 w2\"}\n");
  dir_.write("broken/queries.jsonl", "{\"_id\": \"q1\", \"text\": \"w1\"}\n");
  dir_.write("broken/qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td9\t1\n");
  const Result r = run_lmk("eval --model " + path("model") + " --dataset " + path("broken") +
                           " --db " + path("failed.db"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("d9"), std::string::npos) << r.output;
  ResultsStore store(path("failed.db"), ResultsStore::OpenMode::Existing);
  ASSERT_EQ(store.list_runs().size(), 1u);
  EXPECT_EQ(store.list_runs()[0].status, RunStatus::Failed);
  EXPECT_NE(store.list_runs()[0].error_text.find("d9"), std::string::npos);
}

}  // namespace
}  // namespace lmk
