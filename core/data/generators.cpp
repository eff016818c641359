#include "core/data/generators.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "core/tokenize/sentence_splitter.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/random.h"

namespace lmk {

namespace {

// A seed names one dataset (core/util/random.h).
using Rng = SplitMix64;

uint64_t mix(uint64_t seed, uint64_t salt) {
  return Rng(seed ^ (salt * 0xD6E8FEB86659FD93ULL)).next();
}

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

// `count` distinct names in a seeded order.
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

// Cuts text to its first `tokens` tokens (at the start of token `tokens`).
std::string cut_to_tokens(const Tokenizer& tokenizer, const std::string& text, size_t tokens) {
  const Encoding encoding = tokenizer.encode(text);
  if (encoding.ids.size() <= tokens) return text;
  return text.substr(0, encoding.spans[tokens].begin);
}

// The index of the token of `encoding` whose span holds byte `offset`.
size_t token_at_byte(const Encoding& encoding, size_t offset) {
  for (size_t i = 0; i < encoding.spans.size(); ++i) {
    if (encoding.spans[i].end > offset) return i;
  }
  return encoding.spans.size();
}

// A synthetic document: `units` (sentences) repeated to `length` tokens with `needle` inserted
// before unit number slot. Returns the text (exactly `length` tokens when the units suffice)
// and the needle's relative token position.
struct Placed {
  std::string text;
  size_t tokens = 0;
  double evidence_position = 0;
};

Placed place_needle(const Tokenizer& tokenizer, const std::vector<std::string>& sentences,
                    const std::string& needle, int64_t length, double relative) {
  // Sentences ahead of the needle: `relative` of what fits in length - needle tokens.
  // Sentence by sentence (each tokenized once, counts cached: the filler repeats five), so
  // that a 32k-token document costs linear time; the joined text is cut exactly below.
  const auto needle_tokens = static_cast<int64_t>(count_tokens(tokenizer, needle));
  std::map<std::string, int64_t> tokens_of;
  std::string before;
  size_t fit = 0;
  const auto budget = std::max<int64_t>(0, length - needle_tokens);
  int64_t used = 0;
  for (size_t i = 0; i < sentences.size(); ++i) {
    auto known = tokens_of.find(sentences[i]);
    if (known == tokens_of.end())
      known = tokens_of.emplace(sentences[i], count_tokens(tokenizer, sentences[i])).first;
    used += known->second;
    if (used > budget) break;
    fit = i + 1;
  }
  const auto slot = static_cast<size_t>(std::floor(relative * static_cast<double>(fit + 1)));
  const size_t chosen = std::min(slot, fit);
  for (size_t i = 0; i < chosen; ++i) before += sentences[i];
  std::string text = before + needle;
  for (size_t i = chosen; i < sentences.size(); ++i) text += sentences[i];
  Placed placed;
  placed.text = cut_to_tokens(tokenizer, text, static_cast<size_t>(length));
  // One encoding of the final text gives both its length and where the needle starts.
  const Encoding encoding = tokenizer.encode(placed.text);
  placed.tokens = encoding.ids.size();
  const size_t needle_token = token_at_byte(encoding, before.size());
  placed.evidence_position =
      placed.tokens == 0 ? 0.0
                         : static_cast<double>(needle_token) / static_cast<double>(placed.tokens);
  return placed;
}

// The sentences of text, each with its trailing whitespace, as split_sentences cuts them.
std::vector<std::string> sentences_of(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end : split_sentences(text)) {
    out.emplace_back(text.substr(start, end - start));
    start = end;
  }
  return out;
}

template <typename MakeDoc>
std::vector<GeneratedSplit> synthetic_task(const std::string& task,
                                           const SyntheticTaskOptions& options, MakeDoc make_doc) {
  if (options.documents == 0 || options.queries == 0)
    throw input_error("--queries / --documents", "must be > 0");
  if (options.queries > options.documents)
    throw input_error("--queries", "at most --documents (each query targets its own document)");
  std::vector<GeneratedSplit> splits;
  for (const int64_t length : options.lengths) {
    if (length < 32) throw input_error("--lengths", "each length must be >= 32 tokens");
    Rng rng(mix(options.seed, static_cast<uint64_t>(length)));
    const std::vector<std::string> names = draw_names(options.documents, rng);
    GeneratedSplit split;
    split.name = std::to_string(length);
    for (size_t d = 0; d < options.documents; ++d) {
      const double relative = rng.uniform();
      auto [placed, question] = make_doc(names[d], length, relative, rng);
      Document doc;
      doc.id = task + "-" + split.name + "-" + std::to_string(d);
      doc.text = std::move(placed.text);
      doc.extra = {{"context_length", length}, {"tokens", placed.tokens}};
      if (d < options.queries) {
        Query query;
        query.id = task + "-" + split.name + "-q" + std::to_string(d);
        query.text = question;
        query.extra = {{"context_length", length},
                       {"tokens", placed.tokens},
                       {"evidence_position", placed.evidence_position}};
        split.data.qrels[query.id][doc.id] = 1;
        split.data.queries.push_back(std::move(query));
      }
      split.data.corpus.push_back(std::move(doc));
    }
    splits.push_back(std::move(split));
  }
  return splits;
}

}  // namespace

