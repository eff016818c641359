#include "core/data/formats.h"

#include <gtest/gtest.h>

#include "core/data/jsonl.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/input_error_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::error_of;
using testing::gzip;
using testing::has;
using testing::throws_input_error;

// ---- BEIR

RetrievalSplit sample_split() {
  RetrievalSplit split;
  split.corpus = {{"d1", "First", "The grass is green.", {{"context_length", 256}}},
                  {"d2", "", "Second document\twith a tab.", json::object()},
                  {"d3", "Third", "", {{"evidence_position", 0.25}, {"tokens", {1, 2}}}}};
  split.queries = {{"q1", "what is green?", {{"context_length", 256}}},
                   {"q2", "second", json::object()}};
  split.qrels = {{"q1", {{"d1", 2}, {"d3", 0}}}, {"q2", {{"d2", 1}}}};
  return split;
}

void expect_same(const RetrievalSplit& a, const RetrievalSplit& b) {
  ASSERT_EQ(a.corpus.size(), b.corpus.size());
  for (size_t i = 0; i < a.corpus.size(); ++i) {
    EXPECT_EQ(a.corpus[i].id, b.corpus[i].id);
    EXPECT_EQ(a.corpus[i].title, b.corpus[i].title);
    EXPECT_EQ(a.corpus[i].text, b.corpus[i].text);
    EXPECT_EQ(a.corpus[i].extra, b.corpus[i].extra) << a.corpus[i].id;
  }
  ASSERT_EQ(a.queries.size(), b.queries.size());
  for (size_t i = 0; i < a.queries.size(); ++i) {
    EXPECT_EQ(a.queries[i].id, b.queries[i].id);
    EXPECT_EQ(a.queries[i].text, b.queries[i].text);
    EXPECT_EQ(a.queries[i].extra, b.queries[i].extra);
  }
  EXPECT_EQ(a.qrels, b.qrels);
}

TEST(BeirTest, WriteThenReadGivesTheSameSplit) {
  testing::TempDir dir;
  const RetrievalSplit split = sample_split();
  write_beir(dir.path().string(), "test", split);
  EXPECT_EQ(read_file((dir.path() / "qrels/test.tsv").string()),
            "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td3\t0\nq2\td2\t1\n");
  expect_same(read_beir(dir.path().string(), "test"), split);
}

TEST(BeirTest, KeepsOnlyQueriesWithJudgementsAndReadsGzip) {
  testing::TempDir dir;
  RetrievalSplit split = sample_split();
  split.queries.push_back({"q3", "a train query", json::object()});
  write_beir(dir.path().string(), "test", split);
  split.queries.pop_back();
  // corpus.jsonl.gz in place of corpus.jsonl
  const std::string corpus = read_file((dir.path() / "corpus.jsonl").string());
  gzip(corpus, (dir.path() / "corpus.jsonl.gz").string());
  std::filesystem::remove(dir.path() / "corpus.jsonl");
  expect_same(read_beir(dir.path().string(), "test"), split);
}

TEST(BeirTest, FindsOneQueryAndItsJudgementsWithoutTheCorpus) {
  testing::TempDir dir;
  write_beir(dir.path().string(), "test", sample_split());
  std::filesystem::remove(dir.path() / "corpus.jsonl");  // not read
  const auto q1 = find_beir_query(dir.path().string(), "test", "q1");
  ASSERT_TRUE(q1.has_value());
  EXPECT_EQ(q1->query.text, "what is green?");
  EXPECT_EQ(q1->query.extra, json({{"context_length", 256}}));
  ASSERT_EQ(q1->judgements.size(), 2u);
  EXPECT_EQ(q1->judgements[0].doc_id, "d1") << "most relevant first";
  EXPECT_EQ(q1->judgements[0].relevance, 2);
  EXPECT_FALSE(find_beir_query(dir.path().string(), "test", "q9").has_value());
  EXPECT_TRUE(throws_input_error([&] { find_beir_query(dir.path().string(), "dev", "q1"); },
                                 "qrels/dev.tsv"));
}

