// Tasks drawn from real text (core/data/generators.h): MLDR-style long-document retrieval
// (whole documents, passages, and windows of fixed token lengths), document classification by
// file-name label, and unsupervised training pairs.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/data/generators.h"
#include "core/tokenize/sentence_splitter.h"
#include "core/util/error.h"
#include "core/util/random.h"

namespace lmk {

namespace {

using Rng = SplitMix64;


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

// A sentence from a paragraph at a uniformly random position, or (with a stratum [lo, hi) of
// the text, as fractions) from the paragraph holding a random byte of the stratum; sentences
// that are too short (or mostly punctuation) are skipped by trying the following paragraphs.
bool draw_sentence(const std::string& text, size_t min_bytes, Rng& rng, DrawnSentence& out,
                   const std::pair<double, double>* stratum = nullptr) {
  const auto paragraphs = paragraphs_of(text);
  if (paragraphs.empty()) return false;
  size_t first = 0;
  double at = -1;  // with a stratum: the byte drawn in it
  if (stratum) {
    at = (stratum->first + rng.uniform() * (stratum->second - stratum->first)) *
         static_cast<double>(text.size());
    while (first + 1 < paragraphs.size() && static_cast<double>(paragraphs[first].second) <= at)
      ++first;
  } else {
    first = rng.below(paragraphs.size());
  }
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
    // In the stratum's paragraph: the sentence holding the drawn byte, else the first after it,
    // else the paragraph's last (a long paragraph spans several strata); elsewhere any.
    size_t pick = rng.below(candidates.size());
    if (k == 0 && at >= 0) {
      pick = candidates.size() - 1;
      for (size_t c = 0; c < candidates.size(); ++c) {
        if (static_cast<double>(candidates[c].second) > at) {
          pick = c;
          break;
        }
      }
    }
    const auto [sb, se] = candidates[pick];
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
    Rng rng(mix_seed(options.seed, fnv1a64(doc.id)));
    const std::string split = split_of_document(doc.id, options.seed);
    std::vector<DrawnSentence> drawn;
    std::set<size_t> drawn_at;  // a sentence makes one query
    const size_t k = options.queries_per_document;
    for (size_t q = 0; q < k; ++q) {
      DrawnSentence sentence;
      const std::pair<double, double> stratum{static_cast<double>(q) / static_cast<double>(k),
                                              static_cast<double>(q + 1) / static_cast<double>(k)};
      if (!draw_sentence(doc.text, options.min_sentence_bytes, rng, sentence,
                         options.stratified ? &stratum : nullptr))
        break;
      if (!drawn_at.insert(sentence.begin).second) continue;
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
      const std::string target = add_target(doc, drawn, q, out);
      if (target.empty()) continue;
      out.qrels[query.id][target] = 1;
      out.queries.push_back(std::move(query));
    }
    if (drawn.empty()) add_target(doc, drawn, std::string::npos, out);
  }
  if (out.queries.empty())
    throw input_error("corpus", "no document has a sentence to draw a query from");
  return out;
}

// The text [begin, end) of a document without the drawn sentences that lie in it (the queries':
// a query never finds its own words in its target).
std::string without(const std::string& text, size_t begin, size_t end,
                    const std::vector<DrawnSentence>& drawn) {
  std::vector<std::pair<size_t, size_t>> cuts;
  for (const DrawnSentence& s : drawn)
    if (s.begin >= begin && s.begin < end) cuts.emplace_back(s.begin, std::min(s.end, end));
  std::sort(cuts.begin(), cuts.end());
  std::string out;
  size_t at = begin;
  for (const auto& [cut_begin, cut_end] : cuts) {
    if (cut_begin > at) out.append(text, at, cut_begin - at);
    at = std::max(at, cut_end);
  }
  if (end > at) out.append(text, at, end - at);
  return out;
}

}  // namespace

