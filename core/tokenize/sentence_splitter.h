#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

// Rule-based sentence splitting over UTF-8 text, for the "sentence" variant of landmark
// pooling (a landmark token after each sentence). Standard library only.
namespace lmk {

// Returns the exclusive end byte offsets of the sentences of `text`, in increasing order.
// Sentence i spans [ends[i-1], ends[i]) (the first starts at 0); the last end is text.size().
// Whitespace after a sentence's final punctuation belongs to that sentence. Empty text -> {}.
//
// Splits after . ! ? (and runs like ?! or ...) plus closing quotes/brackets when whitespace
// and a plausible sentence start follow; after 。！？． । ؟ even without whitespace; and at
// every blank line. Does not split after abbreviations, initials, list markers ("1. "), or
// before a lowercase word. A piece with fewer than two letters/digits is merged into its
// neighbour. Invalid UTF-8 is read byte by byte; no end falls inside a valid UTF-8 sequence.
// Runs in time linear in text.size().
std::vector<size_t> split_sentences(std::string_view text);

// The sentences of text as split_sentences cuts them, each with its trailing whitespace.
std::vector<std::string> sentence_texts(std::string_view text);

}  // namespace lmk
