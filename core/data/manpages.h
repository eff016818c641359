#pragma once

// The built-in corpus: the Linux man-pages project (Debian's manpages and manpages-dev
// packages, which scripts/setup installs) rendered to plain text by man / groff, without
// hyphenation (a word broken across lines would reach the tokenizer as two pieces).

#include <cstddef>
#include <string>
#include <vector>

namespace lmk {

struct ManPagesOptions {
  std::vector<int> sections = {2, 5, 7};  // system calls, file formats, overviews
  size_t limit = 0;        // 0: every page; else this many, spread evenly over the sorted list
  size_t threads = 2;      // man processes at once
  size_t min_bytes = 200;  // rendered pages shorter than this are dropped
};

// The installed man-page sources (.gz) of the sections, sorted; an InputError saying which
// packages to install when there are none.
std::vector<std::string> builtin_manpage_sources(const ManPagesOptions& options);

// Renders the pages into out_dir as NAME.SECTION.txt (written atomically; a page whose text
// is already there is kept) and marks the folder complete (out_dir/.complete). Returns the
// number of text files in the folder.
size_t render_manpages(const std::string& out_dir, const ManPagesOptions& options);

}  // namespace lmk
