// A TOML config read key by key (core/util/toml_config.h): readers of each type that leave
// absent keys alone, errors naming "file: section.key" (or "file:LINE"), profiles that override
// their sections, and [sweep] grids whose cells override both.
#include "core/util/toml_config.h"

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "tests/support/input_error_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::error_of;
using testing::TempDir;

const std::map<std::string, std::vector<std::string>> kKnown = {
    {"a", {"name", "count", "rate", "flag", "files", "sizes", "depths", "folder"}},
    {"b", {"count", "tags"}},
};

// Each reader reads its type; absent keys leave the value as it was.
TEST(TomlConfigTest, ReadsEachTypeAndLeavesAbsentKeysAlone) {
  TempDir dir;
  const TomlConfig config(dir.write("c.toml",
                                    "[a]\nname = \"x\"\ncount = 5\nrate = 0.25\nflag = true\n"
                                    "files = \"one\"\nsizes = [1, 2, 3]\ndepths = [0, 0.5]\n"
                                    "[b]\ntags = []\n"),
                          kKnown);
  std::string name = "default";
  int64_t count = 0;
  double rate = 0;
  bool flag = false;
  config.text("a", "name", name);
  config.integer("a", "count", count, 1);
  config.number("a", "rate", rate, 0, 1);
  config.boolean("a", "flag", flag);
  EXPECT_EQ(name, "x");
  EXPECT_EQ(count, 5);
  EXPECT_EQ(rate, 0.25);
  EXPECT_TRUE(flag);
  std::vector<std::string> files;
  config.text_or_texts("a", "files", files);
  EXPECT_EQ(files, std::vector<std::string>{"one"}) << "one string is a list of one";
  std::vector<int64_t> sizes;
  config.integers("a", "sizes", sizes, 1);
  EXPECT_EQ(sizes, (std::vector<int64_t>{1, 2, 3}));
  std::vector<double> depths;
  config.numbers("a", "depths", depths, 0, 1);
  EXPECT_EQ(depths, (std::vector<double>{0, 0.5})) << "an integer is a number";
  std::vector<std::string> tags = {"kept"};
  config.texts("b", "tags", tags, true);
  EXPECT_TRUE(tags.empty()) << "[] with empty_ok";

  // Absent: in the section, or the whole section.
  std::string folder = "unchanged";
  config.text("a", "folder", folder);
  EXPECT_EQ(folder, "unchanged");
  int64_t b_count = 9;
  config.integer("b", "count", b_count, 0);
  EXPECT_EQ(b_count, 9);
  std::vector<int64_t> none = {7};
  TomlConfig(dir.write("empty.toml", ""), kKnown).integers("a", "sizes", none, 0);
  EXPECT_EQ(none, std::vector<int64_t>{7});
  EXPECT_EQ(config.cell_count(), 1u) << "no sweep: one cell";
  EXPECT_EQ(config.cell_name(0), "");
}

// Paths resolve against the config's folder; absolute paths and "" are kept; where() names
// the file and the key.
TEST(TomlConfigTest, ResolvesPathsAgainstTheConfigsFolder) {
  TempDir dir;
  const std::string path = dir.write("c.toml", "");
  const TomlConfig config(path, kKnown);
  EXPECT_EQ(config.resolve("data/x.jsonl"), (dir.path() / "data" / "x.jsonl").string());
  EXPECT_EQ(config.resolve("../up.txt"), (dir.path().parent_path() / "up.txt").string());
  EXPECT_EQ(config.resolve("/abs/y"), "/abs/y");
  EXPECT_EQ(config.resolve(""), "");
  EXPECT_EQ(config.where("a", "count"), path + ": a.count");
}

// Unknown sections and keys fail when the file is opened; syntax errors name the line.
TEST(TomlConfigTest, UnknownSectionsKeysAndSyntaxErrorsAreNamed) {
  TempDir dir;
  const std::string p = dir.path().string() + "/";
  EXPECT_EQ(error_of([&] { TomlConfig(dir.write("s.toml", "[c]\nx = 1\n"), kKnown); }),
            p + "s.toml: [c]: unknown section (a, b)");
  EXPECT_EQ(error_of([&] { TomlConfig(dir.write("k.toml", "[a]\nnmae = \"x\"\n"), kKnown); }),
            p + "k.toml: a.nmae: unknown key");
  EXPECT_EQ(error_of([&] { TomlConfig(dir.write("v.toml", "top = 1\n"), kKnown); }),
            p + "v.toml: [top]: unknown section (a, b)")
      << "a top-level value is no section";
  const std::string syntax =
      error_of([&] { TomlConfig(dir.write("x.toml", "[a]\ncount = 1\nname = \n"), kKnown); });
  EXPECT_EQ(syntax.rfind(p + "x.toml:3: ", 0), 0u) << syntax;
  EXPECT_THROW(TomlConfig(p + "missing.toml", kKnown), InputError);
}

