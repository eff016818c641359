#include "core/data/generators.h"

#include <gtest/gtest.h>

#include <set>

#include "core/tokenize/hf_tokenizer.h"
#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

// Whitespace-split words: one token per word, so lengths are easy to check by hand.
std::unique_ptr<Tokenizer> words_tokenizer() {
  return parse_hf_tokenizer(testing::word_level_json().dump(), "words");
}

size_t words(const std::string& text) {
  return words_tokenizer()->encode(text).ids.size();
}

TEST(PasskeyTest, FollowsLongEmbedsProtocol) {
  const auto tokenizer = words_tokenizer();
  SyntheticTaskOptions options;
  options.lengths = {64, 300};
  options.documents = 12;
  options.queries = 6;
  options.seed = 7;
  const auto splits = make_passkey_task(*tokenizer, options);
  ASSERT_EQ(splits.size(), 2u);
  EXPECT_EQ(splits[0].name, "64");
  for (size_t s = 0; s < splits.size(); ++s) {
    const auto& data = splits[s].data;
    const auto length = static_cast<size_t>(options.lengths[s]);
    ASSERT_EQ(data.corpus.size(), 12u);
    ASSERT_EQ(data.queries.size(), 6u);
    std::set<std::string> names;
    std::set<double> positions;
    for (const Query& q : data.queries) {
      // "what is the pass key for NAME?"
      ASSERT_EQ(q.text.rfind("what is the pass key for ", 0), 0u) << q.text;
      const std::string name = q.text.substr(25, q.text.size() - 26);
      EXPECT_TRUE(names.insert(name).second) << "names are unique within a length";
      ASSERT_EQ(data.qrels.at(q.id).size(), 1u);
      const Document& target = *std::find_if(
          data.corpus.begin(), data.corpus.end(),
          [&](const Document& d) { return d.id == data.qrels.at(q.id).begin()->first; });
      // The needle, whole, with its key twice, in the filler.
      const size_t at = target.text.find(name + "'s pass key is ");
      ASSERT_NE(at, std::string::npos) << target.text;
      const std::string key = target.text.substr(at + name.size() + 15, 5);
      EXPECT_NE(target.text.find(key + " is the pass key for " + name + "."), std::string::npos);
      EXPECT_NE(target.text.find("The grass is green. The sky is blue."), std::string::npos);
      EXPECT_EQ(words(target.text), length) << "exactly the context length in tokens";
      const double position = q.extra.at("evidence_position").get<double>();
      EXPECT_GE(position, 0.0);
      EXPECT_LT(position, 1.0);
      positions.insert(position);
      EXPECT_EQ(q.extra.at("context_length").get<int64_t>(), options.lengths[s]);
    }
    EXPECT_GT(positions.size(), 3u) << "needles land at different positions";
  }
  // Seeded: the same seed gives the same task, another seed another one.
  EXPECT_EQ(make_passkey_task(*tokenizer, options)[1].data.corpus[3].text,
            splits[1].data.corpus[3].text);
  options.seed = 8;
  EXPECT_NE(make_passkey_task(*tokenizer, options)[1].data.corpus[3].text,
            splits[1].data.corpus[3].text);
}

TEST(PasskeyTest, RejectsImpossibleOptions) {
  const auto tokenizer = words_tokenizer();
  SyntheticTaskOptions options;
  options.queries = 10;
  options.documents = 5;
  EXPECT_THROW(make_passkey_task(*tokenizer, options), InputError);
  options.queries = 1;
  options.lengths = {8};
  EXPECT_THROW(make_passkey_task(*tokenizer, options), InputError);
}

std::vector<Document> haystack_documents() {
  std::vector<Document> docs;
  for (int d = 0; d < 6; ++d) {
    Document doc;
    doc.id = "page" + std::to_string(d);
    doc.title = doc.id;
    for (int p = 0; p < 4; ++p) {
      for (int s = 0; s < 5; ++s)
        doc.text += "Paragraph " + std::to_string(p) + " of page " + std::to_string(d) +
                    " describes option number " + std::to_string(s) + " in some detail. ";
      doc.text += "\n\nHEADING\n\n";
    }
    docs.push_back(doc);
  }
  return docs;
}

