#include "core/data/generators.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "core/data/synthetic_task.h"
#include "core/tokenize/sentence_splitter.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/random.h"

namespace lmk {

namespace {

// 160 first names, enough for unique names among 100 documents of one length.
const std::vector<std::string>& first_names() {
  static const std::vector<std::string> names = {
      "Aaron",   "Abigail",   "Adam",     "Adrian",  "Aiden",    "Alan",      "Albert",    "Alexa",
      "Alice",   "Alma",      "Amelia",   "Andrea",  "Angela",   "Anna",      "Arthur",    "Audrey",
      "Barbara", "Beatrice",  "Benjamin", "Bernard", "Bianca",   "Boris",     "Brenda",    "Bruno",
      "Caleb",   "Camila",    "Carl",     "Carmen",  "Caroline", "Cecilia",   "Charles",   "Chloe",
      "Clara",   "Colin",     "Conrad",   "Daisy",   "Daniel",   "Daphne",    "David",     "Delia",
      "Dennis",  "Diana",     "Dmitri",   "Dolores", "Dorothy",  "Edgar",     "Edith",     "Edward",
      "Eleanor", "Elias",     "Elise",    "Emil",    "Emma",     "Erik",      "Esther",    "Eva",
      "Felix",   "Fiona",     "Florence", "Frances", "Frank",    "Frederick", "Gabriel",   "Gemma",
      "George",  "Gilbert",   "Grace",    "Gregory", "Greta",    "Hannah",    "Harold",    "Hazel",
      "Hector",  "Helen",     "Henry",    "Hugo",    "Ida",      "Igor",      "Ines",      "Irene",
      "Isaac",   "Isabel",    "Ivan",     "Jack",    "Jacob",    "James",     "Jane",      "Jasper",
      "Joan",    "Jonas",     "Julia",    "Julian",  "June",     "Karl",      "Katherine", "Kevin",
      "Laura",   "Leo",       "Leon",     "Lila",    "Linda",    "Lionel",    "Lucas",     "Lucy",
      "Magnus",  "Margaret",  "Maria",    "Martin",  "Matilda",  "Maxine",    "Miles",     "Miriam",
      "Nadia",   "Nathan",    "Nina",     "Noah",    "Nora",     "Oliver",    "Olivia",    "Oscar",
      "Otto",    "Pamela",    "Patrick",  "Paula",   "Peter",    "Philip",    "Quentin",   "Rachel",
      "Ralph",   "Rebecca",   "Richard",  "Rita",    "Robert",   "Rosa",      "Ruth",      "Samuel",
      "Sarah",   "Sebastian", "Silvia",   "Simon",   "Sofia",    "Stella",    "Stephen",   "Susan",
      "Sylvia",  "Teresa",    "Thomas",   "Tobias",  "Ursula",   "Valerie",   "Victor",    "Viola",
      "Walter",  "Wanda",     "William",  "Xavier",  "Yara",     "Yusuf",     "Zoe",       "Zora",
  };
  return names;
}

}  // namespace

std::vector<std::string> draw_names(size_t count, Rng& rng) {
  std::vector<std::string> names = first_names();
  if (count > names.size()) {
    // Beyond the list: numbered variants stay unique.
    const size_t base = names.size();
    for (size_t i = base; i < count; ++i)
      names.push_back(names[i % base] + " " + std::to_string(i / base + 1));
  }
  for (size_t i = names.size(); i > 1; --i) std::swap(names[i - 1], names[rng.below(i)]);
  names.resize(count);
  return names;
}

size_t count_tokens(const Tokenizer& tokenizer, std::string_view text) {
  return tokenizer.encode(text).ids.size();
}

size_t token_at_byte(const Encoding& encoding, size_t offset) {
  for (size_t i = 0; i < encoding.spans.size(); ++i) {
    if (encoding.spans[i].end > offset) return i;
  }
  return encoding.spans.size();
}

double depth_of(const Encoding& encoding, size_t offset, int64_t own_tokens) {
  const double room = static_cast<double>(
      std::max<int64_t>(1, static_cast<int64_t>(encoding.ids.size()) - own_tokens));
  return std::min(1.0, static_cast<double>(token_at_byte(encoding, offset)) / room);
}

namespace {

// `count` distinct names in a seeded order.

// Cuts text to its first `tokens` tokens (at the start of token `tokens`).
std::string cut_to_tokens(const Tokenizer& tokenizer, const std::string& text, size_t tokens) {
  const Encoding encoding = tokenizer.encode(text);
  if (encoding.ids.size() <= tokens) return text;
  return text.substr(0, encoding.spans[tokens].begin);
}

// The depth of `statement` in `text` (of `tokens` tokens) as place_needle counts it; nullopt
// when the text does not hold it (cut off by the length).
std::optional<double> statement_position(const Tokenizer& tokenizer, const std::string& text,
                                         const Encoding& encoding, const std::string& statement) {
  const size_t at = text.find(statement);
  if (at == std::string::npos) return std::nullopt;
  return depth_of(encoding, at, static_cast<int64_t>(count_tokens(tokenizer, statement)));
}

Placed place_needle(const Tokenizer& tokenizer, const std::vector<std::string>& sentences,
                    const std::string& needle, int64_t length, double relative) {
  // The needle goes at the sentence boundary nearest `relative` of length - needle tokens (so
  // its depth is `relative` of the document, by tokens). Where each boundary falls is read from
  // one encoding of the joined sentences: counting sentences alone overcounts (a sentence piece
  // tokenizer adds a word start to each), which put needles at 0.42 for 0.5 in a 128-token text.
  // The sentences taken are bounded by their cached single counts (an upper bound, the filler
  // repeats five), so a 32k-token document costs linear time; the text is cut exactly below.
  const auto needle_tokens = static_cast<int64_t>(count_tokens(tokenizer, needle));
  const auto budget = std::max<int64_t>(0, length - needle_tokens);
  std::map<std::string, int64_t> tokens_of;
  std::string joined;
  std::vector<size_t> starts;  // byte offset of each sentence taken in `joined`
  int64_t alone = 0;
  for (const std::string& sentence : sentences) {
    auto known = tokens_of.find(sentence);
    if (known == tokens_of.end())
      known = tokens_of.emplace(sentence, count_tokens(tokenizer, sentence)).first;
    starts.push_back(joined.size());
    joined += sentence;
    alone += known->second;
    if (alone > 2 * length + 16) break;
  }
  starts.push_back(joined.size());
  const Encoding boundaries = tokenizer.encode(joined);
  const double wanted = relative * static_cast<double>(budget);
  size_t chosen = 0;
  double chosen_off = wanted;
  size_t token = 0;  // the token holding the start of sentence i (both only grow)
  for (size_t i = 1; i < starts.size(); ++i) {
    while (token < boundaries.spans.size() && boundaries.spans[token].end <= starts[i]) ++token;
    const auto at = static_cast<int64_t>(token);
    if (at > budget) break;
    const double off = std::abs(static_cast<double>(at) - wanted);
    if (off < chosen_off) {
      chosen = i;
      chosen_off = off;
    }
  }
  const std::string before = joined.substr(0, starts[chosen]);
  std::string text = before + needle;
  for (size_t i = chosen; i < sentences.size(); ++i) text += sentences[i];
  Placed placed;
  placed.text = cut_to_tokens(tokenizer, text, static_cast<size_t>(length));
  // One encoding of the final text gives both its length and where the needle starts.
  const Encoding encoding = tokenizer.encode(placed.text);
  placed.tokens = encoding.ids.size();
  placed.evidence_position = depth_of(encoding, before.size(), needle_tokens);
  return placed;
}

}  // namespace

std::vector<GeneratedSplit> make_passkey_task(const Tokenizer& tokenizer,
                                              const SyntheticTaskOptions& options) {
  const std::vector<std::string> unit = {"The grass is green. ", "The sky is blue. ",
                                         "The sun is yellow. ", "Here we go. ",
                                         "There and back again. "};
  if (options.keys != 1) throw FieldError("keys", "the passkey task has one key per document");
  return synthetic_task(
      "passkey", options,
      [&](const std::vector<std::string>& names, int64_t length, double relative, Rng& rng) {
        const std::string& name = names[0];
        const std::string key = std::to_string(10000 + rng.below(90000));
        const std::string needle = name + "'s pass key is " + key + ". Remember it. " + key +
                                   " is the pass key for " + name + ". ";
        // Enough filler sentences to pass the length (each is at least one token).
        std::vector<std::string> sentences;
        const size_t unit_tokens = std::max<size_t>(
            1, count_tokens(tokenizer, unit[0] + unit[1] + unit[2] + unit[3] + unit[4]));
        const size_t repeats = static_cast<size_t>(length) / unit_tokens + 2;
        for (size_t r = 0; r < repeats; ++r)
          sentences.insert(sentences.end(), unit.begin(), unit.end());
        Made made;
        made.placed = place_needle(tokenizer, sentences, needle, length, relative);
        made.asked = {{"what is the pass key for " + name + "?", made.placed.evidence_position}};
        return made;
      });
}

std::vector<GeneratedSplit> make_needle_task(const Tokenizer& tokenizer,
                                             const std::vector<Document>& haystack,
                                             const SyntheticTaskOptions& options) {
  if (haystack.empty()) throw FieldError("haystack", "no haystack documents");
  if (options.values < 1 || options.values > 8) throw FieldError("values", "must be in [1, 8]");
  struct Fact {
    const char* statement;  // {name} and {value} are replaced
    const char* question;
    std::vector<std::string> values;
  };
  static const std::vector<Fact> facts = {
      {"{name}'s favourite colour is {value}.",
       "what is {name}'s favourite colour?",
       {"teal", "crimson", "amber", "violet", "ochre", "indigo", "scarlet", "olive"}},
      {"{name} was born in the city of {value}.",
       "in which city was {name} born?",
       {"Lisbon", "Oslo", "Krakow", "Nairobi", "Quito", "Hanoi", "Tbilisi", "Adelaide"}},
      {"{name} keeps a pet {value} at home.",
       "which animal does {name} keep as a pet?",
       {"tortoise", "parrot", "ferret", "goldfish", "hamster", "iguana", "rabbit", "canary"}},
      {"The locker assigned to {name} has the number {value}.",
       "what is the number of {name}'s locker?",
       {}},
      {"{name} plays the {value} in a weekend band.",
       "which instrument does {name} play?",
       {"cello", "trombone", "banjo", "oboe", "harp", "accordion", "clarinet", "marimba"}},
  };
  auto fill = [](std::string text, const std::string& name, const std::string& value) {
    for (const auto& [key, with] :
         {std::pair<std::string, std::string>{"{name}", name}, {"{value}", value}}) {
      for (size_t at = text.find(key); at != std::string::npos;
           at = text.find(key, at + with.size()))
        text.replace(at, key.size(), with);
    }
    return text;
  };
  return synthetic_task(
      "needle", options,
      [&](const std::vector<std::string>& names, int64_t length, double relative, Rng& rng) {
        const std::string& name = names[0];
        auto draw_value = [&](const Fact& fact) {
          return fact.values.empty() ? std::to_string(100 + rng.below(900))
                                     : fact.values[rng.below(fact.values.size())];
        };
        auto draw_fact = [&](const std::string& who) {
          const Fact& fact = facts[rng.below(facts.size())];
          const std::string value = draw_value(fact);
          return std::make_tuple(&fact, fill(fact.statement, who, value),
                                 fill(fact.question, who, value), value);
        };
        const auto [asked, statement, question, first_value] = draw_fact(name);
        // Haystack: documents from a random start, sentence by sentence, past the length.
        std::vector<std::string> sentences;
        size_t bytes = 0;
        const size_t wanted_bytes = static_cast<size_t>(length) * 8 + 1024;  // tokens are < 8 bytes
        // Short haystacks repeat from the start, as LongEmbed's essays do for long contexts.
        size_t d = rng.below(haystack.size());
        for (size_t visited = 0; bytes < wanted_bytes; ++visited, d = (d + 1) % haystack.size()) {
          if (visited == haystack.size() && bytes == 0) throw FieldError("haystack", "no text");
          for (auto& s : sentence_texts(haystack[d].text)) {
            bytes += s.size();
            sentences.push_back(std::move(s));
          }
        }
        // The other keys: facts about other people, at random sentence boundaries within the
        // part of the haystack that fits the length (about 3 bytes of text per token).
        size_t reachable = 0;
        for (size_t fit = 0; reachable < sentences.size() &&
                             fit + sentences[reachable].size() < static_cast<size_t>(length) * 3;
             ++reachable)
          fit += sentences[reachable].size();
        std::vector<std::pair<std::string, std::string>> others;  // statement, question
        for (size_t k = 1; k < names.size(); ++k) {
          const auto fact = draw_fact(names[k]);
          others.emplace_back(std::get<1>(fact), std::get<2>(fact));
          sentences.insert(sentences.begin() + static_cast<ptrdiff_t>(rng.below(reachable + 1)),
                           " " + others.back().first + " ");
        }
        // The asked fact's other values (distinct), likewise.
        std::vector<std::string> values = {first_value};
        while (values.size() < options.values) {
          const std::string value = draw_value(*asked);
          if (std::find(values.begin(), values.end(), value) != values.end()) continue;
          values.push_back(value);
          sentences.insert(sentences.begin() + static_cast<ptrdiff_t>(rng.below(reachable + 1)),
                           " " + fill(asked->statement, name, value) + " ");
        }
        const std::string needle = " " + statement + " ";
        Made made;
        made.placed = place_needle(tokenizer, sentences, needle, length, relative);
        made.asked = {{question, made.placed.evidence_position}};
        // RULER's multi-query: the next keys are asked too, each where its fact landed (a fact
        // the length cut off is not asked).
        if (options.queries_per_document > 1) {
          const Encoding encoding = tokenizer.encode(made.placed.text);
          for (size_t k = 0; k + 1 < options.queries_per_document && k < others.size(); ++k) {
            if (const auto at =
                    statement_position(tokenizer, made.placed.text, encoding, others[k].first))
              made.asked.push_back({others[k].second, *at});
          }
        }
        return made;
      });
}

std::vector<TrainingExample> synthetic_training_pairs(const std::vector<GeneratedSplit>& task,
                                                      size_t negatives, uint64_t seed) {
  std::vector<TrainingExample> examples;
  for (const GeneratedSplit& split : task) {
    const RetrievalSplit& data = split.data;
    std::map<std::string, const Document*> by_id;
    for (const Document& doc : data.corpus) by_id[doc.id] = &doc;
    if (data.corpus.size() < negatives + 1)
      throw input_error("synthetic pairs",
                        "length " + split.name + " has " + std::to_string(data.corpus.size()) +
                            " documents, too few for " + std::to_string(negatives) + " negatives");
    Rng rng(mix_seed(seed, fnv1a64(split.name)));
    for (const Query& query : data.queries) {
      const auto judged = data.qrels.find(query.id);
      if (judged == data.qrels.end() || judged->second.empty()) continue;
      const std::string& target = judged->second.begin()->first;
      TrainingExample example;
      example.query = query.text;
      example.pos = {by_id.at(target)->text};
      std::set<size_t> taken;
      while (example.neg.size() < negatives) {
        const size_t other = rng.below(data.corpus.size());
        if (data.corpus[other].id == target || !taken.insert(other).second) continue;
        example.neg.push_back(data.corpus[other].text);
      }
      examples.push_back(std::move(example));
    }
  }
  return examples;
}

std::vector<Document> read_text_folder(const std::string& dir, size_t min_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw input_error(dir, "not a folder");
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".txt")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Document> docs;
  for (const auto& path : files) {
    std::string text = read_file(path.string());
    if (text.size() < min_bytes) continue;
    Document doc;
    doc.id = fs::relative(path, dir).replace_extension("").string();
    doc.title = path.stem().string();
    doc.text = std::move(text);
    docs.push_back(std::move(doc));
  }
  if (docs.empty())
    throw input_error(dir, "no .txt files of at least " + std::to_string(min_bytes) + " bytes");
  return docs;
}