TEST(BeirTest, ListsTheJudgedQueriesOfASplitInFileOrder) {
  testing::TempDir dir;
  RetrievalSplit split = sample_split();
  split.queries.push_back({"q3", "a train query", json::object()});  // judged in no split
  write_beir(dir.path().string(), "test", split);
  const auto all = find_beir_queries(dir.path().string(), "test", 100);
  ASSERT_EQ(all.size(), sample_split().queries.size());
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].query.id, sample_split().queries[i].id);
    EXPECT_FALSE(all[i].judgements.empty());
  }
  EXPECT_EQ(all[0].judgements[0].doc_id, "d1") << "most relevant first";
  EXPECT_EQ(find_beir_queries(dir.path().string(), "test", 1).size(), 1u);
  EXPECT_TRUE(find_beir_queries(dir.path().string(), "test", 0).empty());
  EXPECT_FALSE(find_beir_query(dir.path().string(), "test", "q3").has_value());
}

TEST(BeirTest, StreamsTheCorpus) {
  testing::TempDir dir;
  write_beir(dir.path().string(), "test", sample_split());
  std::vector<std::string> ids;
  for_each_beir_document(dir.path().string(), [&](Document&& doc) {
    ids.push_back(doc.id);
    return ids.size() < 2;
  });
  EXPECT_EQ(ids, (std::vector<std::string>{"d1", "d2"}));
  dir.write("corpus.jsonl", "{\"_id\":\"a\",\"text\":\"\"}\n{\"_id\":\"a\",\"text\":\"\"}\n");
  EXPECT_TRUE(throws_input_error(
      [&] { for_each_beir_document(dir.path().string(), [](Document&&) { return true; }); },
      "corpus.jsonl:2: duplicate document id \"a\""));
}

struct BeirErrorCase {
  const char* name;
  std::string corpus, queries, qrels;
  std::string expected;  // a part of the message
};

void PrintTo(const BeirErrorCase& c, std::ostream* os) {
  *os << c.name;
}

class BeirErrorTest : public ::testing::TestWithParam<BeirErrorCase> {};

const std::string kCorpus =
    "{\"_id\":\"d1\",\"title\":\"\",\"text\":\"one\"}\n{\"_id\":\"d2\",\"text\":\"two\"}\n";
const std::string kQueries = "{\"_id\":\"q1\",\"text\":\"?\"}\n{\"_id\":\"q2\",\"text\":\"?\"}\n";
const std::string kHeader = "query-id\tcorpus-id\tscore\n";

TEST_P(BeirErrorTest, NamesFileAndLine) {
  const BeirErrorCase& c = GetParam();
  testing::TempDir dir;
  dir.write("corpus.jsonl", c.corpus);
  dir.write("queries.jsonl", c.queries);
  std::filesystem::create_directories(dir.path() / "qrels");
  dir.write("qrels/test.tsv", c.qrels);
  const std::string message = error_of([&] { read_beir(dir.path().string(), "test"); });
  EXPECT_TRUE(has(message, (dir.path() / c.expected).string())) << "got: " << message;
}