// A value of the wrong type or out of its range is an InputError "file: section.key: ...".
TEST(TomlConfigTest, WrongTypesAndRangesNameFileAndKey) {
  TempDir dir;
  const std::string path =
      dir.write("c.toml",
                "[a]\nname = 3\ncount = 1\nrate = 1.5\nflag = \"yes\"\nfiles = [\"f\", 2]\n"
                "sizes = [3, 0]\ndepths = [0.5, -0.1]\n[b]\ncount = 2.5\ntags = []\n");
  const TomlConfig config(path, kKnown);
  std::string text;
  int64_t integer = 0;
  double number = 0;
  bool flag = false;
  std::vector<std::string> texts;
  std::vector<int64_t> integers;
  std::vector<double> numbers;
  EXPECT_EQ(error_of([&] { config.text("a", "name", text); }), path + ": a.name: must be a string");
  EXPECT_EQ(error_of([&] { config.integer("a", "count", integer, 2); }),
            path + ": a.count: must be >= 2");
  EXPECT_EQ(error_of([&] { config.integer("b", "count", integer, 0); }),
            path + ": b.count: must be an integer");
  EXPECT_EQ(error_of([&] {
              config.number("a", "rate", number, 0, 1);
            }).rfind(path + ": a.rate: must be in [", 0),
            0u);
  EXPECT_EQ(error_of([&] { config.boolean("a", "flag", flag); }),
            path + ": a.flag: must be true or false");
  EXPECT_EQ(error_of([&] { config.texts("a", "files", texts); }),
            path + ": a.files: must hold strings only");
  EXPECT_EQ(error_of([&] { config.integers("a", "sizes", integers, 1); }),
            path + ": a.sizes: values must be >= 1");
  EXPECT_EQ(error_of([&] { config.numbers("a", "depths", numbers, 0, 1); }),
            path + ": a.depths: each must be in [0, 1]");
  EXPECT_EQ(error_of([&] { config.texts("b", "tags", texts); }),
            path + ": b.tags: must be a non-empty array of strings");
  EXPECT_EQ(error_of([&] { config.text_or_texts("a", "count", texts); }),
            path + ": a.count: must be a string or an array of strings");
  // The range's ends are inside it.
  config.integer("a", "count", integer, 1);
  EXPECT_EQ(integer, 1);
}

// After use_profile(NAME), [profile.NAME.SECTION] keys override [SECTION]'s and messages name
// the profile's key; unknown profiles fail, in the file and in use_profile.
TEST(TomlConfigTest, AProfileOverridesItsSectionsKeys) {
  TempDir dir;
  const std::string path = dir.write("c.toml",
                                     "[a]\ncount = 5\nname = \"base\"\n[profile.micro.a]\ncount = "
                                     "0\n[profile.full.b]\ncount = 1\n");
  TomlConfig config(path, kKnown, {"micro", "full"});
  int64_t count = 0;
  config.integer("a", "count", count, 0);
  EXPECT_EQ(count, 5) << "no profile used yet";
  config.use_profile("micro");
  config.integer("a", "count", count, 0);
  EXPECT_EQ(count, 0);
  std::string name;
  config.text("a", "name", name);
  EXPECT_EQ(name, "base") << "keys the profile does not set come from the section";
  EXPECT_EQ(error_of([&] { config.integer("a", "count", count, 1); }),
            path + ": profile.micro.a.count: must be >= 1");
  EXPECT_EQ(config.where("a", "name"), path + ": a.name");
  int64_t b_count = 7;
  config.integer("b", "count", b_count, 0);
  EXPECT_EQ(b_count, 7) << "another profile's key is not read";
  try {
    config.use_profile("huge");
    FAIL() << "accepted";
  } catch (const FieldError& e) {
    EXPECT_EQ(e.field(), "profile");
    EXPECT_EQ(e.message(), "unknown profile 'huge' (micro, full)");
  }

  const std::string p = dir.path().string() + "/";
  EXPECT_EQ(error_of([&] {
              TomlConfig(dir.write("u.toml", "[profile.huge.a]\ncount = 1\n"), kKnown, {"micro"});
            }),
            p + "u.toml: [profile.huge]: unknown profile (micro)");
  EXPECT_EQ(error_of([&] {
              TomlConfig(dir.write("k.toml", "[profile.micro.a]\nsteps = 1\n"), kKnown, {"micro"});
            }),
            p + "k.toml: profile.micro.a.steps: unknown key");
  EXPECT_EQ(
      error_of([&] { TomlConfig(dir.write("n.toml", "[profile.micro.a]\ncount = 1\n"), kKnown); }),
      p + "n.toml: [profile]: unknown section (a, b)")
      << "without profiles, [profile] is no section";
}