TEST(NeedleTest, PutsOneAnsweredFactIntoNaturalText) {
  const auto tokenizer = words_tokenizer();
  SyntheticTaskOptions options;
  options.lengths = {200};
  options.documents = 8;
  options.queries = 8;
  const auto splits = make_needle_task(*tokenizer, haystack_documents(), options);
  const auto& data = splits[0].data;
  for (const Query& q : data.queries) {
    const Document& target = *std::find_if(
        data.corpus.begin(), data.corpus.end(),
        [&](const Document& d) { return d.id == data.qrels.at(q.id).begin()->first; });
    // The question names the person (its capitalized word) whose fact is in the target only.
    std::string name;
    std::string word;
    for (char c : q.text + " ") {
      if (std::isalpha(static_cast<unsigned char>(c))) {
        word += c;
        continue;
      }
      if (!word.empty() && std::isupper(static_cast<unsigned char>(word[0]))) name = word;
      word.clear();
    }
    ASSERT_FALSE(name.empty()) << q.text;
    EXPECT_NE(target.text.find(name), std::string::npos) << q.text;
    for (const Document& d : data.corpus) {
      if (d.id != target.id) EXPECT_EQ(d.text.find(name + " "), std::string::npos) << name;
      EXPECT_NE(d.text.find(" describes option"), std::string::npos) << "haystack text everywhere";
    }
    EXPECT_LE(words(target.text), 200u);
    EXPECT_GE(words(target.text), 190u);
    EXPECT_GE(q.extra.at("evidence_position").get<double>(), 0.0);
  }
}

TEST(CorpusTaskTest, SplitsByDocumentAndRemovesTheQuerySentence) {
  std::vector<Document> docs = haystack_documents();
  for (int d = 6; d < 60; ++d) {
    Document extra = docs[static_cast<size_t>(d % 6)];
    extra.id = "page" + std::to_string(d);
    docs.push_back(extra);
  }
  CorpusTaskOptions options;
  const RetrievalSplit task = make_corpus_task(docs, options);
  ASSERT_EQ(task.corpus.size(), docs.size());
  ASSERT_EQ(task.queries.size(), docs.size());
  std::map<std::string, int> per_split;
  for (const Query& q : task.queries) {
    const std::string target = task.qrels.at(q.id).begin()->first;
    // No document crosses splits: the query's split is its target's.
    EXPECT_EQ(q.extra.at("split").get<std::string>(), split_of_document(target, options.seed));
    ++per_split[q.extra.at("split").get<std::string>()];
    const Document& doc = *std::find_if(task.corpus.begin(), task.corpus.end(),
                                        [&](const Document& d) { return d.id == target; });
    const Document& original =
        *std::find_if(docs.begin(), docs.end(), [&](const Document& d) { return d.id == target; });
    EXPECT_EQ(doc.text.find(q.text), std::string::npos) << "sentence removed from its target";
    EXPECT_NE(original.text.find(q.text), std::string::npos) << "drawn from the document";
    EXPECT_LT(doc.text.size(), original.text.size());
    const double position = q.extra.at("evidence_position").get<double>();
    EXPECT_GE(position, 0.0);
    EXPECT_LT(position, 1.0);
  }
  EXPECT_GT(per_split["train"], per_split["test"]);
  EXPECT_GT(per_split["test"] + per_split["dev"], 0);
  // Stable: the split of a document depends only on its id and the seed.
  EXPECT_EQ(split_of_document("page3", 42), split_of_document("page3", 42));
  int moved = 0;
  for (const Document& d : docs)
    moved += split_of_document(d.id, 42) != split_of_document(d.id, 43);
  EXPECT_GT(moved, 0) << "another seed, another split";
}

TEST(CorpusTaskTest, PassagesHoldTheEvidence) {
  CorpusTaskOptions options;
  options.passage_bytes = 400;
  const std::vector<Document> docs = haystack_documents();
  const RetrievalSplit task = make_passage_task(docs, options);
  EXPECT_GT(task.corpus.size(), docs.size()) << "documents cut into passages";
  for (const Query& q : task.queries) {
    const std::string target = task.qrels.at(q.id).begin()->first;
    const Document& passage = *std::find_if(task.corpus.begin(), task.corpus.end(),
                                            [&](const Document& d) { return d.id == target; });
    EXPECT_EQ(passage.extra.at("document").get<std::string>() + "#q0", q.id);
    EXPECT_EQ(passage.text.find(q.text), std::string::npos);
    EXPECT_LE(passage.text.size(), 400u + 200u);
  }
}

