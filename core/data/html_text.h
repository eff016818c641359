#pragma once

// Documentation that Debian ships as HTML, rendered to plain text for the built-in corpora:
// the Python 3.11 documentation (python3.11-doc) and the Linux kernel documentation
// (linux-doc-6.1), both built by Sphinx. Parsed with libxml2's HTML parser (which recovers from
// malformed markup the way browsers do); the text is the page's main content.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace lmk {

struct HtmlText {
  std::string title;  // <title>, without a " — Python 3.11 documentation"-style suffix
  std::string text;   // the main content as paragraphs separated by blank lines
};

// The text of a page: the element with role="main" (Sphinx's content), else <body>; headings,
// paragraphs, list items, table rows and definition terms start new paragraphs or lines,
// <pre> keeps its lines, other whitespace collapses; scripts, styles, navigation, forms and
// Sphinx's header links (¶) are left out. Markup libxml2 cannot parse at all is an InputError
// naming `where`; broken markup is recovered from.
HtmlText html_to_text(std::string_view html, const std::string& where);

// A named documentation corpus that Debian ships as HTML.
struct HtmlDocsSource {
  std::string name;     // "python-docs", "kernel-docs"
  std::string package;  // the Debian package that installs it
  std::string root;     // its HTML folder
};

// The sources lmk knows: python-docs (python3.11-doc) and kernel-docs (linux-doc-6.1).
const std::vector<HtmlDocsSource>& html_docs_sources();
// The source called `name`; an InputError naming `where` and the known ones otherwise.
const HtmlDocsSource& html_docs_source(const std::string& name,
                                       const std::string& where = "source");

// An InputError naming the package and the command that installs it when the source's folder
// is missing.
void require_installed(const HtmlDocsSource& source);

struct HtmlRenderOptions {
  size_t limit = 0;        // 0: every page; else this many, spread evenly over the sorted list
  size_t min_bytes = 200;  // pages whose text is shorter are skipped (indexes, stubs)
};

// What a rendering did.
struct HtmlRenderReport {
  size_t pages = 0;        // .html files considered
  size_t rendered = 0;     // written as text
  size_t short_pages = 0;  // skipped: text shorter than min_bytes
  size_t rejected = 0;     // skipped: the parser could not read them
  size_t bytes = 0;        // of the written text
};

// Renders the source's pages (every .html below its root but Sphinx's generated ones:
// genindex, search, py-modindex, _static, _sources, _images, _downloads) into out_dir as
// RELATIVE/PATH.txt, written atomically, and marks the folder complete (out_dir/.complete),
// after require_installed.
HtmlRenderReport render_html_docs(const HtmlDocsSource& source, const std::string& out_dir,
                                  const HtmlRenderOptions& options = {});

}  // namespace lmk