// [sweep] axes multiply in file order (the first varying slowest, whatever their names' order);
// a [[sweep.zip]] table is one axis whose arrays advance together; use_cell's values override
// the profile's and the section's.
TEST(TomlConfigTest, ASweepIsTheProductOfItsAxesInFileOrder) {
  TempDir dir;
  const std::string path = dir.write("c.toml",
                                     "[a]\ncount = 1\nname = \"base\"\n"
                                     "[profile.micro.a]\ncount = 2\nrate = 0.5\n"
                                     "[sweep]\n\"b.count\" = [10, 20]\n\"a.count\" = [3, 4, 5]\n"
                                     "[[sweep.zip]]\n\"a.name\" = [\"x\", \"y\"]\n"
                                     "\"a.sizes\" = [[128, 512], [64]]\n");
  TomlConfig config(path, kKnown, {"micro"}, true);
  ASSERT_EQ(config.cell_count(), 12u);  // 2 x 3 x 2
  EXPECT_EQ(config.cell_name(0), "b.count=10,a.count=3,name=x,sizes=[128,512]")
      << "count is the last part of two swept keys, so both keep their section";
  EXPECT_EQ(config.cell_name(1), "b.count=10,a.count=3,name=y,sizes=[64]");
  EXPECT_EQ(config.cell_name(2), "b.count=10,a.count=4,name=x,sizes=[128,512]");
  EXPECT_EQ(config.cell_name(11), "b.count=20,a.count=5,name=y,sizes=[64]");
  const std::vector<std::pair<std::string, std::string>> values = {
      {"b.count", "20"}, {"a.count", "4"}, {"name", "y"}, {"sizes", "[64]"}};
  EXPECT_EQ(config.cell_values(9), values);
  EXPECT_EQ(config.sweep_label("a", "name"), "name");
  EXPECT_EQ(config.sweep_label("b", "count"), "b.count");
  EXPECT_EQ(config.sweep_label("a", "rate"), "") << "not swept";

  config.use_profile("micro");
  config.use_cell(9);
  int64_t count = 0, b_count = 0;
  std::string name;
  std::vector<int64_t> sizes;
  double rate = 0;
  config.integer("a", "count", count, 0);
  config.integer("b", "count", b_count, 0);
  config.text("a", "name", name);
  config.integers("a", "sizes", sizes, 1);
  config.number("a", "rate", rate, 0, 1);
  EXPECT_EQ(count, 4) << "the cell's value over the profile's";
  EXPECT_EQ(b_count, 20);
  EXPECT_EQ(name, "y");
  EXPECT_EQ(sizes, std::vector<int64_t>{64});
  EXPECT_EQ(rate, 0.5) << "unswept keys: the profile's";
  // A cell's bad value is named by its sweep key and the cell.
  EXPECT_EQ(error_of([&] { config.integer("a", "count", count, 5); }),
            path +
                ": sweep.\"a.count\" (sweep cell b.count=20,a.count=4,name=y,sizes=[64]): "
                "must be >= 5");
  EXPECT_THROW(config.use_cell(12), std::out_of_range);
}

// A sweep must name known keys, each once, with non-empty arrays (of equal lengths in a zip);
// without sweep = true, [sweep] is an unknown section.
TEST(TomlConfigTest, BadSweepsAreNamed) {
  TempDir dir;
  const std::string p = dir.path().string() + "/";
  auto error = [&](const std::string& name, const std::string& text) {
    return error_of([&] { TomlConfig(dir.write(name, text), kKnown, {}, true); });
  };
  EXPECT_EQ(error("k.toml", "[sweep]\n\"a.nope\" = [1, 2]\n"),
            p + "k.toml: sweep.\"a.nope\": 'a.nope' is not a key of this config "
                "(\"section.key\")");
  EXPECT_EQ(error("s.toml", "[sweep]\ncount = [1, 2]\n"),
            p + "s.toml: sweep.\"count\": 'count' is not a key of this config (\"section.key\")");
  EXPECT_EQ(error("e.toml", "[sweep]\n\"a.count\" = []\n"),
            p + "e.toml: sweep.\"a.count\": must be a non-empty array of the values 'a.count' "
                "takes");
  EXPECT_EQ(error("t.toml", "[sweep]\n\"a.count\" = [1]\n[[sweep.zip]]\n\"a.count\" = [2]\n"),
            p + "t.toml: sweep.zip[0].\"a.count\": 'a.count' is swept twice");
  EXPECT_EQ(error("z.toml", "[[sweep.zip]]\n\"a.count\" = [1, 2]\n\"a.name\" = [\"x\"]\n"),
            p + "z.toml: sweep.zip[0]: its arrays must have equal lengths ('a.name' has 1, "
                "'a.count' 2)");
  EXPECT_EQ(
      error_of([&] { TomlConfig(dir.write("off.toml", "[sweep]\n\"a.count\" = [1]\n"), kKnown); }),
      p + "off.toml: [sweep]: unknown section (a, b)");
}

}  // namespace
}  // namespace lmk
