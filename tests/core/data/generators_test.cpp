#include "core/data/generators.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/tokenize/sentencepiece_tokenizer.h"
#include "core/util/error.h"
#include "tests/support/generator_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::haystack_documents;
using testing::words;
using testing::words_tokenizer;

// The person a needle question asks about: its last capitalized word.
std::string asked_name(const std::string& question) {
  std::string name, word;
  for (char c : question + " ") {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      word += c;
      continue;
    }
    if (!word.empty() && std::isupper(static_cast<unsigned char>(word[0]))) name = word;
    word.clear();
  }
  return name;
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
    const std::string name = asked_name(q.text);
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
  const std::vector<std::string> words = {"The",      "grass",  "is",    "green", "sky",  "blue",
                                          "sun",      "yellow", "Here",  "we",    "go",   "There",
                                          "and",      "back",   "again", "pass",  "key",  "for",
                                          "Remember", "it",     "Anna",  "Bob",   "Carla"};
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
  for (const char* marker : {"'s favourite colour is", " was born in the city of", " keeps a pet ",
                             "The locker assigned to ", " plays the "}) {
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

// RULER's multi-value needle: the asked person's fact is stated once per value (their name
// appears that often in the target and nowhere else), each statement different (distinct
// values), the first at the depth asked for; more values than a fact has are refused.
TEST(NeedleTest, ValuesStateTheAskedFactOncePerValue) {
  const auto tokenizer = words_tokenizer();
  SyntheticTaskOptions options;
  options.lengths = {400};
  options.documents = 12;
  options.queries = 12;
  options.depths = {0.0, 0.5, 1.0};
  options.values = 4;
  const auto splits = make_needle_task(*tokenizer, haystack_documents(), options);
  const auto& data = splits[0].data;
  for (size_t q = 0; q < data.queries.size(); ++q) {
    const Query& query = data.queries[q];
    const Document& target = data.corpus[q];  // query q targets document q
    ASSERT_EQ(data.qrels.at(query.id).begin()->first, target.id);
    const std::string name = asked_name(query.text);
    std::set<std::string> statements;
    size_t mentions = 0;
    for (size_t at = target.text.find(name); at != std::string::npos;
         at = target.text.find(name, at + 1)) {
      ++mentions;
      // Every fact's value comes after the name and before its full stop.
      statements.insert(target.text.substr(at, target.text.find('.', at) - at));
    }
    EXPECT_EQ(mentions, 4u) << query.text << "\n" << target.text;
    EXPECT_EQ(statements.size(), 4u) << query.text;
    EXPECT_NEAR(query.extra.at("evidence_position").get<double>(), options.depths[q % 3], 0.08)
        << q;
  }
  options.values = 9;
  EXPECT_THROW(make_needle_task(*tokenizer, haystack_documents(), options), InputError);
}

// RULER's multi-query needle: each target document is asked for its first M keys; every query
// names a person whose fact the document holds, at the position the query records (the
// fact's first token over the document's tokens), the first at the depth asked for; M above
// the keys is refused.
TEST(NeedleTest, QueriesPerDocumentAskForEachKeyWhereItIs) {
  const auto tokenizer = words_tokenizer();
  SyntheticTaskOptions options;
  options.lengths = {400};
  options.documents = 10;
  options.queries = 10;
  options.depths = {0.25, 0.75};
  options.keys = 3;
  options.queries_per_document = 3;
  const auto splits = make_needle_task(*tokenizer, haystack_documents(), options);
  const auto& data = splits[0].data;
  std::map<std::string, size_t> per_document;
  for (const Query& query : data.queries) {
    const std::string& target_id = data.qrels.at(query.id).begin()->first;
    ++per_document[target_id];
    const Document& target = *std::find_if(data.corpus.begin(), data.corpus.end(),
                                           [&](const Document& d) { return d.id == target_id; });
    const std::string name = asked_name(query.text);
    const size_t at = target.text.find(name);
    ASSERT_NE(at, std::string::npos) << query.text;
    // Words (this tokenizer's tokens) ahead of the fact over the words but the fact's own; the
    // fact starts at the name but for "The locker assigned to {name}".
    const std::string locker = "The locker assigned to ";
    const size_t start =
        at >= locker.size() && target.text.compare(at - locker.size(), locker.size(), locker) == 0
            ? at - locker.size()
            : at;
    const size_t fact_words =
        words(target.text.substr(start, target.text.find('.', at) + 1 - start));
    const double expected = static_cast<double>(words(target.text.substr(0, start))) /
                            static_cast<double>(words(target.text) - fact_words);
    EXPECT_NEAR(query.extra.at("evidence_position").get<double>(), expected, 0.02) << query.id;
    if (query.extra.contains("depth"))
      EXPECT_NEAR(query.extra.at("evidence_position").get<double>(),
                  query.extra.at("depth").get<double>(), 0.06);
  }
  EXPECT_EQ(per_document.size(), 10u);
  for (const auto& [doc, count] : per_document) EXPECT_EQ(count, 3u) << doc;
  options.queries_per_document = 4;
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