INSTANTIATE_TEST_SUITE_P(
    Beir, BeirErrorTest,
    ::testing::Values(
        BeirErrorCase{"duplicate_doc", kCorpus + "{\"_id\":\"d1\",\"text\":\"x\"}\n", kQueries,
                      kHeader + "q1\td1\t1\n", "corpus.jsonl:3: duplicate document id \"d1\""},
        BeirErrorCase{"duplicate_query", kCorpus, kQueries + "\n{\"_id\":\"q1\",\"text\":\"?\"}",
                      kHeader + "q1\td1\t1\n", "queries.jsonl:4: duplicate query id \"q1\""},
        BeirErrorCase{"unknown_query", kCorpus, kQueries, kHeader + "q1\td1\t1\nq9\td1\t1\n",
                      "qrels/test.tsv:3: unknown query id \"q9\""},
        BeirErrorCase{"unknown_doc", kCorpus, kQueries, kHeader + "q1\td7\t1\n",
                      "qrels/test.tsv:2: unknown document id \"d7\""},
        BeirErrorCase{"columns", kCorpus, kQueries, kHeader + "q1\td1\n",
                      "qrels/test.tsv:2: expected 3 tab-separated columns"},
        BeirErrorCase{"too_many_columns", kCorpus, kQueries, kHeader + "q1\td1\t1\t0\n",
                      "qrels/test.tsv:2: expected 3 tab-separated columns (query-id, corpus-id, "
                      "score), got 4"},
        BeirErrorCase{"score", kCorpus, kQueries, kHeader + "q1\td1\t1.5\n",
                      "qrels/test.tsv:2: score \"1.5\" is not an integer"},
        BeirErrorCase{"score_range", kCorpus, kQueries, kHeader + "q1\td1\t99999999999\n",
                      "qrels/test.tsv:2: score \"99999999999\" is not an integer"},
        BeirErrorCase{"empty_id", kCorpus, kQueries, kHeader + "\td1\t1\n",
                      "qrels/test.tsv:2: empty query-id or corpus-id"},
        BeirErrorCase{"header", kCorpus, kQueries, "q1\td1\t1\n",
                      "qrels/test.tsv:1: expected the header"},
        BeirErrorCase{"empty_qrels", kCorpus, kQueries, "", "qrels/test.tsv: empty"},
        BeirErrorCase{"no_judgements", kCorpus, kQueries, kHeader,
                      "qrels/test.tsv: no relevance judgements"},
        BeirErrorCase{"conflict", kCorpus, kQueries, kHeader + "q1\td1\t1\nq1\td1\t2\n",
                      "qrels/test.tsv:3: query \"q1\" and document \"d1\" already judged 1, now 2"},
        BeirErrorCase{"empty_corpus", "\n", kQueries, kHeader + "q1\td1\t1\n",
                      "corpus.jsonl: no documents"},
        BeirErrorCase{"missing_id", "{\"text\":\"x\"}\n", kQueries, kHeader,
                      "corpus.jsonl:1._id: missing"},
        BeirErrorCase{"numeric_text", "{\"_id\":\"a\",\"text\":5}\n", kQueries, kHeader,
                      "corpus.jsonl:1.text: expected a string, got number"},
        BeirErrorCase{"bad_id", "{\"_id\":[1],\"text\":\"\"}\n", kQueries, kHeader,
                      "corpus.jsonl:1._id: expected a string or integer id"},
        BeirErrorCase{"tab_in_id", "{\"_id\":\"a\\tb\",\"text\":\"\"}\n", kQueries, kHeader,
                      "corpus.jsonl:1._id: id \"a\tb\" holds a tab or a line break"},
        BeirErrorCase{"not_object", "[1,2]\n", kQueries, kHeader,
                      "corpus.jsonl:1: expected a JSON object, got array"},
        BeirErrorCase{"malformed_query", kCorpus, "{\"_id\":\"q1\",\n", kHeader,
                      "queries.jsonl:1: invalid JSON"},
        BeirErrorCase{"utf8_qrels", kCorpus, kQueries, kHeader + "q1\td\xff\t1\n",
                      "qrels/test.tsv:2: invalid UTF-8 at byte 4"}),
    [](const ::testing::TestParamInfo<BeirErrorCase>& info) { return info.param.name; });

TEST(BeirTest, WriterRejectsWhatTheReaderWould) {
  testing::TempDir dir;
  const std::string out = (dir.path() / "out").string();
  RetrievalSplit split = sample_split();
  split.corpus[1].id = "d\t2";
  split.qrels["q2"] = {{"d\t2", 1}};
  EXPECT_TRUE(throws_input_error([&] { write_beir(out, "test", split); }, "holds a tab"));
  split = sample_split();
  split.qrels["q2"]["d9"] = 1;
  EXPECT_TRUE(
      throws_input_error([&] { write_beir(out, "test", split); }, "unknown document id \"d9\""));
  split = sample_split();
  split.queries.push_back(split.queries[0]);
  EXPECT_TRUE(
      throws_input_error([&] { write_beir(out, "test", split); }, "duplicate query id \"q1\""));
  EXPECT_FALSE(std::filesystem::exists(out + "/corpus.jsonl")) << "checked before writing";
  EXPECT_TRUE(
      throws_input_error([&] { write_beir(out, "../x", sample_split()); }, "bad split name"));
}

// ---- MLDR (field names as in Shitao/MLDR)