RetrievalSplit make_corpus_task(const std::vector<Document>& documents,
                                const CorpusTaskOptions& options) {
  return draw_queries(documents, options,
                      [&](const Document& doc, const std::vector<DrawnSentence>& drawn, size_t q,
                          RetrievalSplit& out) {
                        // One corpus entry per document, every query's sentence removed.
                        if (q == 0 || q == std::string::npos) {
                          Document target = doc;
                          target.text = without(doc.text, 0, doc.text.size(), drawn);
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
      [&](const Document& doc, const std::vector<DrawnSentence>& drawn, size_t q,
          RetrievalSplit& out) {
        // Passages of whole paragraphs, packed up to passage_bytes; computed once per document.
        const DrawnSentence sentence = q == std::string::npos ? DrawnSentence{} : drawn[q];
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
          passage.text = trim(without(doc.text, begin, end, drawn));
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

namespace {

// One window of a document for make_window_task: its target text and its queries.
struct Window {
  std::string id, split, document;
  std::string text;
  std::vector<std::pair<std::string, double>> queries;  // (text, evidence position)
};

// The window of `doc` from the first sentence that starts at or after token `first` (of its
// encoding `tokens`; `sentence_ends` its split_sentences): the whole sentences within the next
// `length` tokens plus about what the drawn sentences will take away (measured on a first draw),
// queries_per_window sentences drawn there at stratified positions and removed; then extended
// with the following text until it holds at least `length` tokens again. Returns false when the
// document runs out first. `next` receives the token after the window.
bool cut_window(const Document& doc, const Encoding& tokens, const std::vector<size_t>& sentence_ends,
                size_t first, int64_t length, const Tokenizer& tokenizer,
                const WindowTaskOptions& options, Rng& rng, Window& out, size_t& next) {
  const size_t n = tokens.ids.size();
  const auto L = static_cast<size_t>(length);
  // Windows begin and (before the extension) end at sentence boundaries: no query is a piece of
  // a sentence whose rest lies in another window.
  if (first > 0) {
    const auto boundary =
        std::lower_bound(sentence_ends.begin(), sentence_ends.end(), tokens.spans[first].begin);
    if (boundary == sentence_ends.end()) return false;
    while (first < n && tokens.spans[first].begin < *boundary) ++first;
  }
  auto text_of = [&](size_t end_token) {  // whole sentences of tokens [first, end_token)
    const size_t begin = tokens.spans[first].begin;
    size_t end = tokens.spans[end_token - 1].end;
    const auto last = std::upper_bound(sentence_ends.begin(), sentence_ends.end(), end);
    if (last != sentence_ends.begin() && *std::prev(last) > begin) end = *std::prev(last);
    return doc.text.substr(begin, end - begin);
  };
  // At most one query per tokens_per_query tokens: a short window keeps most of its text.
  const size_t k = std::max<size_t>(
      1, std::min(options.queries_per_window, L / std::max<size_t>(1, options.tokens_per_query)));
  auto draw = [&](const std::string& text, Rng draw_rng, std::vector<DrawnSentence>& drawn) {
    std::set<size_t> drawn_at;
    for (size_t q = 0; q < k; ++q) {
      DrawnSentence sentence;
      const std::pair<double, double> stratum{static_cast<double>(q) / static_cast<double>(k),
                                              static_cast<double>(q + 1) / static_cast<double>(k)};
      if (!draw_sentence(text, options.min_sentence_bytes, draw_rng, sentence, &stratum)) break;
      if (drawn_at.insert(sentence.begin).second) drawn.push_back(std::move(sentence));
    }
    std::sort(drawn.begin(), drawn.end(),
              [](const DrawnSentence& a, const DrawnSentence& b) { return a.begin < b.begin; });
  };
  if (first + L > n) return false;
  // First draw on exactly L tokens: how many tokens the removed sentences hold.
  std::vector<DrawnSentence> drawn;
  const Rng start = rng;
  draw(text_of(first + L), start, drawn);
  size_t removed = 0;
  for (const DrawnSentence& d : drawn) removed += tokenizer.encode(d.query).ids.size();
  size_t end = std::min(n, first + L + removed);
  const std::string window = text_of(end);
  drawn.clear();
  draw(window, start, drawn);
  rng.next();  // the next window draws differently
  if (drawn.empty()) return false;
  std::string target = without(window, 0, window.size(), drawn);
  // Extend until the target holds L tokens (the tokens at the seams may merge: recount).
  size_t taken = tokens.spans[first].begin + window.size();  // bytes of the document used
  for (end = first; end < n && tokens.spans[end].begin < taken;) ++end;
  for (int round = 0; round < 8; ++round) {
    const size_t have = tokenizer.encode(target).ids.size();
    if (have >= L) break;
    if (end >= n) return false;
    const size_t more = std::min(n, end + (L - have));
    target += doc.text.substr(taken, tokens.spans[more - 1].end - taken);
    taken = tokens.spans[more - 1].end;
    end = more;
  }
  if (tokenizer.encode(target).ids.size() < L) return false;
  // Where each removed sentence sat in the target: its offset less what was removed before it.
  size_t cut_before = 0;
  for (const DrawnSentence& d : drawn) {
    const size_t at = d.begin - cut_before;
    out.queries.emplace_back(d.query,
                             static_cast<double>(at) / static_cast<double>(target.size()));
    cut_before += d.end - d.begin;
  }
  out.text = std::move(target);
  next = end;
  return true;
}

}  // namespace

std::vector<WindowPart> make_window_task(const std::vector<Document>& documents,
                                         const Tokenizer& tokenizer,
                                         const WindowTaskOptions& options) {
  if (options.lengths.empty()) throw input_error("windows", "no lengths");
  for (int64_t length : options.lengths)
    if (length < 16) throw input_error("windows", "a length must be at least 16 tokens");
  if (options.queries_per_window == 0 || options.windows_per_document == 0)
    throw input_error("windows", "queries per window and windows per document must be positive");
  for (const std::string& split : options.splits)
    if (split != "train" && split != "dev" && split != "test")
      throw input_error("windows", "unknown split '" + split + "' (train, dev, test)");
  // The documents of the splits asked for, each tokenized once.
  struct Source {
    const Document* doc;
    std::string split;
    Encoding tokens;
    std::vector<size_t> sentence_ends;
  };
  std::vector<Source> sources;
  std::set<std::string> seen;
  for (const Document& doc : documents) {
    if (!seen.insert(doc.id).second) throw input_error(doc.id, "duplicate document id");
    const std::string split = split_of_document(doc.id, options.seed);
    if (std::find(options.splits.begin(), options.splits.end(), split) == options.splits.end())
      continue;
    sources.push_back({&doc, split, tokenizer.encode(doc.text), split_sentences(doc.text)});
  }
  std::vector<WindowPart> parts;
  for (int64_t length : options.lengths) {
    WindowPart part;
    part.length = length;
    part.documents = sources.size();
    // Every window of every document, then a seeded choice of max_windows per split (keyed by
    // the window's id, so it does not depend on the order of the documents).
    std::map<std::string, std::vector<std::pair<uint64_t, Window>>> by_split;
    for (const Source& source : sources) {
      if (source.tokens.ids.size() < static_cast<size_t>(length)) {
        ++part.short_documents;
        continue;
      }
      Rng rng(mix_seed(options.seed ^ static_cast<uint64_t>(length), fnv1a64(source.doc->id)));
      size_t first = 0;
      for (size_t w = 0; w < options.windows_per_document; ++w) {
        Window window;
        window.id = source.doc->id + "#w" + std::to_string(w);
        window.split = source.split;
        window.document = source.doc->id;
        size_t next = 0;
        if (!cut_window(*source.doc, source.tokens, source.sentence_ends, first, length, tokenizer,
                        options, rng, window, next))
          break;
        first = next;
        const uint64_t order = mix_seed(options.seed ^ static_cast<uint64_t>(length),
                                        fnv1a64(window.id));
        by_split[source.split].emplace_back(order, std::move(window));
      }
    }
    for (auto& [split, windows] : by_split) {
      std::sort(windows.begin(), windows.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      if (options.max_windows > 0 && windows.size() > options.max_windows)
        windows.resize(options.max_windows);
      std::sort(windows.begin(), windows.end(),
                [](const auto& a, const auto& b) { return a.second.id < b.second.id; });
      for (auto& [order, window] : windows) {
        (void)order;
        ++part.windows[split];
        for (size_t q = 0; q < window.queries.size(); ++q) {
          Query query;
          query.id = window.id + "#q" + std::to_string(q);
          query.text = window.queries[q].first;
          query.extra = {{"split", split},
                         {"evidence_position", window.queries[q].second},
                         {"document", window.document}};
          part.data.qrels[query.id][window.id] = 1;
          part.data.queries.push_back(std::move(query));
          ++part.queries[split];
        }
        Document target;
        target.id = window.id;
        target.text = std::move(window.text);
        target.extra = {{"split", split}, {"document", window.document}};
        part.data.corpus.push_back(std::move(target));
      }
    }
    parts.push_back(std::move(part));
  }
  return parts;
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
    const auto sentences = sentence_texts(doc.text);
    const size_t width = 2 * options.context_sentences + 1;
    const size_t start = sentences.size() > width ? rng.below(sentences.size() - width + 1) : 0;
    std::string text;
    for (size_t i = start; i < std::min(sentences.size(), start + width); ++i) text += sentences[i];
    return collapse_spaces(text);
  };
  std::vector<TrainingExample> examples;
  for (size_t d = 0; d < pool.size(); ++d) {
    const Document& doc = *pool[d];
    Rng rng(mix_seed(options.seed, fnv1a64(doc.id) + 7));
    auto add_negatives = [&](TrainingExample& example) {
      for (size_t n = 0; n < options.negatives; ++n) {
        size_t other = rng.below(pool.size() - 1);
        if (other >= d) ++other;  // any document but this one
        example.neg.push_back(passage_of(*pool[other], rng));
      }
    };
    const auto sentences = sentence_texts(doc.text);
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

}  // namespace lmk
