// toml_unsafe_text keeps toml++ 3.3.0 away from the non-ASCII characters it cannot classify
// (undefined behaviour) and lets every other text through: non-ASCII text in strings and
// comments is TOML's everyday content.
#include "core/util/toml_guard.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/toml_config.h"

namespace lmk {
namespace {

TEST(TomlGuard, TheShippedConfigsAndNonAsciiInStringsAndCommentsPass) {
  for (const auto& entry : std::filesystem::directory_iterator(LMK_SOURCE_DIR "/experiments"))
    if (entry.path().extension() == ".toml")
      EXPECT_EQ(toml_unsafe_text(read_file(entry.path().string())), "") << entry.path();
  EXPECT_EQ(toml_unsafe_text("# café, 日本語\nname = \"Müller §\"\nx = 'ÿ'\n"), "");
  EXPECT_EQ(toml_unsafe_text("s = \"\"\"\nline é\n\"\"\"\nt = '''\nà\n'''\n"), "");
  // Up to two quotes before the closing three belong to the string.
  EXPECT_EQ(toml_unsafe_text("a = \"\"\"x\"\"\"\"\"\nb = \"é\"\n"), "");
  EXPECT_EQ(toml_unsafe_text("a = \"x \\\" é\"\n"), "");
  // A backslash that does not end its line escapes one character.
  EXPECT_EQ(toml_unsafe_text("s = \"\"\"a\\tb é\"\"\"\n"), "");
}

TEST(TomlGuard, NonAsciiOutsideStringsAndAfterALineEndingBackslashIsNamedByLine) {
  // The two inputs of marzer/tomlplusplus#295 and #190.
  EXPECT_EQ(toml_unsafe_text("\xcc\xaa"), "line 1: character U+032A outside a string or comment");
  EXPECT_EQ(toml_unsafe_text("s = \"\"\"\\\n\xc2\xa7\"\"\"\n"),
            "line 2: character U+00A7 after a line-ending backslash");
  EXPECT_EQ(toml_unsafe_text("a = 1\n# é\nb = \"é\"\nc = é\n"),
            "line 4: character U+00E9 outside a string or comment");
  EXPECT_EQ(toml_unsafe_text("s = \"\"\"x\\  \n\n   \xe3\x80\x81\"\"\""),
            "line 3: character U+3001 after a line-ending backslash");
  // Broken UTF-8, and a quote where no string can start (the fuzzer's input: toml++ reads on
  // as a bare value).
  EXPECT_EQ(toml_unsafe_text("a = \"x\x9c\"\n"), "line 1: not UTF-8 (byte 0x9C)");
  EXPECT_EQ(toml_unsafe_text("init = -\"\xd0\xac\"\n"),
            "line 1: character U+042C outside a string or comment");
  EXPECT_EQ(toml_unsafe_text("a = [\n  \"\xd0\xac\",\n  '\xd0\xac'\n]\n[\"\xd0\xac\".x]\n"), "");
  // A quote inside a broken bare value opens no string for toml++, which classifies what
  // follows; so does a backslash, spaces and a non-ASCII character in a multi-line string.
  for (const char* input : {"a = -='''\xc3\xa9", "a = +{'''\xc3\xa9=}",
                            "a = -a11\"\"\"{[\"\"\"\xc3\xa9", "a = x\"\xc3\xa9\""})
    EXPECT_NE(toml_unsafe_text(input), "") << input;
  EXPECT_EQ(toml_unsafe_text("s = \"\"\"\\ \xc3\xa9\"\"\"\n"),
            "line 1: character U+00E9 after a backslash");
  // Valid TOML: non-ASCII in quoted keys, inline tables and arrays, after a byte order mark.
  EXPECT_EQ(toml_unsafe_text("\xEF\xBB\xBF"
                             "a = 1\n"),
            "");
  EXPECT_EQ(toml_unsafe_text("c=\"\xc3\xa9\"\na.\"\xc3\xa9\".b = 1\n[a.\"\xc3\xa9\"]\n"
                             "t = {x=\"\xc3\xa9\",y=[1,\"\xc3\xa9\"]}\nd = 1979-05-27 07:32:00\n"),
            "");
  // A backslash before a non-ASCII character is no escape (toml++ classifies the character).
  EXPECT_EQ(toml_unsafe_text("s = \"\\\xc3\xa9\"\n"), "line 1: character U+00E9 after a backslash");
  EXPECT_EQ(toml_unsafe_text("s = \"\"\"x\\\xc3\xa9\"\"\"\n"),
            "line 1: character U+00E9 after a backslash");
  // A string that a newline ends (not valid TOML) does not hide what follows.
  EXPECT_NE(toml_unsafe_text("a = \"open\nb = é\n"), "");
}

TEST(TomlGuard, AStudyConfigWithSuchACharacterIsAnInputErrorNamingTheFile) {
  const std::string path = testing::TempDir() + "/guard.toml";
  std::ofstream(path) << "[study]\nname = \"x\"\n\xc2\xa1 = 3\n";
  try {
    TomlConfig config(path, {{"study", {"name"}}});
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("line 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lmk
