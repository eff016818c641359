// RULER's word-extraction tasks as retrieval (core/data/word_tasks.h).
#include "core/data/word_tasks.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/data/synthetic_task.h"

namespace lmk {

namespace {

// Pseudo-words of three consonant-vowel syllables ("bakelo"), unique, seeded: the word tasks'
// vocabulary, shared by the documents of one length.
std::vector<std::string> pseudo_words(size_t count, uint64_t seed) {
  static const std::string consonants = "bdfgklmnprstvz", vowels = "aeiou";
  Rng rng(seed);
  std::set<std::string> seen;
  std::vector<std::string> words;
  while (words.size() < count) {
    std::string word;
    for (int s = 0; s < 3; ++s) {
      word += consonants[rng.below(consonants.size())];
      word += vowels[rng.below(vowels.size())];
    }
    if (seen.insert(word).second) words.push_back(word);
  }
  return words;
}

// The vocabulary of the word tasks' documents of one length: 50 + length / 8 pseudo-words,
// made once per length.
const std::vector<std::string>& word_vocabulary(std::map<int64_t, std::vector<std::string>>& made,
                                                int64_t length, uint64_t seed) {
  auto known = made.find(length);
  if (known == made.end())
    known = made.emplace(length, pseudo_words(50 + static_cast<size_t>(length) / 8, seed)).first;
  return known->second;
}

// The mean depth of the tokens at byte offsets `at` of `text`, as depth_of counts a one-token
// word's.
double mean_depth(const Tokenizer& tokenizer, const std::string& text,
                  const std::vector<size_t>& at, size_t* tokens) {
  const Encoding encoding = tokenizer.encode(text);
  *tokens = encoding.ids.size();
  if (at.empty()) return 0;
  double sum = 0;
  for (const size_t offset : at) sum += static_cast<double>(token_at_byte(encoding, offset));
  const double room = static_cast<double>(std::max<size_t>(1, encoding.ids.size() - 1));
  return std::min(1.0, sum / static_cast<double>(at.size()) / room);
}

// Joins items into text ("1. w " numbered, else "w "), recording the byte offset of every item
// whose word is in `marked`.
std::string join_items(const std::vector<std::string>& items, bool numbered,
                       const std::set<std::string>& marked, std::vector<size_t>* offsets) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) {
    if (numbered) text += std::to_string(i + 1) + ". ";
    if (marked.count(items[i])) offsets->push_back(text.size());
    text += items[i] + " ";
  }
  return text;
}

// About how many items of `vocabulary` fill `length` tokens.
size_t items_for(const Tokenizer& tokenizer, const std::vector<std::string>& vocabulary,
                 bool numbered, int64_t length) {
  std::vector<std::string> sample(vocabulary.begin(),
                                  vocabulary.begin() + std::min<ptrdiff_t>(50, vocabulary.size()));
  std::vector<size_t> unused;
  const std::string text = join_items(sample, numbered, {}, &unused);
  const double per_item =
      static_cast<double>(count_tokens(tokenizer, text)) / static_cast<double>(sample.size());
  return std::max<size_t>(8, static_cast<size_t>(static_cast<double>(length) / per_item));
}

}  // namespace

