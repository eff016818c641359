#include "core/data/html_text.h"

#include <dlfcn.h>
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <memory>
#include <set>
#include <type_traits>

#include "core/util/error.h"
#include "core/util/file.h"

namespace lmk {

namespace {

namespace fs = std::filesystem;

// libxml2 is opened when the first page is read (dlopen), not linked: a process that reads no
// HTML -- every model command, the GPU device bundle (tests/gpu) -- maps neither it nor ICU
// behind it (31 MB of data). Its types and constants come from its headers; its functions are
// these.
struct LibXml2 {
  decltype(&::xmlInitParser) init_parser = nullptr;
  decltype(&::htmlReadMemory) read_memory = nullptr;
  decltype(&::xmlDocGetRootElement) root_element = nullptr;
  decltype(&::xmlGetProp) get_prop = nullptr;
  decltype(&::xmlFreeDoc) free_doc = nullptr;
  xmlFreeFunc* free = nullptr;  // the library's xmlFree variable
};

const LibXml2& libxml2(const std::string& where) {
  static const LibXml2* loaded = []() -> const LibXml2* {
    void* handle = dlopen("libxml2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!handle) return nullptr;
    auto* lib = new LibXml2;  // for the process's life, as the library
    auto find = [handle](auto& function, const char* name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
      return function != nullptr;
    };
    const bool all =
        find(lib->init_parser, "xmlInitParser") && find(lib->read_memory, "htmlReadMemory") &&
        find(lib->root_element, "xmlDocGetRootElement") && find(lib->get_prop, "xmlGetProp") &&
        find(lib->free_doc, "xmlFreeDoc") && find(lib->free, "xmlFree");
    if (!all) return nullptr;
    lib->init_parser();
    return lib;
  }();
  if (!loaded)
    throw input_error(where,
                      "reading HTML needs libxml2 (libxml2.so.2), which this machine lacks "
                      "or cannot load (Debian: apt-get install libxml2)");
  return *loaded;
}

// Elements whose content is not page text.
const std::set<std::string> kSkipped = {
    "script", "style",    "noscript", "nav",    "header",   "footer", "form",   "button", "input",
    "select", "textarea", "svg",      "iframe", "template", "head",   "object", "canvas"};
// Elements that stand apart from what is around them (a blank line).
const std::set<std::string> kBlocks = {
    "p",      "div",        "section", "article", "aside",   "main",    "blockquote",
    "ul",     "ol",         "dl",      "table",   "thead",   "tbody",   "tfoot",
    "figure", "figcaption", "caption", "h1",      "h2",      "h3",      "h4",
    "h5",     "h6",         "hr",      "address", "details", "summary", "center"};
// Elements that start a line of their own.
const std::set<std::string> kLines = {"li", "dt", "dd", "tr", "br"};
// Classes of Sphinx's (and Read the Docs') page furniture.
const std::vector<std::string> kSkippedClasses = {
    "headerlink",  "sphinxsidebar", "related",    "footer",          "rst-footer-buttons",
    "wy-nav-side", "breadcrumbs",   "navigation", "toctree-wrapper", "wy-breadcrumbs"};

std::string attribute(xmlNode* node, const char* name) {
  const LibXml2& xml = libxml2(name);  // loaded by html_to_text already
  xmlChar* value = xml.get_prop(node, reinterpret_cast<const xmlChar*>(name));
  std::string text = value ? reinterpret_cast<const char*>(value) : "";
  (*xml.free)(value);
  return text;
}

std::string element_name(xmlNode* node) {
  return node->name ? reinterpret_cast<const char*>(node->name) : "";
}

bool skipped(xmlNode* node) {
  if (kSkipped.count(element_name(node))) return true;
  const std::string role = attribute(node, "role");
  if (role == "navigation" || role == "search") return true;
  const std::string classes = " " + attribute(node, "class") + " ";
  for (const std::string& name : kSkippedClasses)
    if (classes.find(" " + name + " ") != std::string::npos) return true;
  return false;
}

// Assembles text: runs of whitespace become one space, breaks between blocks one blank line,
// <pre> content as it is.
class TextWriter {
 public:
  void text(std::string_view text, bool preformatted) {
    for (size_t i = 0; i < text.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      if (preformatted) {
        if (c == '\r') continue;
        flush();
        out_ += static_cast<char>(c);
        continue;
      }
      // A no-break space (U+00A0) is a space here.
      const bool nbsp =
          c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0xA0;
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || nbsp) {
        space_ = true;
        i += nbsp;
        continue;
      }
      flush();
      out_ += static_cast<char>(c);
    }
  }
  // Ends the current line (1) or paragraph (2) before the next text.
  void brk(int lines) {
    breaks_ = std::max(breaks_, lines);
    space_ = false;
  }
  std::string finish() {
    while (!out_.empty() && (out_.back() == ' ' || out_.back() == '\n')) out_.pop_back();
    return out_;
  }

 private:
  void flush() {
    if (!out_.empty()) {
      if (breaks_ > 0) {
        // A block's own trailing space or line ends (a <pre>'s last newline) give way to it.
        while (!out_.empty() && (out_.back() == ' ' || out_.back() == '\n')) out_.pop_back();
        out_ += breaks_ == 2 ? "\n\n" : "\n";
      } else if (space_ && out_.back() != '\n') {
        out_ += ' ';
      }
    }
    breaks_ = 0;
    space_ = false;
  }

  std::string out_;
  int breaks_ = 0;
  bool space_ = false;
};

void write_text(xmlNode* node, bool preformatted, TextWriter& writer) {
  for (xmlNode* child = node->children; child; child = child->next) {
    if (child->type == XML_TEXT_NODE || child->type == XML_CDATA_SECTION_NODE) {
      if (child->content) writer.text(reinterpret_cast<const char*>(child->content), preformatted);
      continue;
    }
    if (child->type != XML_ELEMENT_NODE || skipped(child)) continue;
    const std::string name = element_name(child);
    if (name == "pre") {
      writer.brk(2);
      write_text(child, true, writer);
      writer.brk(2);
    } else if (kBlocks.count(name)) {
      writer.brk(2);
      write_text(child, preformatted, writer);
      writer.brk(2);
    } else if (kLines.count(name)) {
      writer.brk(1);
      write_text(child, preformatted, writer);
      writer.brk(1);
    } else {
      if (name == "td" || name == "th") writer.text(" ", false);
      write_text(child, preformatted, writer);
    }
  }
}

// The first element (depth first) for which `match` holds.
template <typename Match>
xmlNode* find_element(xmlNode* node, const Match& match) {
  for (xmlNode* child = node; child; child = child->next) {
    if (child->type != XML_ELEMENT_NODE) continue;
    if (match(child)) return child;
    if (xmlNode* found = find_element(child->children, match)) return found;
  }
  return nullptr;
}

struct DocFree {
  void operator()(xmlDoc* doc) const { libxml2("").free_doc(doc); }
};

// The title without the site's name after its last " — " (Sphinx: "Page — Project").
std::string page_title(xmlNode* root) {
  xmlNode* title = find_element(root, [](xmlNode* n) { return element_name(n) == "title"; });
  if (!title) return "";
  TextWriter writer;
  write_text(title, false, writer);
  std::string text = writer.finish();
  const size_t dash = text.rfind(" \xE2\x80\x94 ");
  if (dash != std::string::npos && dash > 0) text.resize(dash);
  return text;
}

}  // namespace

HtmlText html_to_text(std::string_view html, const std::string& where) {
  if (html.size() > static_cast<size_t>(INT_MAX))
    throw input_error(where, "HTML page larger than 2 GiB");
  const LibXml2& xml = libxml2(where);
  const int options = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                      HTML_PARSE_NONET | HTML_PARSE_NOIMPLIED;
  std::unique_ptr<xmlDoc, DocFree> doc(
      xml.read_memory(html.data(), static_cast<int>(html.size()), nullptr, "UTF-8", options));
  xmlNode* root = doc ? xml.root_element(doc.get()) : nullptr;
  if (!root) throw input_error(where, "not an HTML page the parser can read");
  HtmlText page;
  page.title = page_title(root);
  xmlNode* main = find_element(root, [](xmlNode* n) { return attribute(n, "role") == "main"; });
  if (!main) main = find_element(root, [](xmlNode* n) { return element_name(n) == "body"; });
  if (!main) main = root;
  TextWriter writer;
  write_text(main, element_name(main) == "pre", writer);
  page.text = writer.finish();
  return page;
}

const std::vector<HtmlDocsSource>& html_docs_sources() {
  static const std::vector<HtmlDocsSource> sources = {
      {"python-docs", "python3.11-doc", "/usr/share/doc/python3.11/html"},
      {"kernel-docs", "linux-doc-6.1", "/usr/share/doc/linux-doc-6.1/html"}};
  return sources;
}

const HtmlDocsSource& html_docs_source(const std::string& name, const std::string& where) {
  std::string names;
  for (const HtmlDocsSource& source : html_docs_sources()) {
    if (source.name == name) return source;
    names += (names.empty() ? "" : ", ") + source.name;
  }
  throw input_error(where, "unknown documentation source '" + name + "' (" + names + ")");
}

void require_installed(const HtmlDocsSource& source) {
  std::error_code ec;
  if (!fs::is_directory(source.root, ec)) {
    throw input_error(source.name, source.root + " is missing: the package " + source.package +
                                       " is not installed (apt-get install " + source.package +
                                       "; scripts/setup installs it)");
  }
}

HtmlRenderReport render_html_docs(const HtmlDocsSource& source, const std::string& out_dir,
                                  const HtmlRenderOptions& options) {
  std::error_code ec;
  require_installed(source);
  static const std::set<std::string> kGenerated = {"genindex", "search", "py-modindex",
                                                   "genindex-all"};
  std::vector<fs::path> pages;
  for (auto it = fs::recursive_directory_iterator(source.root, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const std::string name = it->path().filename().string();
    if (it->is_directory() && !name.empty() && name[0] == '_') {
      it.disable_recursion_pending();  // _static, _sources, _images, _downloads
      continue;
    }
    const std::string stem = it->path().stem().string();
    if (it->is_regular_file() && it->path().extension() == ".html" && !kGenerated.count(stem) &&
        stem.rfind("genindex-", 0) != 0)
      pages.push_back(it->path());
  }
  std::sort(pages.begin(), pages.end());
  keep_spread(pages, options.limit);
  HtmlRenderReport report;
  report.pages = pages.size();
  fs::create_directories(out_dir);
  for (const fs::path& page : pages) {
    HtmlText text;
    try {
      text = html_to_text(read_file(page.string()), page.string());
    } catch (const InputError&) {
      ++report.rejected;
      continue;
    }
    if (text.text.size() < options.min_bytes) {
      ++report.short_pages;
      continue;
    }
    fs::path target = fs::path(out_dir) / fs::relative(page, source.root);
    target.replace_extension(".txt");
    fs::create_directories(target.parent_path());
    AtomicFile file(target.string());
    file.write(text.text + "\n");
    file.commit();
    ++report.rendered;
    report.bytes += text.text.size() + 1;
  }
  AtomicFile complete((fs::path(out_dir) / ".complete").string());
  complete.write(std::to_string(report.rendered) + " pages of " + source.name + "\n");
  complete.commit();
  return report;
}

}  // namespace lmk
