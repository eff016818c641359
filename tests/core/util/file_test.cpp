#include "core/util/file.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "core/util/error.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

TEST(AtomicFileTest, ReplacesOnlyOnCommit) {
  testing::TempDir dir;
  const std::string path = dir.write("state.txt", "old");
  {
    AtomicFile f(path);
    f.write("new content");
    EXPECT_EQ(read_file(path), "old") << "not visible before commit";
  }
  EXPECT_EQ(read_file(path), "old") << "abandoned writes leave the file alone";
  {
    AtomicFile f(path);
    f.write("new ");
    f.write("content");
    f.commit();
  }
  EXPECT_EQ(read_file(path), "new content");
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 1u) << "no temporary file left behind";
  EXPECT_THROW(AtomicFile((dir.path() / "no/such/dir/x").string()), InputError);
  EXPECT_THROW(read_file((dir.path() / "missing").string()), InputError);
}

TEST(ShellQuoteTest, ShReadsTheQuotedWordBackAsItWas) {
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  const std::string word = "a b $HOME `x` \"q\" it's\\";
  FILE* pipe = popen(("printf %s " + shell_quote(word)).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[256] = {};
  const size_t n = std::fread(buffer, 1, sizeof buffer - 1, pipe);
  pclose(pipe);
  EXPECT_EQ(std::string(buffer, n), word);
}

}  // namespace
}  // namespace lmk