std::string split_of_document(const std::string& doc_id, uint64_t seed) {
  const uint64_t bucket = mix_seed(seed, fnv1a64(doc_id)) % 10;
  return bucket < 8 ? "train" : bucket == 8 ? "dev" : "test";
}

LengthStats length_stats(const std::vector<int64_t>& token_lengths) {
  LengthStats stats;
  stats.edges.push_back(0);
  for (int64_t e = 16; e <= (int64_t{1} << 20); e *= 2) stats.edges.push_back(e);
  stats.edges.push_back(std::numeric_limits<int64_t>::max());
  stats.counts.assign(stats.edges.size() - 1, 0);
  stats.texts = token_lengths.size();
  if (token_lengths.empty()) return stats;
  std::vector<int64_t> sorted = token_lengths;
  std::sort(sorted.begin(), sorted.end());
  double total = 0;
  for (int64_t n : sorted) {
    total += static_cast<double>(n);
    const auto bin =
        std::upper_bound(stats.edges.begin(), stats.edges.end(), n) - stats.edges.begin() - 1;
    ++stats.counts[static_cast<size_t>(bin)];
  }
  stats.mean = total / static_cast<double>(sorted.size());
  stats.min = sorted.front();
  stats.max = sorted.back();
  for (int p : {10, 25, 50, 75, 90, 99}) {
    // Nearest rank: the smallest value with at least p % of the texts at or below it.
    const auto rank =
        static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    stats.percentiles.emplace_back(p, sorted[std::max<size_t>(rank, 1) - 1]);
  }
  return stats;
}

}  // namespace lmk