TEST(PairsTest, UsesOneSplitAndNegativesFromOtherDocuments) {
  std::vector<Document> docs;
  for (int d = 0; d < 40; ++d) {
    Document doc;
    doc.id = "doc" + std::to_string(d);
    doc.title = doc.id;
    for (int s = 0; s < 30; ++s)
      doc.text += "Document " + std::to_string(d) + " sentence " + std::to_string(s) +
                  " talks about topic " + doc.id + ". ";
    doc.text += "\n\nEXIT STATUS\n\nThe program " + doc.id +
                " exits with zero on success and non-zero otherwise.\n";
    docs.push_back(doc);
  }
  PairsOptions options;
  options.negatives = 2;
  const auto examples = make_training_pairs(docs, options);
  ASSERT_FALSE(examples.empty());
  size_t kept = 0, headings = 0;
  for (const TrainingExample& e : examples) {
    // The query's document: the one whose id appears in the query.
    std::string source;
    for (const Document& d : docs) {
      if (e.query.find(d.id + " ") != std::string::npos ||
          e.query.find(d.id + ".") != std::string::npos)
        source = d.id;
    }
    ASSERT_FALSE(source.empty()) << e.query;
    EXPECT_EQ(split_of_document(source, options.seed), "train");
    ASSERT_EQ(e.neg.size(), 2u);
    for (const std::string& n : e.neg)
      EXPECT_EQ(n.find("topic " + source + "."), std::string::npos);
    if (e.pos[0].find(e.query) != std::string::npos) ++kept;
    if (e.query.find("EXIT STATUS") != std::string::npos) {
      ++headings;
      EXPECT_NE(e.pos[0].find("exits with zero"), std::string::npos);
    }
  }
  EXPECT_GT(headings, 0u);
  EXPECT_LT(kept, examples.size() / 3) << "the sentence is removed most of the time";
}

TEST(LengthStatsTest, LogBinsAndNearestRankPercentiles) {
  // 10 texts: 5, 16, 20, 31, 32, 100, 1000, 1000, 5000, 70000 tokens.
  const LengthStats s = length_stats({1000, 5, 16, 20, 31, 32, 100, 1000, 5000, 70000});
  EXPECT_EQ(s.texts, 10u);
  EXPECT_EQ(s.min, 5);
  EXPECT_EQ(s.max, 70000);
  EXPECT_DOUBLE_EQ(s.mean, 77204.0 / 10);
  // Bins: 0 [0,16) 1 [16,32) 2 [32,64) 3 [64,128) ... 6 [512,1024) ... 9 [4096,8192) ...
  // 13 [65536,131072)
  EXPECT_EQ(s.edges[0], 0);
  EXPECT_EQ(s.edges[1], 16);
  EXPECT_EQ(s.counts[0], 1);   // 5
  EXPECT_EQ(s.counts[1], 3);   // 16, 20, 31
  EXPECT_EQ(s.counts[2], 1);   // 32
  EXPECT_EQ(s.counts[3], 1);   // 100
  EXPECT_EQ(s.counts[6], 2);   // 1000 twice, in [512, 1024)
  EXPECT_EQ(s.counts[9], 1);   // 5000 in [4096, 8192)
  EXPECT_EQ(s.counts[13], 1);  // 70000 in [65536, 131072)
  // Nearest rank: p50 = 5th smallest (32), p90 = 9th (5000), p99 = 10th (70000).
  std::map<int, int64_t> p(s.percentiles.begin(), s.percentiles.end());
  EXPECT_EQ(p[50], 32);
  EXPECT_EQ(p[90], 5000);
  EXPECT_EQ(p[99], 70000);
  EXPECT_EQ(p[10], 5);
}

}  // namespace
}  // namespace lmk
