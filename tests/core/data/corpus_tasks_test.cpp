// Tasks drawn from real text (core/data/corpus_tasks.cpp, declared in generators.h): MLDR-style
// document and passage retrieval, windows of fixed token lengths, classification by the id's
// suffix and unsupervised training pairs.
#include "core/data/generators.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/util/error.h"
#include "tests/support/generator_tests.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::haystack_documents;
using testing::words;
using testing::words_tokenizer;

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

// Many queries per long document, one per stratum of its text: their evidence spreads evenly
// over the positions, and every query's sentence is gone from the target.
TEST(CorpusTaskTest, StratifiedQueriesSpreadTheEvidenceOverTheDocument) {
  Document long_doc;
  long_doc.id = "long";
  for (int p = 0; p < 40; ++p) {
    for (int s = 0; s < 3; ++s)
      long_doc.text += "Paragraph " + std::to_string(p) + " explains detail number " +
                       std::to_string(s) + " of the long manual page. ";
    long_doc.text += "\n\n";
  }
  CorpusTaskOptions options;
  options.queries_per_document = 10;
  options.stratified = true;
  const RetrievalSplit task = make_corpus_task({long_doc}, options);
  ASSERT_EQ(task.queries.size(), 10u);
  ASSERT_EQ(task.corpus.size(), 1u);
  for (size_t q = 0; q < task.queries.size(); ++q) {
    const Query& query = task.queries[q];
    EXPECT_EQ(query.id, "long#q" + std::to_string(q));
    const double position = query.extra.at("evidence_position").get<double>();
    // The stratum [q/10, (q+1)/10), give or take the paragraph the drawn byte fell in.
    EXPECT_GE(position, q / 10.0 - 0.03) << q;
    EXPECT_LT(position, (q + 1) / 10.0 + 0.03) << q;
    EXPECT_EQ(task.corpus[0].text.find(query.text), std::string::npos) << "removed: " << q;
    EXPECT_NE(long_doc.text.find(query.text), std::string::npos);
  }
  // Unstratified, the same count lands anywhere.
  options.stratified = false;
  EXPECT_EQ(make_corpus_task({long_doc}, options).queries.size(), 10u);
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

// Documents of distinct sentences (11 words each), of 50 to 250 sentences, in paragraphs of 5.
std::vector<Document> numbered_documents(int count) {
  std::vector<Document> docs;
  for (int d = 0; d < count; ++d) {
    Document doc;
    doc.id = "doc" + std::to_string(d);
    doc.title = doc.id;
    const int sentences = 50 * (d % 5 + 1);
    for (int s = 0; s < sentences; ++s) {
      doc.text += "Sentence " + std::to_string(s) + " of document " + std::to_string(d) +
                  " tells the reader about a detail here. ";
      if (s % 5 == 4) doc.text += "\n\n";
    }
    docs.push_back(doc);
  }
  return docs;
}

// Windows of L tokens: every target holds at least L tokens (and not much more), its queries'
// sentences were drawn from it and removed, spread over it in order; documents shorter than L
// are counted and left out; windows keep their document's split and never overlap.
TEST(WindowTaskTest, EveryTargetHoldsTheLengthAndItsEvidence) {
  const auto tokenizer = words_tokenizer();
  const std::vector<Document> docs = numbered_documents(30);
  WindowTaskOptions options;
  options.lengths = {700, 1400};
  options.queries_per_window = 5;
  options.windows_per_document = 2;
  options.splits = {"train", "dev", "test"};
  const std::vector<WindowPart> parts = make_window_task(docs, *tokenizer, options);
  ASSERT_EQ(parts.size(), 2u);
  for (const WindowPart& part : parts) {
    const auto L = static_cast<size_t>(part.length);
    size_t short_docs = 0;
    for (const Document& d : docs) short_docs += words(d.text) < L;
    EXPECT_EQ(part.documents, docs.size());
    EXPECT_EQ(part.short_documents, short_docs) << L;
    EXPECT_GT(short_docs, 0u) << "the test needs documents shorter than " << L;
    std::map<std::string, const Document*> window_of;
    std::map<std::string, size_t> windows_of_document;
    for (const Document& w : part.data.corpus) {
      window_of[w.id] = &w;
      const size_t tokens = words(w.text);
      EXPECT_GE(tokens, L) << w.id;
      EXPECT_LE(tokens, L + 40) << w.id << ": about L, extended by what was removed";
      const std::string document = w.extra.at("document").get<std::string>();
      EXPECT_EQ(w.id.rfind(document + "#w", 0), 0u);
      EXPECT_EQ(w.extra.at("split").get<std::string>(), split_of_document(document, 42));
      EXPECT_LE(++windows_of_document[document], 2u);
    }
    ASSERT_FALSE(part.data.queries.empty());
    std::map<std::string, std::vector<double>> positions;
    for (const Query& q : part.data.queries) {
      const std::string target = part.data.qrels.at(q.id).begin()->first;
      const Document& window = *window_of.at(target);
      const std::string document = window.extra.at("document").get<std::string>();
      const Document& original = *std::find_if(docs.begin(), docs.end(),
                                               [&](const Document& d) { return d.id == document; });
      EXPECT_NE(original.text.find(q.text), std::string::npos) << "drawn from the document";
      EXPECT_EQ(q.extra.at("split").get<std::string>(), split_of_document(document, 42));
      for (const Document& other : part.data.corpus) {
        if (other.extra.at("document").get<std::string>() == document)
          EXPECT_EQ(other.text.find(q.text), std::string::npos)
              << q.text << " is in " << other.id << ": removed, and windows do not overlap";
      }
      positions[target].push_back(q.extra.at("evidence_position").get<double>());
    }
    for (const auto& [window, at] : positions) {
      ASSERT_EQ(at.size(), 5u) << window;
      EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << window;
      EXPECT_LT(at.front(), 0.25) << window;
      EXPECT_GT(at.back(), 0.7) << window << ": the evidence spans the window";
      EXPECT_LE(at.back(), 1.0) << "1: the window's last sentence";
    }
    EXPECT_EQ(part.windows.at("train") + part.windows.at("dev") + part.windows.at("test"),
              part.data.corpus.size());
  }
}

TEST(WindowTaskTest, MaxWindowsIsASeededChoiceIndependentOfTheOrder) {
  const auto tokenizer = words_tokenizer();
  std::vector<Document> docs = numbered_documents(30);
  WindowTaskOptions options;
  options.lengths = {300};
  options.queries_per_window = 3;
  options.windows_per_document = 3;
  options.max_windows = 2;
  const WindowPart part = make_window_task(docs, *tokenizer, options).front();
  EXPECT_EQ(part.windows.count("train"), 0u) << "dev and test by default";
  EXPECT_EQ(part.windows.at("dev"), 2u);
  EXPECT_EQ(part.windows.at("test"), 2u);
  EXPECT_EQ(part.data.corpus.size(), 4u);
  std::reverse(docs.begin(), docs.end());
  const WindowPart again = make_window_task(docs, *tokenizer, options).front();
  ASSERT_EQ(again.data.corpus.size(), part.data.corpus.size());
  for (size_t i = 0; i < part.data.corpus.size(); ++i) {
    EXPECT_EQ(again.data.corpus[i].id, part.data.corpus[i].id);
    EXPECT_EQ(again.data.corpus[i].text, part.data.corpus[i].text);
  }
  EXPECT_EQ(part.data.queries.size(), 3u * part.data.corpus.size());
  // Shorter windows hold fewer queries: at most one per tokens_per_query tokens.
  options.tokens_per_query = 150;
  EXPECT_EQ(make_window_task(docs, *tokenizer, options).front().data.queries.size(),
            2u * part.data.corpus.size());
  options.seed = 43;
  EXPECT_NE(make_window_task(docs, *tokenizer, options).front().data.queries.front().text,
            part.data.queries.front().text);
}

TEST(WindowTaskTest, RejectsImpossibleOptions) {
  const auto tokenizer = words_tokenizer();
  const std::vector<Document> docs = numbered_documents(4);
  WindowTaskOptions options;
  options.lengths = {};
  EXPECT_THROW(make_window_task(docs, *tokenizer, options), InputError);
  options.lengths = {8};
  EXPECT_THROW(make_window_task(docs, *tokenizer, options), InputError);
  options.lengths = {100};
  options.queries_per_window = 0;
  EXPECT_THROW(make_window_task(docs, *tokenizer, options), InputError);
  options.queries_per_window = 2;
  options.splits = {"validation"};
  EXPECT_THROW(make_window_task(docs, *tokenizer, options), InputError);
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

// The label is what follows the id's last "." (sections of man pages, "a.b.5" -> "5"); ids with
// no such suffix are skipped; a document goes to train when split_of_document says "train" and
// to test otherwise (dev joins test), keeping its id and text.
TEST(ClassificationTaskTest, LabelsByTheIdsSuffixAndSplitsByDocument) {
  std::vector<Document> docs;
  for (int d = 0; d < 60; ++d) {
    Document doc;
    doc.id = "page" + std::to_string(d) + "." + std::to_string(d % 3 + 1);
    doc.text = "text of " + doc.id;
    docs.push_back(doc);
  }
  docs.push_back({"lib.name.5", "", "dotted name", json::object()});
  docs.push_back({"README", "", "no suffix", json::object()});
  docs.push_back({"trailing.", "", "empty suffix", json::object()});
  const uint64_t seed = 11;
  const auto [train, test] = make_classification_task(docs, seed);
  EXPECT_EQ(train.size() + test.size(), 61u) << "README and trailing. are skipped";
  EXPECT_FALSE(train.empty());
  EXPECT_FALSE(test.empty());
  std::map<std::string, const LabelledText*> by_id;
  for (const LabelledText& t : train) {
    EXPECT_EQ(split_of_document(t.id, seed), "train") << t.id;
    by_id[t.id] = &t;
  }
  for (const LabelledText& t : test) {
    EXPECT_NE(split_of_document(t.id, seed), "train") << t.id;
    by_id[t.id] = &t;
  }
  ASSERT_EQ(by_id.size(), 61u) << "each document once";
  EXPECT_EQ(by_id.at("page7.2")->label, "2");
  EXPECT_EQ(by_id.at("page7.2")->text, "text of page7.2");
  EXPECT_EQ(by_id.at("page9.1")->label, "1");
  EXPECT_EQ(by_id.at("lib.name.5")->label, "5");
  EXPECT_EQ(by_id.at("lib.name.5")->text, "dotted name");
}

// Pairs need two documents in the split asked for (a positive's document and another for its
// negatives); the message names the split.
TEST(PairsTest, FewerThanTwoDocumentsInTheSplitIsAnInputError) {
  std::vector<Document> docs = haystack_documents();
  PairsOptions options;
  options.split = "validation";  // no document is ever in it
  try {
    make_training_pairs(docs, options);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fewer than two documents in split validation"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lmk
