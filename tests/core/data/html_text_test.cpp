#include "core/data/html_text.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// A page as Sphinx writes one: navigation around a role="main" body.
const char* kSphinxPage = R"(<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>4. Built-in Types &#8212; Python 3.11 documentation</title>
<script>var x = "not text";</script><style>p { color: red }</style></head>
<body><div class="related" role="navigation"><ul><li><a href="x">index</a></li></ul></div>
<div class="document"><div class="body" role="main">
<section id="types"><h1>Built-in Types<a class="headerlink" href="#types">¶</a></h1>
<p>The principal   built-in types are
numerics, sequences&nbsp;and &lt;mappings&gt;.</p>
<ul><li>first item</li><li>second <em>item</em></li></ul>
<pre>def f(x):
    return  x + 1
</pre>
<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>
<dl><dt>term</dt><dd>its definition</dd></dl>
</section></div></div>
<div class="sphinxsidebar" role="navigation"><h3>Navigation</h3></div>
<footer>© Copyright</footer></body></html>)";

// Whether this process has libxml2 mapped.
bool libxml2_mapped() {
  return read_file("/proc/self/maps").find("libxml2.so") != std::string::npos;
}

// libxml2 (and ICU behind it) comes into a process with the first page it reads, not before:
// the model commands and the GPU device bundle run without it. (First in this file: run
// together, the later tests have read pages.)
TEST(HtmlTextTest, LibXml2IsOpenedByTheFirstPageOnly) {
  EXPECT_FALSE(libxml2_mapped());
  EXPECT_EQ(html_to_text("<html><body><p>one page</p></body></html>", "page").text, "one page");
  EXPECT_TRUE(libxml2_mapped());
}

TEST(HtmlTextTest, TheMainContentAsParagraphsLinesAndCode) {
  const HtmlText page = html_to_text(kSphinxPage, "page.html");
  EXPECT_EQ(page.title, "4. Built-in Types");
  EXPECT_EQ(page.text,
            "Built-in Types\n\n"
            "The principal built-in types are numerics, sequences and <mappings>.\n\n"
            "first item\nsecond item\n\n"
            "def f(x):\n    return  x + 1\n\n"
            "a b\nc d\n\n"
            "term\nits definition");
}

TEST(HtmlTextTest, WithoutAMainRoleTheBodyAndBrokenMarkupIsRecovered) {
  const HtmlText page =
      html_to_text("<html><body><p>one <b>two</p><div>three<p>four</body>", "broken.html");
  EXPECT_EQ(page.text, "one two\n\nthree\n\nfour");
  EXPECT_EQ(page.title, "");
  EXPECT_THROW(html_to_text("", "empty.html"), InputError);
}

TEST(HtmlTextTest, RendersASourceFolderSkippingGeneratedAndShortPages) {
  TempDir dir;
  const fs::path root = dir.path() / "html";
  fs::create_directories(root / "library");
  fs::create_directories(root / "_static");
  const std::string long_text(300, 'x');
  auto page = [&](const fs::path& path, const std::string& body) {
    AtomicFile file(path.string());
    file.write("<html><body><div role=\"main\"><p>" + body + "</p></div></body></html>");
    file.commit();
  };
  page(root / "library" / "os.html", "os " + long_text);
  page(root / "index.html", "index " + long_text);
  page(root / "tiny.html", "too short");
  page(root / "genindex.html", "generated " + long_text);
  page(root / "_static" / "theme.html", "static " + long_text);
  const HtmlDocsSource source{"test-docs", "test-doc-package", root.string()};
  const std::string out = (dir.path() / "out").string();
  const HtmlRenderReport report = render_html_docs(source, out);
  EXPECT_EQ(report.pages, 3u) << "genindex and _static are not pages";
  EXPECT_EQ(report.rendered, 2u);
  EXPECT_EQ(report.short_pages, 1u);
  EXPECT_EQ(read_file(out + "/library/os.txt"), "os " + long_text + "\n");
  EXPECT_TRUE(fs::exists(out + "/index.txt"));
  EXPECT_FALSE(fs::exists(out + "/tiny.txt"));
  EXPECT_TRUE(fs::exists(out + "/.complete"));
  HtmlRenderOptions one;
  one.limit = 1;
  EXPECT_EQ(render_html_docs(source, (dir.path() / "one").string(), one).pages, 1u);
  // A source whose package is missing says which package and how to install it.
  const HtmlDocsSource missing{"missing-docs", "missing-doc-package", (dir.path() / "no").string()};
  try {
    render_html_docs(missing, out);
    ADD_FAILURE() << "rendered a missing source";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("apt-get install missing-doc-package"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(html_docs_source("rust-docs"), InputError);
}

// The real packages scripts/setup installs: the text of a known page.
TEST(HtmlTextTest, RendersTheInstalledPythonAndKernelDocumentation) {
  const std::string python = html_docs_source("python-docs").root + "/library/stdtypes.html";
  const std::string kernel = html_docs_source("kernel-docs").root + "/admin-guide/cgroup-v2.html";
  ASSERT_TRUE(fs::exists(python)) << "python3.11-doc (scripts/setup installs it)";
  ASSERT_TRUE(fs::exists(kernel)) << "linux-doc-6.1 (scripts/setup installs it)";
  const HtmlText types = html_to_text(read_file(python), python);
  EXPECT_EQ(types.title, "Built-in Types");
  EXPECT_NE(types.text.find("Truth Value Testing"), std::string::npos);
  EXPECT_EQ(types.text.find("\xC2\xB6"), std::string::npos) << "no header links (¶)";
  EXPECT_EQ(types.text.find("Table of Contents"), std::string::npos) << "no sidebar";
  EXPECT_GT(types.text.size(), 100000u);
  const HtmlText cgroup = html_to_text(read_file(kernel), kernel);
  EXPECT_NE(cgroup.text.find("cgroup"), std::string::npos);
  EXPECT_GT(cgroup.text.size(), 50000u);
}

}  // namespace
}  // namespace lmk
