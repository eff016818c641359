#pragma once

// Code retrieval in the spirit of CodeSearchNet / COIR from the Python standard library that
// every Debian machine has (/usr/lib/python3.11): the query is a function's docstring (its first
// paragraph), the target the function's source with the docstring removed, among every function
// extracted (with or without a docstring). Fixed vs sentence landmarks should differ here: code
// has no sentences.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/data/formats.h"

namespace lmk {

// One function (def or async def: module level, a method, or nested) of a Python file.
struct PythonFunction {
  std::string file;            // path relative to the source folder ("json/decoder.py")
  std::string qualified_name;  // "JSONDecoder.raw_decode" (enclosing classes and functions)
  size_t line = 0;             // 1-based line of its def (or first decorator)
  std::string docstring;       // the docstring's content as written (without quotes), or ""
  std::string source;          // decorators, signature and body, dedented, the docstring removed
};

// The functions of Python source text, in file order. A small scanner of Python's lexical
// structure (strings of every quote and prefix, comments, brackets, line continuations) finds
// logical lines and blocks by indentation; it does not need the file to be valid Python, and
// bytes it cannot place end a function rather than throw. One-line functions
// (`def f(): return 1`) are skipped.
std::vector<PythonFunction> python_functions(std::string_view text, const std::string& file);

// A docstring's first paragraph (up to the first blank line), whitespace collapsed.
std::string docstring_summary(const std::string& docstring);

// Every function of the .py files under dir (recursively, sorted; folders named test, tests,
// idlelib's idle_test and site-packages left out: test code is most of what is undocumented).
// limit_files > 0 takes that many files spread over the sorted list.
std::vector<PythonFunction> read_python_functions(const std::string& dir, size_t limit_files = 0);

struct CodeTaskOptions {
  uint64_t seed = 42;
  size_t min_summary_bytes = 24;  // shorter docstring summaries make no query
  size_t min_source_lines = 3;  // functions with fewer lines (after the docstring) are not targets
  // Only the functions of files in these splits, targets and distractors alike (dev and test:
  // an evaluation-only corpus a fifth the size).
  std::vector<std::string> splits = {"train", "dev", "test"};
};

// The task: corpus = every function of at least min_source_lines lines (id "FILE:NAME",
// duplicates of one name in a file numbered), queries = the docstring summaries of those with
// one, each relevant to its own function; a query's split (train / dev / test, extra "split")
// follows its file (split_of_document), so the functions of one file never cross splits.
RetrievalSplit make_code_task(const std::vector<PythonFunction>& functions,
                              const CodeTaskOptions& options);

}  // namespace lmk
