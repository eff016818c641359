#pragma once

#include <vector>

#include "core/data/generators.h"
#include "core/tokenize/tokenizer.h"

namespace lmk {

// RULER's word-extraction tasks as retrieval, over a vocabulary of seeded pseudo-words
// ("bakelo") shared by the documents of a length, so that a query's words occur in many
// documents and only their frequency tells the target.
// Common words (CWE): a numbered list ("1. bakelo 2. timuse ...") in which five common words
// take about 30 % of the items, each more often than any other word; the query names the five
// ("the most common words in the list: a, b, c, d, e"). With depths, the common words' items are
// drawn from the items nearest the depth (a band of max(20 %, their share) of the list).
// evidence_position: the mean depth of their occurrences. keys / values / queries per document are
// the needle's: refused.
std::vector<GeneratedSplit> make_common_words_task(const Tokenizer& tokenizer,
                                                   const SyntheticTaskOptions& options);
// Frequent words (FWE): words drawn from a Zipf distribution (alpha 2) over a random ranking of
// the vocabulary; the query names the text's three most frequent words (as cut to the length;
// ties: the higher-ranked). evidence_position: the mean depth of their occurrences. No depths.
std::vector<GeneratedSplit> make_frequent_words_task(const Tokenizer& tokenizer,
                                                     const SyntheticTaskOptions& options);

}  // namespace lmk
