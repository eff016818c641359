#pragma once

// What the generated tasks' unit tests share (tests/core/data/generators_test.cpp,
// corpus_tasks_test.cpp): a one-token-per-word tokenizer and man-page-like documents.

#include <memory>
#include <string>
#include <vector>

#include "core/data/formats.h"
#include "core/tokenize/hf_tokenizer.h"
#include "tests/support/test_tokenizers.h"

namespace lmk::testing {

// Whitespace-split words: one token per word, so lengths are easy to check by hand.
inline std::unique_ptr<Tokenizer> words_tokenizer() {
  return parse_hf_tokenizer(testing::word_level_json().dump(), "words");
}

inline size_t words(const std::string& text) {
  return words_tokenizer()->encode(text).ids.size();
}

inline std::vector<Document> haystack_documents() {
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

}  // namespace lmk::testing