std::vector<GeneratedSplit> make_passkey_task(const Tokenizer& tokenizer,
                                              const SyntheticTaskOptions& options) {
  const std::vector<std::string> unit = {"The grass is green. ", "The sky is blue. ",
                                         "The sun is yellow. ", "Here we go. ",
                                         "There and back again. "};
  return synthetic_task(
      "passkey", options, [&](const std::string& name, int64_t length, double relative, Rng& rng) {
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
        return std::make_pair(place_needle(tokenizer, sentences, needle, length, relative),
                              "what is the pass key for " + name + "?");
      });
}

std::vector<GeneratedSplit> make_needle_task(const Tokenizer& tokenizer,
                                             const std::vector<Document>& haystack,
                                             const SyntheticTaskOptions& options) {
  if (haystack.empty()) throw input_error("--haystack", "no haystack documents");
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
      "needle", options, [&](const std::string& name, int64_t length, double relative, Rng& rng) {
        const Fact& fact = facts[rng.below(facts.size())];
        const std::string value = fact.values.empty() ? std::to_string(100 + rng.below(900))
                                                      : fact.values[rng.below(fact.values.size())];
        // Haystack: documents from a random start, sentence by sentence, past the length.
        std::vector<std::string> sentences;
        size_t bytes = 0;
        const size_t wanted_bytes = static_cast<size_t>(length) * 8 + 1024;  // tokens are < 8 bytes
        // Short haystacks repeat from the start, as LongEmbed's essays do for long contexts.
        size_t d = rng.below(haystack.size());
        for (size_t visited = 0; bytes < wanted_bytes; ++visited, d = (d + 1) % haystack.size()) {
          if (visited == haystack.size() && bytes == 0) throw input_error("--haystack", "no text");
          for (auto& s : sentences_of(haystack[d].text)) {
            bytes += s.size();
            sentences.push_back(std::move(s));
          }
        }
        const std::string needle = " " + fill(fact.statement, name, value) + " ";
        return std::make_pair(place_needle(tokenizer, sentences, needle, length, relative),
                              fill(fact.question, name, value));
      });
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
  const uint64_t bucket = mix(seed, fnv1a64(doc_id)) % 10;
  return bucket < 8 ? "train" : bucket == 8 ? "dev" : "test";
}

namespace {

// Paragraphs of a document: [begin, end) byte ranges separated by blank lines.
std::vector<std::pair<size_t, size_t>> paragraphs_of(const std::string& text) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find("\n\n", start);
    if (end == std::string::npos) end = text.size();
    if (text.find_first_not_of(" \t\n", start) < end) out.emplace_back(start, end);
    start = end + 2;
  }
  return out;
}

std::string trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t\n");
  return std::string(s.substr(b, e - b + 1));
}

// Collapses runs of whitespace (man pages are formatted in columns) into single spaces.
std::string collapse_spaces(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\n') {
      space = true;
    } else {
      if (space && !out.empty()) out += ' ';
      space = false;
      out += c;
    }
  }
  return out;
}

// A query drawn from a document: the sentence, where it is, and whether one was found.
struct DrawnSentence {
  size_t begin = 0, end = 0;  // bytes in the document
  std::string query;
};

// A sentence from a paragraph at a uniformly random position; sentences that are too short
// (or mostly punctuation) are skipped by trying the following ones.
bool draw_sentence(const std::string& text, size_t min_bytes, Rng& rng, DrawnSentence& out) {
  const auto paragraphs = paragraphs_of(text);
  if (paragraphs.empty()) return false;
  const size_t first = rng.below(paragraphs.size());
  for (size_t k = 0; k < paragraphs.size(); ++k) {
    const auto [pb, pe] = paragraphs[(first + k) % paragraphs.size()];
    const std::string_view paragraph(text.data() + pb, pe - pb);
    size_t start = 0;
    std::vector<std::pair<size_t, size_t>> candidates;
    for (size_t end : split_sentences(paragraph)) {
      const std::string sentence = collapse_spaces(paragraph.substr(start, end - start));
      size_t letters = 0;
      for (char c : sentence) letters += std::isalpha(static_cast<unsigned char>(c)) ? 1 : 0;
      if (sentence.size() >= min_bytes && letters * 2 >= sentence.size())
        candidates.emplace_back(pb + start, pb + end);
      start = end;
    }
    if (candidates.empty()) continue;
    const auto [sb, se] = candidates[rng.below(candidates.size())];
    out.begin = sb, out.end = se;
    out.query = collapse_spaces(std::string_view(text.data() + sb, se - sb));
    return true;
  }
  return false;
}

