// RULER's word-extraction tasks as retrieval (core/data/word_tasks.cpp): common words and
// frequent words, counted in the generated text.
#include "core/data/word_tasks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "tests/support/generator_tests.h"

namespace lmk {
namespace {

using testing::words;
using testing::words_tokenizer;

// The words of a generated word-task text ("1. bakelo 2. timuse" or "bakelo timuse"), in order.
std::vector<std::string> task_words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;)
    if (!w.empty() && std::isalpha(static_cast<unsigned char>(w[0]))) out.push_back(w);
  return out;
}

// The words a query names after its colon ("...: a, b, c").
std::vector<std::string> named_words(const std::string& query) {
  std::vector<std::string> out;
  std::istringstream in(query.substr(query.find(':') + 1));
  for (std::string w; std::getline(in, w, ',');) out.push_back(w.substr(w.find_first_not_of(' ')));
  return out;
}

// RULER's common words as retrieval: the query names five words, each as frequent in its
// target as the others and more frequent than any other word there; the vocabulary is shared,
// so other documents hold some of them too (rarely); texts fit the length; with a depth the
// common words gather around it (their mean depth is the evidence position), without one they
// spread (mean near the middle). The needle's options are refused.
TEST(WordTasksTest, CommonWordsAreTheTargetsMostFrequent) {
  const auto tokenizer = words_tokenizer();
  SyntheticTaskOptions options;
  options.lengths = {300};
  options.documents = 12;
  options.queries = 6;
  for (const bool with_depths : {false, true}) {
    options.depths = with_depths ? std::vector<double>{0.1, 0.9} : std::vector<double>{};
    const auto data = make_common_words_task(*tokenizer, options)[0].data;
    ASSERT_EQ(data.queries.size(), 6u);
    bool shared = false;
    for (size_t q = 0; q < data.queries.size(); ++q) {
      const Query& query = data.queries[q];
      const Document& target = data.corpus[q];
      ASSERT_EQ(data.qrels.at(query.id).begin()->first, target.id);
      EXPECT_LE(words(target.text), 300u);
      EXPECT_GE(words(target.text), 250u);
      std::map<std::string, size_t> count;
      for (const std::string& w : task_words(target.text)) ++count[w];
      const std::vector<std::string> common = named_words(query.text);
      ASSERT_EQ(common.size(), 5u) << query.text;
      const size_t each = count[common[0]];
      size_t rare_most = 0;
      for (const auto& [word, n] : count)
        if (std::find(common.begin(), common.end(), word) == common.end())
          rare_most = std::max(rare_most, n);
      for (const std::string& w : common) EXPECT_EQ(count[w], each) << w;
      EXPECT_GT(each, rare_most);
      for (const Document& other : data.corpus)
        if (other.id != target.id)
          for (const std::string& w : task_words(other.text))
            shared |= std::find(common.begin(), common.end(), w) != common.end();
      const double position = query.extra.at("evidence_position").get<double>();
      if (with_depths)
        EXPECT_NEAR(position, options.depths[q % 2], 0.12) << q;
      else
        EXPECT_NEAR(position, 0.5, 0.2) << q;
    }
    EXPECT_TRUE(shared) << "a vocabulary shared by the documents";
  }
  options.depths.clear();
  options.keys = 2;
  EXPECT_THROW(make_common_words_task(*tokenizer, options), InputError);
}

// RULER's frequent words as retrieval: the query names the target's three most frequent words
// (no other word is more frequent than the third); Zipf's head is a handful of words; texts fit
// the length; depths are refused.
TEST(WordTasksTest, FrequentWordsAreTheTargetsTopThree) {
  const auto tokenizer = words_tokenizer();
  SyntheticTaskOptions options;
  options.lengths = {200, 1000};
  options.documents = 8;
  options.queries = 8;
  for (const GeneratedSplit& split : make_frequent_words_task(*tokenizer, options)) {
    const size_t length = std::stoul(split.name);
    for (size_t q = 0; q < split.data.queries.size(); ++q) {
      const Document& target = split.data.corpus[q];
      EXPECT_LE(words(target.text), length);
      EXPECT_GE(words(target.text), length * 9 / 10);
      std::map<std::string, size_t> count;
      for (const std::string& w : task_words(target.text)) ++count[w];
      const std::vector<std::string> top = named_words(split.data.queries[q].text);
      ASSERT_EQ(top.size(), 3u);
      size_t third = count[top[2]], others = 0;
      for (const auto& [word, n] : count)
        if (std::find(top.begin(), top.end(), word) == top.end()) others = std::max(others, n);
      EXPECT_GE(count[top[0]], count[top[1]]);
      EXPECT_GE(count[top[1]], third);
      EXPECT_GE(third, others);
      EXPECT_GT(count[top[0]], words(target.text) / 3) << "Zipf (alpha 2): about 61 % the first";
    }
  }
  options.depths = {0.5};
  EXPECT_THROW(make_frequent_words_task(*tokenizer, options), InputError);
}

}  // namespace
}  // namespace lmk
