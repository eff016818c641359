#pragma once

// Retrieval tasks built here rather than downloaded: LongEmbed's synthetic passkey and needle
// protocols, and MLDR-style long-document retrieval plus training pairs from real text (the
// documentation Debian packages install). Everything is seeded and deterministic.

#include <cstdint>
#include <string>
#include <vector>

#include "core/data/formats.h"
#include "core/tokenize/tokenizer.h"

namespace lmk {

// One generated split: a name ("256" for a context length, "test" for a split) and its data.
struct GeneratedSplit {
  std::string name;
  RetrievalSplit data;
};

struct SyntheticTaskOptions {
  // Document lengths in tokens of the given tokenizer (content only, no special tokens).
  std::vector<int64_t> lengths = {256, 512, 1024, 2048, 4096, 8192, 16384, 32768};
  size_t queries = 50;     // per length
  size_t documents = 100;  // candidates per length; each query targets one of them
  uint64_t seed = 42;
  // The needle depths of the queries' documents (fractions of the document, RULER's length ×
  // depth map): query q's at depths[q % size]; empty: uniformly random. Queries carry "depth".
  std::vector<double> depths;
  // Needle task: facts per document (RULER's multi-key needle): the query asks for the first;
  // the others, about other people, sit at random positions.
  size_t keys = 1;
  // Needle task: values of the asked fact (RULER's multi-value needle, 1 to 8): the fact is
  // stated once per value, the first at the needle's depth (the evidence position), the others
  // at random positions; the values are distinct.
  size_t values = 1;
  // Needle task: queries per target document (RULER's multi-query needle, 1 to keys): query m
  // asks for key m of the document, with its own evidence position (ids "-q<d>-<m>" for m > 0;
  // a key the length cut off is not asked).
  size_t queries_per_document = 1;
};

// LongEmbed's passkey retrieval: each document repeats "The grass is green. The sky is blue.
// The sun is yellow. Here we go. There and back again." up to the length, with "{name}'s pass
// key is {n}. Remember it. {n} is the pass key for {name}." at a uniformly random sentence
// position (or at a chosen depth); the query is "what is the pass key for {name}?". Names are
// unique within a length. Queries carry extra fields context_length, tokens and
// evidence_position: the needle's depth as RULER counts it, the tokens ahead of it out of the
// document's tokens but the needle's (0: first, 1: last), and with depths the one asked for.
std::vector<GeneratedSplit> make_passkey_task(const Tokenizer& tokenizer,
                                              const SyntheticTaskOptions& options);

// Needle retrieval: a fact sentence about a named person ("{name}'s favourite colour is
// teal.") inserted at a uniformly random sentence boundary of a natural-text haystack cut from
// `haystack` documents; the query asks for the fact ("what is {name}'s favourite colour?").
std::vector<GeneratedSplit> make_needle_task(const Tokenizer& tokenizer,
                                             const std::vector<Document>& haystack,
                                             const SyntheticTaskOptions& options);

// Training pairs from a generated passkey / needle task (in-domain synthetic fine-tuning data):
// each query with its target document as the positive and `negatives` other documents of the
// same length as hard negatives (seeded). Generate the task with another seed than the
// evaluation's, so no training document is an evaluation document.
std::vector<TrainingExample> synthetic_training_pairs(const std::vector<GeneratedSplit>& task,
                                                      size_t negatives, uint64_t seed);

// Text files of a folder (recursively, *.txt, sorted by path) as documents: id = path relative
// to the folder without ".txt", title = file stem. Files shorter than min_bytes are skipped.
std::vector<Document> read_text_folder(const std::string& dir, size_t min_bytes = 200);

// The split a document belongs to: "train", "dev" or "test", from a hash of its id and the
// seed (80 / 10 / 10), so a document never crosses splits and the split survives re-runs.
std::string split_of_document(const std::string& doc_id, uint64_t seed);

struct CorpusTaskOptions {
  uint64_t seed = 42;
  size_t queries_per_document = 1;
  // Query q of a document's k drawn in [q/k, (q+1)/k) of its text (else anywhere), so that the
  // evidence of a long task's queries spreads evenly over the documents' positions.
  bool stratified = false;
  size_t min_sentence_bytes = 40;  // query sentences shorter than this are not drawn
  size_t passage_bytes = 1200;     // passage-level variant: paragraphs packed up to this size
};

// MLDR-style long-document retrieval: for each document, a sentence drawn from a paragraph at
// a uniformly random position (or one per stratum) becomes the query, and is removed from the
// document (every drawn sentence is), which is
// the target (so the match is by meaning and context, not by an identical string). The corpus
// holds every document; qrels of split s name only documents of split s. Queries carry
// evidence_position (the sentence's byte offset / document bytes) and split.
RetrievalSplit make_corpus_task(const std::vector<Document>& documents,
                                const CorpusTaskOptions& options);

// The short-context variant of the same queries: documents cut into passages of whole
// paragraphs (about passage_bytes each, the query sentence removed as above); the target is
// the passage that held the sentence.
RetrievalSplit make_passage_task(const std::vector<Document>& documents,
                                 const CorpusTaskOptions& options);

// Long-document retrieval at fixed lengths: for each length L, windows of about L tokens cut
// at sentence boundaries from the documents that hold at least L (from the start, then the
// following text, up to windows_per_document, never overlapping). A window is the target of
// queries_per_window sentences (at most one per tokens_per_query tokens) drawn at stratified
// positions (query q of k from [q/k, (q+1)/k) of the window) and removed from it, the window
// having been cut about that much longer; it is extended with the document's following text
// while it holds fewer than L tokens, so every target of the L part holds at least L tokens and
// its evidence lies inside what an encoder reading it whole sees. Queries carry split,
// evidence_position (where the removed sentence sat in the target, 0..1) and document. Windows
// keep their document's split (split_of_document); only windows of `splits` are made, at most
// max_windows per split and length (a seeded choice, independent of the documents' order; 0:
// all).
struct WindowTaskOptions {
  std::vector<int64_t> lengths = {1024, 4096};  // tokens of the given tokenizer
  uint64_t seed = 42;
  size_t queries_per_window = 10;
  size_t tokens_per_query = 100;  // fewer queries in shorter windows: at most one per this many
  size_t windows_per_document = 1;
  size_t max_windows = 0;
  std::vector<std::string> splits = {"dev", "test"};
  size_t min_sentence_bytes = 40;
};

// What make_window_task made of each length.
struct WindowPart {
  int64_t length = 0;
  RetrievalSplit data;
  size_t documents = 0;        // documents of the splits asked for
  size_t short_documents = 0;  // of them, shorter than the length: not in this part
  std::map<std::string, size_t> windows, queries;  // by split
};

std::vector<WindowPart> make_window_task(const std::vector<Document>& documents,
                                         const Tokenizer& tokenizer,
                                         const WindowTaskOptions& options);

// A labelled text for classification (frozen embeddings + a linear classifier).
struct LabelledText {
  std::string id, text, label;
};

// Document classification from the same documents: the label is what follows the last "." of
// the id (a man page's section: "signal.7" -> "7"); train / test by split_of_document (dev
// joins test). Documents whose id has no such suffix are skipped (so both may be empty).
std::pair<std::vector<LabelledText>, std::vector<LabelledText>> make_classification_task(
    const std::vector<Document>& documents, uint64_t seed);

struct PairsOptions {
  uint64_t seed = 42;
  size_t negatives = 3;          // hard negatives per example, from other documents
  double keep_sentence = 0.1;    // inverse cloze: how often the sentence stays in
  size_t context_sentences = 4;  // sentences on each side of the query sentence
  size_t examples_per_document = 8;
  std::string split = "train";  // only documents of this split are used
};

// Unsupervised training pairs from the documents of one split (FlagEmbedding jsonl records):
// inverse cloze (a sentence -> its surrounding passage, the sentence removed most of the time)
// and section heading -> section body; negatives are passages of other documents.
std::vector<TrainingExample> make_training_pairs(const std::vector<Document>& documents,
                                                 const PairsOptions& options);

// Token-length distribution of texts: counts in log-spaced bins (edges at powers of two from
// 16 to 2^20 tokens, plus the bins below and above) and percentiles.
struct LengthStats {
  std::vector<int64_t> edges;   // bin i covers [edges[i], edges[i + 1])
  std::vector<int64_t> counts;  // one per bin
  size_t texts = 0;
  double mean = 0;
  int64_t min = 0, max = 0;
  std::vector<std::pair<int, int64_t>> percentiles;  // (p, tokens) for p in 10, 25, 50, 75, 90, 99
};
LengthStats length_stats(const std::vector<int64_t>& token_lengths);

}  // namespace lmk