template <typename AddTarget>
RetrievalSplit draw_queries(const std::vector<Document>& documents,
                            const CorpusTaskOptions& options, AddTarget add_target) {
  RetrievalSplit out;
  std::set<std::string> seen;
  for (const Document& doc : documents) {
    if (!seen.insert(doc.id).second) throw input_error(doc.id, "duplicate document id");
    Rng rng(mix(options.seed, fnv1a64(doc.id)));
    const std::string split = split_of_document(doc.id, options.seed);
    std::vector<DrawnSentence> drawn;
    for (size_t q = 0; q < options.queries_per_document; ++q) {
      DrawnSentence sentence;
      if (!draw_sentence(doc.text, options.min_sentence_bytes, rng, sentence)) break;
      drawn.push_back(std::move(sentence));
    }
    for (size_t q = 0; q < drawn.size(); ++q) {
      Query query;
      query.id = doc.id + "#q" + std::to_string(q);
      query.text = drawn[q].query;
      query.extra = {{"split", split},
                     {"evidence_position",
                      static_cast<double>(drawn[q].begin) / static_cast<double>(doc.text.size())}};
      // No target (the sentence was all its passage held): the query is dropped.
      const std::string target = add_target(doc, drawn[q], q, out);
      if (target.empty()) continue;
      out.qrels[query.id][target] = 1;
      out.queries.push_back(std::move(query));
    }
    if (drawn.empty()) add_target(doc, DrawnSentence{}, std::string::npos, out);
  }
  if (out.queries.empty())
    throw input_error("corpus", "no document has a sentence to draw a query from");
  return out;
}

// The document text without [begin, end) (the query's sentence).
std::string without(const std::string& text, size_t begin, size_t end) {
  return text.substr(0, begin) + text.substr(end);
}

}  // namespace

RetrievalSplit make_corpus_task(const std::vector<Document>& documents,
                                const CorpusTaskOptions& options) {
  return draw_queries(
      documents, options,
      [&](const Document& doc, const DrawnSentence& sentence, size_t q, RetrievalSplit& out) {
        // One corpus entry per document (the first query's sentence removed; with more queries
        // per document the others stay in, as MLDR's documents keep their paragraphs).
        if (q == 0 || q == std::string::npos) {
          Document target = doc;
          if (q == 0) target.text = without(doc.text, sentence.begin, sentence.end);
          target.extra["split"] = split_of_document(doc.id, options.seed);
          out.corpus.push_back(std::move(target));
        }
        return doc.id;
      });
}

RetrievalSplit make_passage_task(const std::vector<Document>& documents,
                                 const CorpusTaskOptions& options) {
  std::set<std::string> known_passages;  // passages written (an emptied one is not)
  return draw_queries(
      documents, options,
      [&](const Document& doc, const DrawnSentence& sentence, size_t q, RetrievalSplit& out) {
        // Passages of whole paragraphs, packed up to passage_bytes; computed once per document.
        std::string target_id;
        const bool first = q == 0 || q == std::string::npos;
        const auto paragraphs = paragraphs_of(doc.text);
        size_t index = 0;
        for (size_t p = 0; p < paragraphs.size(); ++index) {
          const size_t begin = paragraphs[p].first;
          size_t end = paragraphs[p].second;
          for (++p; p < paragraphs.size() && paragraphs[p].second - begin <= options.passage_bytes;
               ++p)
            end = paragraphs[p].second;
          const std::string id = doc.id + "#p" + std::to_string(index);
          const bool holds =
              q != std::string::npos && sentence.begin >= begin && sentence.begin < end;
          if (!first) {
            if (holds && known_passages.count(id)) target_id = id;
            continue;
          }
          Document passage;
          passage.id = id;
          passage.title = doc.title;
          std::string text = doc.text.substr(begin, end - begin);
          if (holds && q == 0) {
            text = without(text, sentence.begin - begin, std::min(sentence.end, end) - begin);
          }
          passage.text = trim(text);
          passage.extra = {{"split", split_of_document(doc.id, options.seed)},
                           {"document", doc.id}};
          if (passage.text.empty()) continue;
          if (holds) target_id = id;
          known_passages.insert(id);
          out.corpus.push_back(std::move(passage));
        }
        return target_id;
      });
}

