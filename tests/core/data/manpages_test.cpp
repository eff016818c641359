// The built-in corpus (core/data/manpages.h): the installed sources of Debian's manpages and
// manpages-dev packages for the sections asked, sorted and spread by `limit`, and their
// rendering to NAME.SECTION.txt files in a folder marked complete. Needs the packages
// (scripts/setup installs them) and man / groff / col; without them the tests are skipped.
#include "core/data/manpages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/input_error_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::TempDir;

// Pages of the manpages (signal.7) and manpages-dev (open.2) packages.
const char* const kSignal = "/usr/share/man/man7/signal.7.gz";
const char* const kOpen = "/usr/share/man/man2/open.2.gz";

bool packages_installed() {
  return fs::exists(kSignal) && fs::exists(kOpen);
}

// The sources are the packages' .gz pages of exactly the sections asked, sorted, each once.
TEST(ManPagesTest, SourcesAreThePagesOfTheSectionsAskedSorted) {
  if (!packages_installed()) GTEST_SKIP() << "manpages / manpages-dev are not installed";
  ManPagesOptions options;  // sections 2, 5, 7
  const std::vector<std::string> all = builtin_manpage_sources(options);
  EXPECT_TRUE(std::is_sorted(all.begin(), all.end()));
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size());
  std::set<std::string> folders;
  for (const std::string& page : all) {
    EXPECT_EQ(fs::path(page).extension(), ".gz") << page;
    EXPECT_TRUE(fs::exists(page)) << page;
    folders.insert(fs::path(page).parent_path().string());
  }
  EXPECT_EQ(folders, (std::set<std::string>{"/usr/share/man/man2", "/usr/share/man/man5",
                                            "/usr/share/man/man7"}));
  EXPECT_TRUE(std::binary_search(all.begin(), all.end(), kSignal));
  EXPECT_TRUE(std::binary_search(all.begin(), all.end(), kOpen));

  options.sections = {7};
  const std::vector<std::string> seven = builtin_manpage_sources(options);
  EXPECT_TRUE(std::binary_search(seven.begin(), seven.end(), kSignal));
  EXPECT_FALSE(std::binary_search(seven.begin(), seven.end(), kOpen));
  EXPECT_TRUE(std::includes(all.begin(), all.end(), seven.begin(), seven.end()));
  EXPECT_LT(seven.size(), all.size());
}

// limit keeps that many pages spread evenly over the sorted list (item i * size / limit, as
// keep_spread in core/util/file.h says), so a small corpus samples every section.
TEST(ManPagesTest, ALimitSpreadsThePagesOverTheSortedList) {
  if (!packages_installed()) GTEST_SKIP() << "manpages / manpages-dev are not installed";
  ManPagesOptions options;
  const std::vector<std::string> all = builtin_manpage_sources(options);
  options.limit = 6;
  const std::vector<std::string> some = builtin_manpage_sources(options);
  ASSERT_EQ(some.size(), 6u);
  for (size_t i = 0; i < some.size(); ++i) EXPECT_EQ(some[i], all[i * all.size() / 6]) << i;
  EXPECT_NE(some.front().find("/man2/"), std::string::npos);
  EXPECT_NE(some.back().find("/man7/"), std::string::npos);
  options.limit = all.size() + 10;
  EXPECT_EQ(builtin_manpage_sources(options), all) << "a limit above the count keeps them all";
}

// No section, or a section the packages do not fill, is an InputError saying what to do.
TEST(ManPagesTest, NoSectionsOrNoPagesIsAnInputError) {
  ManPagesOptions options;
  options.sections = {};
  EXPECT_EQ(error_of([&] { builtin_manpage_sources(options); }),
            "sections: no man page section given");
  options.sections = {9};  // kernel routines: not in Debian's manpages packages
  const std::string none = error_of([&] { builtin_manpage_sources(options); });
  EXPECT_NE(none.find("apt-get install manpages manpages-dev"), std::string::npos) << none;
  TempDir dir;
  const std::string out = (dir.path() / "pages").string();
  EXPECT_NE(error_of([&] { render_manpages(out, options); }).find("apt-get install manpages"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(fs::path(out) / ".complete"));
}

// Each page becomes NAME.SECTION.txt, plain text (no overstrikes or escapes); a page already
// there is kept; .complete holds the count; the count is of every .txt file in the folder.
TEST(ManPagesTest, RendersEachPageToTextAndKeepsWhatIsThere) {
  if (!packages_installed()) GTEST_SKIP() << "manpages / manpages-dev are not installed";
  ManPagesOptions options;
  options.sections = {7};
  options.limit = 3;
  const std::vector<std::string> pages = builtin_manpage_sources(options);
  ASSERT_EQ(pages.size(), 3u);
  TempDir dir;
  const fs::path out = dir.path() / "pages";
  fs::create_directories(out);
  // The second page's text is already there, and a file of another origin sits beside it.
  const std::string kept_name = fs::path(pages[1]).stem().string() + ".txt";
  dir.write("pages/" + kept_name, "rendered before");
  dir.write("pages/notes.txt", "not a man page");
  EXPECT_EQ(render_manpages(out.string(), options), 4u);
  EXPECT_EQ(read_file((out / kept_name).string()), "rendered before");
  EXPECT_EQ(read_file((out / ".complete").string()), "4 pages\n");
  for (const size_t i : {size_t{0}, size_t{2}}) {
    const std::string stem = fs::path(pages[i]).stem().string();  // "NAME.7"
    ASSERT_EQ(stem.substr(stem.size() - 2), ".7");
    const std::string text = read_file((out / (stem + ".txt")).string());
    EXPECT_GE(text.size(), options.min_bytes) << stem;
    EXPECT_NE(text.find("NAME"), std::string::npos) << stem;
    const std::string name = stem.substr(0, stem.size() - 2);
    EXPECT_NE(text.find(name), std::string::npos) << "the page names itself: " << stem;
    EXPECT_EQ(text.find('\b'), std::string::npos) << "overstrikes removed: " << stem;
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << "no escapes: " << stem;
  }
}

// Pages shorter than min_bytes are dropped; the folder is still marked complete.
TEST(ManPagesTest, DropsPagesShorterThanMinBytes) {
  if (!packages_installed()) GTEST_SKIP() << "manpages / manpages-dev are not installed";
  ManPagesOptions options;
  options.sections = {7};
  options.limit = 2;
  options.threads = 1;
  options.min_bytes = size_t{1} << 30;
  TempDir dir;
  const std::string out = (dir.path() / "pages").string();
  EXPECT_EQ(render_manpages(out, options), 0u);
  EXPECT_EQ(read_file(out + "/.complete"), "0 pages\n");
  size_t entries = 0;
  for (const auto& entry : fs::directory_iterator(out))
    entries += entry.path() != out + "/.complete";
  EXPECT_EQ(entries, 0u) << "no page, and no temporary file left behind";
}

}  // namespace
}  // namespace lmk
