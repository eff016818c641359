#pragma once

// The character classes and word lists of the sentence splitter (internal to core/tokenize:
// sentence_splitter.cpp applies its rules with them; sentence_splitter_tables.cpp defines them).

#include <string>
#include <string_view>
#include <unordered_set>

namespace lmk::sentence_split {

// --- Character classes (hand-written for the few code points the rules need) ---------------

// Returns true for ASCII 0-9.
bool is_ascii_digit(char32_t cp);

// Returns true for ASCII and fullwidth digits.
bool is_digit(char32_t cp);

// Returns true for Unicode white space (the White_Space property).
bool is_whitespace(char32_t cp);

// Returns true for characters that end a line (CR is handled with its LF by the caller).
bool is_line_break(char32_t cp);

// Returns true for letters of any script (approximate outside Latin; combining marks of other
// scripts count as letters, which is what the fragment rule wants) and non-ASCII digits.
bool is_letter(char32_t cp);

// Returns true for letters and digits of any script.
bool is_alphanumeric(char32_t cp);

// Returns true for letters of the Latin script (ASCII, Latin-1, extensions, fullwidth).
bool is_latin_letter(char32_t cp);

// Returns true for uppercase Latin letters (ASCII, Latin-1, Latin Extended-A and Additional,
// fullwidth). Latin Extended-B counts as not uppercase, so it never starts a sentence.
bool is_latin_uppercase(char32_t cp);

// Returns true for lowercase letters of the cased non-Latin scripts (Greek, Cyrillic,
// Armenian); such a letter after ". " continues the sentence like a Latin lowercase one.
bool is_non_latin_lowercase(char32_t cp);

// Returns true for . ! ? and their compatibility forms; they end a sentence only when
// whitespace and a plausible sentence start follow.
bool is_whitespace_terminator(char32_t cp);

// Returns true for terminators of scripts written without spaces or with their own stop
// (CJK 。！？．｡, Devanagari । ॥, Arabic ؟ ۔, Armenian ։, Ethiopic ። ፧, Myanmar ။, Khmer ។);
// they end a sentence even when no whitespace follows.
bool is_standalone_terminator(char32_t cp);

// Returns true for any sentence terminator.
bool is_terminator(char32_t cp);

// Returns true for closing quotes, brackets and emphasis marks that may follow a terminator
// and still belong to the sentence it ends ("Go." / (done.) / **Done.** / 。」).
bool is_closing_punctuation(char32_t cp);

// Returns true for opening quotes and brackets (and Spanish ¿ ¡) that may start a sentence.
bool is_opening_punctuation(char32_t cp);

// Returns true for list bullets and Markdown block markers that start a sentence when they
// open a line ("- item", "* item", "# Heading", "> quote").
bool is_line_start_marker(char32_t cp);

// --- Word lists --------------------------------------------------------------------------

// Abbreviations that (almost) never end a sentence: titles and reference markers that a name,
// number or phrase follows ("Mr. Smith", "e.g. Python", "Fig. 3", "cf. Table 2").
const std::unordered_set<std::string_view>& abbreviations_never_final();

// Abbreviations that may also end a sentence ("Acme Inc." / "in the U.S." / "in Jan."): they
// end one only when a common sentence-opening word follows.
const std::unordered_set<std::string_view>& abbreviations_maybe_final();

// Frequent capitalized first words of English sentences; after a may-be-final abbreviation
// ("... the U.S. The next year") they tell a sentence end from a name ("U.S. Army").
const std::unordered_set<std::string_view>& common_sentence_openers();

// Returns true if `word` is in `words` as written, with its first letter's case flipped, or,
// when written in capitals, capitalized ("mr", "MR" and "Etc" match "Mr" and "etc"; "CA" does
// not match "ca").
bool contains_word(const std::unordered_set<std::string_view>& words, const std::string& word);

}  // namespace lmk::sentence_split