TEST(MldrTest, ReadsPositivePassagesAsJudgements) {
  testing::TempDir dir;
  const std::string corpus = (dir.path() / "corpus.jsonl.gz").string();
  {
    JsonlWriter writer(corpus);
    writer.write({{"docid", "doc-en-1"}, {"text", "A long document."}});
    writer.write({{"docid", "doc-en-2"}, {"text", "Another one."}});
    writer.write({{"docid", "doc-en-3"}, {"text", "Unjudged."}});
    writer.commit();
  }
  const std::string queries = (dir.path() / "test.jsonl").string();
  {
    JsonlWriter writer(queries);
    writer.write({{"query_id", "q-en-1"},
                  {"query", "which document is long?"},
                  {"positive_passages", {{{"docid", "doc-en-1"}, {"text", "A long document."}}}},
                  {"negative_passages", {{{"docid", "doc-en-99"}, {"text", "ignored"}}}}});
    writer.write({{"query_id", "q-en-2"},
                  {"query", "another?"},
                  {"positive_passages",
                   {{{"docid", "doc-en-2"}, {"text", ""}}, {{"docid", "doc-en-3"}, {"text", ""}}}},
                  {"negative_passages", json::array()}});
    writer.commit();
  }
  const RetrievalSplit split = read_mldr(queries, corpus);
  ASSERT_EQ(split.corpus.size(), 3u);
  EXPECT_EQ(split.corpus[2].id, "doc-en-3");
  ASSERT_EQ(split.queries.size(), 2u);
  EXPECT_EQ(split.queries[0].text, "which document is long?");
  EXPECT_EQ(split.queries[0].extra, json::object()) << "passage lists are not kept";
  EXPECT_EQ(split.qrels,
            (Qrels{{"q-en-1", {{"doc-en-1", 1}}}, {"q-en-2", {{"doc-en-2", 1}, {"doc-en-3", 1}}}}));

  const std::string bad = dir.write(
      "bad.jsonl",
      "{\"query_id\":\"q\",\"query\":\"?\",\"positive_passages\":[{\"docid\":\"doc-en-1\"},"
      "{\"docid\":\"nope\"}]}\n");
  EXPECT_TRUE(throws_input_error([&] { read_mldr(bad, corpus); },
                                 bad + ":1.positive_passages[1]: unknown document id \"nope\""));
  const std::string no_query =
      dir.write("noq.jsonl", "{\"query_id\":\"q\",\"positive_passages\":[]}\n");
  EXPECT_TRUE(
      throws_input_error([&] { read_mldr(no_query, corpus); }, no_query + ":1.query: missing"));
}

// ---- LongEmbed (field names as in dwzhu/LongEmbed)

void write_longembed_sample(const testing::TempDir& dir, const std::string& doc_prefix) {
  std::string corpus, queries, qrels;
  for (int length : {256, 512}) {
    for (int i = 0; i < 2; ++i) {
      const std::string n = std::to_string(i), id = doc_prefix + std::to_string(length) + "_" + n;
      corpus +=
          json{{"doc_id", id}, {"text", "haystack " + n}, {"context_length", length}}.dump() + "\n";
      queries += json{{"qid", "q" + std::to_string(length) + "_" + n},
                      {"text", "pass key " + n + "?"},
                      {"context_length", length}}
                     .dump() +
                 "\n";
      qrels += json{{"qid", "q" + std::to_string(length) + "_" + n},
                    {"doc_id", id},
                    {"context_length", length}}
                   .dump() +
               "\n";
    }
  }
  dir.write("corpus.jsonl", corpus);
  dir.write("queries.jsonl", queries);
  dir.write("qrels.jsonl", qrels);
}

TEST(LongEmbedTest, ReadsAllLengthsOrOne) {
  testing::TempDir dir;
  write_longembed_sample(dir, "doc_");
  const RetrievalSplit all = read_longembed(dir.path().string());
  EXPECT_EQ(all.corpus.size(), 4u);
  EXPECT_EQ(all.queries.size(), 4u);
  EXPECT_EQ(all.corpus[3].extra, (json{{"context_length", 512}})) << "context_length is kept";
  EXPECT_EQ(all.qrels.at("q512_1"), (std::map<std::string, int>{{"doc_512_1", 1}}));

  const RetrievalSplit short_docs = read_longembed(dir.path().string(), 256);
  ASSERT_EQ(short_docs.corpus.size(), 2u);
  EXPECT_EQ(short_docs.corpus[1].id, "doc_256_1");
  EXPECT_EQ(short_docs.queries.size(), 2u);
  EXPECT_EQ(short_docs.qrels.size(), 2u);
}

