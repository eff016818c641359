#pragma once

// What the generated retrieval tasks share (core/data/generators.cpp: passkey, needle;
// core/data/word_tasks.cpp: RULER's word extraction): token counting, depths as RULER counts
// them, and synthetic_task, the loop over lengths and documents that names, seeds and records
// every document and query. Internal to core/data.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/generators.h"
#include "core/util/error.h"
#include "core/util/random.h"

namespace lmk {

// A seed names one dataset (core/util/random.h).
using Rng = SplitMix64;

// `count` distinct first names in a seeded order (numbered variants past the list).
std::vector<std::string> draw_names(size_t count, Rng& rng);
// Content tokens of text (no special tokens).
size_t count_tokens(const Tokenizer& tokenizer, std::string_view text);
// The index of the token of `encoding` whose span holds byte `offset`.
size_t token_at_byte(const Encoding& encoding, size_t offset);
// The depth as RULER counts it of what starts at byte `offset` and spans `own_tokens` tokens:
// the share of the document ahead of it, out of what could be (the tokens but its own), so
// that something at the very end is at 1.
double depth_of(const Encoding& encoding, size_t offset, int64_t own_tokens);

// A generated document: its text, its tokens and the depth of its (first) evidence.
struct Placed {
  std::string text;
  size_t tokens = 0;
  double evidence_position = 0;
};

// A generated document and what is asked of it: each question with its evidence's position
// (the first: the needle placed at the depth asked for).
struct Asked {
  std::string question;
  double evidence_position = 0;
};
struct Made {
  Placed placed;
  std::vector<Asked> asked;
};

template <typename MakeDoc>
std::vector<GeneratedSplit> synthetic_task(const std::string& task,
                                           const SyntheticTaskOptions& options, MakeDoc make_doc) {
  if (options.documents == 0 || options.queries == 0)
    throw FieldError(options.queries == 0 ? "queries" : "documents", "must be > 0");
  if (options.queries > options.documents)
    throw FieldError("queries", "at most documents (" + std::to_string(options.documents) +
                                    "): each query targets its own document");
  if (options.keys == 0) throw FieldError("keys", "must be > 0");
  if (options.queries_per_document < 1 || options.queries_per_document > options.keys)
    throw FieldError("queries_per_document",
                     "must be in [1, keys] (each query asks for another key of the document)");
  for (double depth : options.depths)
    if (!(depth >= 0 && depth <= 1)) throw FieldError("depths", "each depth must be in [0, 1]");
  std::vector<GeneratedSplit> splits;
  for (const int64_t length : options.lengths) {
    if (length < 32) throw FieldError("lengths", "each length must be >= 32 tokens");
    Rng rng(mix_seed(options.seed, static_cast<uint64_t>(length)));
    // The first `documents` names are asked for; each document's other keys take the rest.
    const std::vector<std::string> names = draw_names(options.documents * options.keys, rng);
    GeneratedSplit split;
    split.name = std::to_string(length);
    for (size_t d = 0; d < options.documents; ++d) {
      const bool depth_set = !options.depths.empty() && d < options.queries;
      // (Drawn always, so a depth map and the plain task share their other draws.)
      const double uniform = rng.uniform();
      const double relative = depth_set ? options.depths[d % options.depths.size()] : uniform;
      std::vector<std::string> keys = {names[d]};
      for (size_t k = 1; k < options.keys; ++k)
        keys.push_back(names[options.documents + d * (options.keys - 1) + (k - 1)]);
      Made made = make_doc(keys, length, relative, rng);
      Document doc;
      doc.id = task + "-" + split.name + "-" + std::to_string(d);
      doc.text = std::move(made.placed.text);
      doc.extra = {{"context_length", length}, {"tokens", made.placed.tokens}};
      for (size_t m = 0; d < options.queries && m < made.asked.size(); ++m) {
        Query query;
        query.id = task + "-" + split.name + "-q" + std::to_string(d) +
                   (m > 0 ? "-" + std::to_string(m) : "");
        query.text = made.asked[m].question;
        query.extra = {{"context_length", length},
                       {"tokens", made.placed.tokens},
                       {"evidence_position", made.asked[m].evidence_position}};
        if (depth_set && m == 0) query.extra["depth"] = relative;
        split.data.qrels[query.id][doc.id] = 1;
        split.data.queries.push_back(std::move(query));
      }
      split.data.corpus.push_back(std::move(doc));
    }
    splits.push_back(std::move(split));
  }
  return splits;
}

}  // namespace lmk
