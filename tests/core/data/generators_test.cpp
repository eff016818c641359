#include "core/data/generators.h"

#include <gtest/gtest.h>

#include <set>

#include "core/tokenize/hf_tokenizer.h"
#include "core/tokenize/sentencepiece_tokenizer.h"
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

// With a sentence piece tokenizer a sentence alone takes a token more than inside the text (its
// trailing space); the needle still lands within about half a filler sentence (some 9 of the 77
// tokens its digits leave) of each depth asked for in a 128-token document. Counting sentences
// alone put it up to 0.44 early here.
TEST(PasskeyTest, DepthsHoldWithASentencePieceTokenizer) {
  testing::TempDir dir;
  // Lines of the filler's and the needle's words in a shuffled order, so pieces are words.
  const std::vector<std::string> words = {"The", "grass", "is",   "green", "sky",      "blue",
                                          "sun", "yellow", "Here", "we",   "go",       "There",
                                          "and", "back",  "again", "pass", "key",      "for",
                                          "Remember", "it", "Anna", "Bob",  "Carla"};
  std::string text;
  for (int line = 0; line < 2000; ++line) {
    for (int i = 0; i < 12; ++i)
      text += words[(line * 7 + i * i * 3 + i) % words.size()] + (i % 4 == 3 ? ". " : " ");
    text += std::to_string(10000 + line * 37) + ".\n";
  }
  SentencePieceTrainOptions train;
  train.inputs = {dir.write("corpus.txt", text)};
  train.output_model = (dir.path() / "tok.model").string();
  train.vocab_size = 320;
  train.threads = 1;
  train_sentencepiece(train);
  const auto tokenizer = load_sentencepiece_tokenizer(train.output_model);
  SyntheticTaskOptions options;
  options.lengths = {128};
  options.documents = options.queries = 11;
  for (int d = 0; d <= 10; ++d) options.depths.push_back(d / 10.0);
  const auto splits = make_passkey_task(*tokenizer, options);
  for (const Query& query : splits[0].data.queries)
    EXPECT_NEAR(query.extra.at("evidence_position").get<double>(),
                query.extra.at("depth").get<double>(), 0.06)
        << query.id;
}

// RULER's length x depth map: query q's needle at depth q % 11 / 10 of its document, and with
// several keys the other facts are about other people, so the query still has one target.
TEST(NeedleTest, DepthsPlaceEachNeedleAndKeysAddOtherFacts) {
  const auto tokenizer = words_tokenizer();
  SyntheticTaskOptions options;
  options.lengths = {400};
  options.documents = 30;
  options.queries = 22;
  for (int d = 0; d <= 10; ++d) options.depths.push_back(d / 10.0);
  options.keys = 3;
  const auto splits = make_needle_task(*tokenizer, haystack_documents(), options);
  const auto& data = splits[0].data;
  ASSERT_EQ(data.queries.size(), 22u);
  for (size_t q = 0; q < data.queries.size(); ++q) {
    const Query& query = data.queries[q];
    const double depth = query.extra.at("depth").get<double>();
    EXPECT_DOUBLE_EQ(depth, (q % 11) / 10.0);
    // Within about half a sentence of the depth asked for (sentences here are about 13 of 400
    // words, and the other keys' facts are sentences too).
    EXPECT_NEAR(query.extra.at("evidence_position").get<double>(), depth, 0.05) << q;
  }
  // Three facts per document: "'s" or " was born" / " keeps" / " plays" / "locker" name them.
  const Document& first = data.corpus[0];
  size_t facts = 0;
  for (const char* marker : {"'s favourite colour is", " was born in the city of",
                             " keeps a pet ", "The locker assigned to ", " plays the "}) {
    for (size_t at = first.text.find(marker); at != std::string::npos;
         at = first.text.find(marker, at + 1))
      ++facts;
  }
  EXPECT_EQ(facts, 3u) << first.text;
  options.keys = 0;
  EXPECT_THROW(make_needle_task(*tokenizer, haystack_documents(), options), InputError);
  options.keys = 1;
  options.depths = {1.5};
  EXPECT_THROW(make_needle_task(*tokenizer, haystack_documents(), options), InputError);
}

// Synthetic fine-tuning pairs: each query with its own document as the positive and other
// documents of its length as negatives, never the target.
TEST(SyntheticPairsTest, PairEachQueryWithItsDocumentAndOthersAsNegatives) {
  const auto tokenizer = words_tokenizer();
  SyntheticTaskOptions options;
  options.lengths = {64, 128};
  options.documents = 6;
  options.queries = 6;
  options.seed = 9;
  const auto task = make_passkey_task(*tokenizer, options);
  const std::vector<TrainingExample> pairs = synthetic_training_pairs(task, 2, 3);
  ASSERT_EQ(pairs.size(), 12u);
  for (const TrainingExample& e : pairs) {
    const std::string name = e.query.substr(25, e.query.size() - 26);
    ASSERT_EQ(e.pos.size(), 1u);
    EXPECT_NE(e.pos[0].find(name + "'s pass key is "), std::string::npos) << "its own document";
    ASSERT_EQ(e.neg.size(), 2u);
    EXPECT_NE(e.neg[0], e.neg[1]);
    for (const std::string& negative : e.neg) {
      EXPECT_EQ(negative.find(name + "'s pass key is "), std::string::npos);
      EXPECT_EQ(words(negative), words(e.pos[0])) << "a document of the same length";
    }
  }
  EXPECT_THROW(synthetic_training_pairs(task, 6, 3), InputError) << "5 other documents only";
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
      const Document& original = *std::find_if(
          docs.begin(), docs.end(), [&](const Document& d) { return d.id == document; });
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