TEST(LongEmbedTest, ErrorsNameFileAndLine) {
  testing::TempDir dir;
  write_longembed_sample(dir, "doc_");
  const std::string qrels = (dir.path() / "qrels.jsonl").string();
  std::ofstream(qrels, std::ios::app) << "{\"qid\":\"q256_0\",\"doc_id\":\"doc_1024_0\"}\n";
  EXPECT_TRUE(throws_input_error([&] { read_longembed(dir.path().string()); },
                                 qrels + ":5: unknown document id \"doc_1024_0\""));
  EXPECT_TRUE(throws_input_error([&] { read_longembed(dir.path().string(), 256); },
                                 qrels + ":5.context_length: missing"))
      << "with a length asked for, every record must carry one";
}

// ---- FlagEmbedding training files

TEST(TrainingTest, WriteThenReadGivesTheSameExamples) {
  testing::TempDir dir;
  std::vector<TrainingExample> examples(2);
  examples[0] = {"what is green?", {"grass", "leaves"},
                 {"sky"},          {0.9, 0.75},
                 {0.125},          json{{"prompt", "Represent this query: "}, {"type", "normal"}}};
  examples[1] = {"no negatives", {"only positive"}, {}, {}, {}, json::object()};
  for (const char* name : {"train.jsonl", "train.jsonl.gz"}) {
    const std::string path = (dir.path() / name).string();
    write_training_examples(path, examples);
    std::vector<TrainingExample> back;
    std::vector<std::string> wheres;
    for_each_training_example(path, [&](TrainingExample&& e, const std::string& where) {
      back.push_back(std::move(e));
      wheres.push_back(where);
      return true;
    });
    ASSERT_EQ(back.size(), 2u) << name;
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(back[i].query, examples[i].query);
      EXPECT_EQ(back[i].pos, examples[i].pos);
      EXPECT_EQ(back[i].neg, examples[i].neg);
      EXPECT_EQ(back[i].pos_scores, examples[i].pos_scores);
      EXPECT_EQ(back[i].neg_scores, examples[i].neg_scores);
      EXPECT_EQ(back[i].extra, examples[i].extra);
    }
    EXPECT_EQ(wheres[1], path + ":2");
  }
}

TEST(TrainingTest, ChecksPassagesAndScores) {
  testing::TempDir dir;
  auto first_error = [&](const std::string& text) {
    const std::string path = dir.write("t.jsonl", text);
    return error_of([&] {
      for_each_training_example(path, [](TrainingExample&&, const std::string&) { return true; });
    });
  };
  const std::string path = (dir.path() / "t.jsonl").string();
  const std::pair<std::string, std::string> cases[] = {
      {R"({"query":"q","pos":["p"]})"
       "\n"
       R"({"query":"q","pos":[]})",
       ":2.pos: needs at least one passage"},
      {R"({"query":"q","pos":["a","b"],"pos_scores":[1]})",
       ":1.pos_scores: has 1 scores for 2 passages"},
      {R"({"query":"q","pos":["a"],"neg":["b"],"neg_scores":[]})",
       ":1.neg_scores: has 0 scores for 1 passages"},
      {R"({"query":"q","pos":["a"],"neg":["b",3]})", ":1.neg[1]: expected a string, got number"},
      {R"({"query":"q","pos":["a"],"pos_scores":[true]})", ":1.pos_scores[0]: expected a number"},
      {R"({"pos":["a"]})", ":1.query: missing"},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_TRUE(has(first_error(text), path + expected));
  }

  TrainingExample mismatched{"q", {"a"}, {"b"}, {}, {0.5, 0.25}, json::object()};
  EXPECT_TRUE(throws_input_error([&] { training_example_json(mismatched, "example 3"); },
                                 "example 3.neg_scores: has 2 scores for 1 passages"));
}

}  // namespace
}  // namespace lmk