std::pair<std::vector<LabelledText>, std::vector<LabelledText>> make_classification_task(
    const std::vector<Document>& documents, uint64_t seed) {
  std::pair<std::vector<LabelledText>, std::vector<LabelledText>> out;
  for (const Document& doc : documents) {
    const size_t dot = doc.id.rfind('.');
    if (dot == std::string::npos || dot + 1 == doc.id.size()) continue;
    LabelledText item{doc.id, doc.text, doc.id.substr(dot + 1)};
    (split_of_document(doc.id, seed) == "train" ? out.first : out.second)
        .push_back(std::move(item));
  }
  return out;
}

std::vector<TrainingExample> make_training_pairs(const std::vector<Document>& documents,
                                                 const PairsOptions& options) {
  std::vector<const Document*> pool;
  for (const Document& doc : documents) {
    if (split_of_document(doc.id, options.seed) == options.split) pool.push_back(&doc);
  }
  if (pool.size() < 2)
    throw input_error("pairs", "fewer than two documents in split " + options.split);
  // A random passage of a document: a window of 2 * context_sentences + 1 sentences.
  auto passage_of = [&](const Document& doc, Rng& rng) {
    const auto sentences = sentences_of(doc.text);
    const size_t width = 2 * options.context_sentences + 1;
    const size_t start = sentences.size() > width ? rng.below(sentences.size() - width + 1) : 0;
    std::string text;
    for (size_t i = start; i < std::min(sentences.size(), start + width); ++i) text += sentences[i];
    return collapse_spaces(text);
  };
  std::vector<TrainingExample> examples;
  for (size_t d = 0; d < pool.size(); ++d) {
    const Document& doc = *pool[d];
    Rng rng(mix(options.seed, fnv1a64(doc.id) + 7));
    auto add_negatives = [&](TrainingExample& example) {
      for (size_t n = 0; n < options.negatives; ++n) {
        size_t other = rng.below(pool.size() - 1);
        if (other >= d) ++other;  // any document but this one
        example.neg.push_back(passage_of(*pool[other], rng));
      }
    };
    const auto sentences = sentences_of(doc.text);
    // Inverse cloze: a sentence and its neighbourhood.
    for (size_t e = 0; e < options.examples_per_document && sentences.size() > 2; ++e) {
      const size_t i = rng.below(sentences.size());
      const std::string query = collapse_spaces(sentences[i]);
      size_t letters = 0;
      for (char c : query) letters += std::isalpha(static_cast<unsigned char>(c)) ? 1 : 0;
      if (query.size() < 20 || letters * 2 < query.size()) continue;
      const size_t from = i >= options.context_sentences ? i - options.context_sentences : 0;
      const size_t to = std::min(sentences.size(), i + options.context_sentences + 1);
      const bool keep = rng.uniform() < options.keep_sentence;
      std::string context;
      for (size_t k = from; k < to; ++k)
        if (k != i || keep) context += sentences[k];
      TrainingExample example;
      example.query = query;
      example.pos = {collapse_spaces(context)};
      if (example.pos[0].empty()) continue;
      add_negatives(example);
      examples.push_back(std::move(example));
    }
    // Section heading -> section body: man pages put headings alone on a line in capitals.
    const auto paragraphs = paragraphs_of(doc.text);
    for (size_t p = 0; p + 1 < paragraphs.size(); ++p) {
      const std::string heading = trim(std::string_view(doc.text).substr(
          paragraphs[p].first, paragraphs[p].second - paragraphs[p].first));
      const bool is_heading = heading.size() >= 4 && heading.size() <= 40 &&
                              heading.find('\n') == std::string::npos &&
                              std::all_of(heading.begin(), heading.end(), [](char c) {
                                return std::isupper(static_cast<unsigned char>(c)) || c == ' ';
                              });
      if (!is_heading) continue;
      const auto& body = paragraphs[p + 1];
      TrainingExample example;
      example.query = doc.title + " " + heading;
      example.pos = {collapse_spaces(std::string_view(doc.text).substr(
          body.first, std::min<size_t>(body.second - body.first, 2000)))};
      if (example.pos[0].size() < 40) continue;
      add_negatives(example);
      examples.push_back(std::move(example));
    }
  }
  return examples;
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