std::vector<GeneratedSplit> make_common_words_task(const Tokenizer& tokenizer,
                                                   const SyntheticTaskOptions& options) {
  if (options.keys != 1 || options.values != 1 || options.queries_per_document != 1)
    throw FieldError("keys", "the common-words task has no keys, values or queries per document");
  std::map<int64_t, std::vector<std::string>> pools;
  return synthetic_task(
      "cwe", options,
      [&](const std::vector<std::string>&, int64_t length, double relative, Rng& rng) {
        const std::vector<std::string>& vocabulary =
            word_vocabulary(pools, length, mix_seed(options.seed, 0xC3E0 + length));
        // The document's five common words, then the rest of the vocabulary as rare words.
        std::vector<std::string> shuffled = vocabulary;
        for (size_t i = shuffled.size(); i > 1; --i)
          std::swap(shuffled[i - 1], shuffled[rng.below(i)]);
        const std::vector<std::string> common(shuffled.begin(), shuffled.begin() + 5);
        const size_t n = items_for(tokenizer, vocabulary, /*numbered=*/true, length);
        // Common words take about 30 % of the list, each more often than any rare word.
        const size_t each = std::max<size_t>(3, (3 * n) / 50);
        const size_t rare_most = std::max<size_t>(1, each / 3);
        std::vector<std::string> rare;
        for (size_t round = 0; round < rare_most && rare.size() + 5 * each < n; ++round)
          for (size_t w = 5; w < shuffled.size() && rare.size() + 5 * each < n; ++w)
            rare.push_back(shuffled[w]);
        for (size_t i = rare.size(); i > 1; --i) std::swap(rare[i - 1], rare[rng.below(i)]);
        // Positions of the common words' items: anywhere (RULER), or a band of 20 % of the list
        // around the depth asked for (the length x depth map).
        const size_t total = rare.size() + 5 * each;
        std::vector<size_t> slots(total);
        for (size_t i = 0; i < total; ++i) slots[i] = i;
        if (!options.depths.empty()) {
          const double centre = relative * static_cast<double>(total);
          std::stable_sort(slots.begin(), slots.end(), [&](size_t a, size_t b) {
            return std::abs(static_cast<double>(a) - centre) <
                   std::abs(static_cast<double>(b) - centre);
          });
          const size_t band = std::max<size_t>(5 * each, total / 5);
          for (size_t i = std::min(band, total); i > 1; --i)
            std::swap(slots[i - 1], slots[rng.below(i)]);
        } else {
          for (size_t i = total; i > 1; --i) std::swap(slots[i - 1], slots[rng.below(i)]);
        }
        std::vector<std::string> items(total);
        std::vector<bool> taken(total, false);
        for (size_t c = 0; c < 5 * each; ++c) {
          items[slots[c]] = common[c % 5];
          taken[slots[c]] = true;
        }
        size_t next_rare = 0;
        for (size_t i = 0; i < total; ++i)
          if (!taken[i]) items[i] = rare[next_rare++];
        // Cut rare items from the end until the text fits the length (an item is at least two
        // tokens, its number and its word: half the excess in items each time).
        const std::set<std::string> marked(common.begin(), common.end());
        std::vector<size_t> offsets;
        std::string text = join_items(items, true, marked, &offsets);
        for (int64_t excess = static_cast<int64_t>(count_tokens(tokenizer, text)) - length;
             excess > 0; excess = static_cast<int64_t>(count_tokens(tokenizer, text)) - length) {
          size_t drop = 0;
          const auto wanted = static_cast<size_t>(std::max<int64_t>(1, excess / 2));
          for (size_t i = items.size(); i-- > 0 && drop < wanted;)
            if (!marked.count(items[i])) {
              items.erase(items.begin() + static_cast<ptrdiff_t>(i));
              ++drop;
            }
          if (drop == 0) break;  // only common words left: the length is too short for them
          offsets.clear();
          text = join_items(items, true, marked, &offsets);
        }
        Made made;
        made.placed.evidence_position = mean_depth(tokenizer, text, offsets, &made.placed.tokens);
        made.placed.text = std::move(text);
        std::string question = "the most common words in the list: ";
        for (size_t c = 0; c < 5; ++c) question += (c ? ", " : "") + common[c];
        made.asked = {{question, made.placed.evidence_position}};
        return made;
      });
}

std::vector<GeneratedSplit> make_frequent_words_task(const Tokenizer& tokenizer,
                                                     const SyntheticTaskOptions& options) {
  if (options.keys != 1 || options.values != 1 || options.queries_per_document != 1)
    throw FieldError("keys", "the frequent-words task has no keys, values or queries per document");
  if (!options.depths.empty())
    throw FieldError("depths", "the frequent-words task spreads its words over the whole text");
  std::map<int64_t, std::vector<std::string>> pools;
  return synthetic_task(
      "fwe", options, [&](const std::vector<std::string>&, int64_t length, double, Rng& rng) {
        const std::vector<std::string>& vocabulary =
            word_vocabulary(pools, length, mix_seed(options.seed, 0xF3E0 + length));
        // Zipf (alpha 2) over a random ranking of the shared vocabulary.
        std::vector<std::string> ranked = vocabulary;
        for (size_t i = ranked.size(); i > 1; --i) std::swap(ranked[i - 1], ranked[rng.below(i)]);
        std::vector<double> cumulative;
        double sum = 0;
        for (size_t r = 0; r < ranked.size(); ++r) {
          sum += 1.0 / static_cast<double>((r + 1) * (r + 1));
          cumulative.push_back(sum);
        }
        size_t n = items_for(tokenizer, ranked, /*numbered=*/false, length);
        std::vector<size_t> drawn;
        for (size_t i = 0; i < n; ++i) {
          const double u = rng.uniform() * sum;
          drawn.push_back(static_cast<size_t>(
              std::lower_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin()));
        }
        std::vector<std::string> items;
        for (const size_t r : drawn) items.push_back(ranked[std::min(r, ranked.size() - 1)]);
        // Cut from the end until the text fits (an item is at least one token).
        auto excess = [&] {
          std::vector<size_t> unused;
          return static_cast<int64_t>(
                     count_tokens(tokenizer, join_items(items, false, {}, &unused))) -
                 length;
        };
        for (int64_t over = excess(); over > 0 && n > 8; over = excess()) {
          n -= std::min<size_t>(static_cast<size_t>(over), n - 8);
          items.resize(n);
        }
        // The answer: the three most frequent words of the text as cut (ties: the higher rank).
        std::map<std::string, size_t> count;
        for (const std::string& w : items) ++count[w];
        std::vector<std::string> top = ranked;
        std::stable_sort(top.begin(), top.end(), [&](const std::string& a, const std::string& b) {
          return count[a] > count[b];
        });
        top.resize(3);
        const std::set<std::string> marked(top.begin(), top.end());
        std::vector<size_t> offsets;
        Made made;
        made.placed.text = join_items(items, false, marked, &offsets);
        made.placed.evidence_position =
            mean_depth(tokenizer, made.placed.text, offsets, &made.placed.tokens);
        made.asked = {
            {"the three most frequent words in the text: " + top[0] + ", " + top[1] + ", " + top[2],
             made.placed.evidence_position}};
        return made;
      });
}

}  // namespace lmk
