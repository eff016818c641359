// A settings table drives the keys a config accepts, their reading and checks, the JSON a run
// records and the designer's defaults; and the tables of the real configs (training, pretrain,
// contrastive, study) read what their files say.
#include "core/util/settings.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <unistd.h>

#include "core/jobs/study.h"
#include "core/util/error.h"
#include "engine/train/contrastive.h"
#include "engine/train/pretrain.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;

struct Example {
  std::string name = "x", folder;
  int64_t count = 3;
  uint64_t seed = 42;
  double rate = 0.5;
  bool flag = false;
  std::vector<std::string> files;
  std::vector<int64_t> sizes = {1, 2};
  std::vector<double> depths;
  int64_t unrecorded = 7;
  std::vector<std::string> optional_list = {"default"};
};

void no_x(const std::string& value, const std::string& where) {
  if (value.find('x') != std::string::npos && value != "x") throw input_error(where, "has an x");
}

const SettingsTable<Example>& table() {
  using S = Setting<Example>;
  static const SettingsTable<Example> t = {
      S("a", "name", &Example::name).checked(no_x).recorded(),
      S("a", "folder", &Example::folder).path().recorded(),
      S("a", "count", &Example::count).at_least(2).recorded(),
      S("a", "seed", &Example::seed).recorded(),
      S("b", "rate", &Example::rate).range(0, 1).recorded(),
      S("b", "flag", &Example::flag).recorded(),
      S("b", "files", &Example::files).one_text_or_many().path().required().recorded(),
      S("b", "sizes", &Example::sizes).at_least(1).recorded(),
      S("b", "depths", &Example::depths).range(0, 1).recorded(),
      S("b", "unrecorded", &Example::unrecorded).at_least(0),
      S("b", "custom"),  // read by the config's own code
      S("b", "optional_list", &Example::optional_list).one_text_or_many().may_be_empty(),
  };
  return t;
}

class SettingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("settings_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& text) {
    const std::string path = (dir_ / "c.toml").string();
    std::ofstream(path) << text;
    return path;
  }
  Example read(const std::string& text) {
    std::map<std::string, std::vector<std::string>> known;
    add_setting_keys(known, table());
    const TomlConfig toml(write(text), known);
    Example e;
    read_settings(toml, table(), e);
    return e;
  }
  std::string error_of(const std::string& text) {
    try {
      read(text);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(SettingsTest, ReadsEveryTypeResolvesPathsAndKeepsDefaultsOfAbsentKeys) {
  const Example e = read(
      "[a]\nfolder = \"sub\"\ncount = 5\nseed = 7\n"
      "[b]\nrate = 0.25\nflag = true\nfiles = \"one.jsonl\"\ndepths = [0.0, 1.0]\ncustom = 1\n");
  EXPECT_EQ(e.name, "x");  // absent: the default
  EXPECT_EQ(e.folder, (dir_ / "sub").string());
  EXPECT_EQ(e.count, 5);
  EXPECT_EQ(e.seed, 7u);
  EXPECT_EQ(e.rate, 0.25);
  EXPECT_TRUE(e.flag);
  EXPECT_EQ(e.files, std::vector<std::string>{(dir_ / "one.jsonl").string()});
  EXPECT_EQ(e.sizes, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(e.depths, (std::vector<double>{0.0, 1.0}));
  const Example two = read("[b]\nfiles = [\"/abs/a\", \"b\"]\n");
  EXPECT_EQ(two.files, (std::vector<std::string>{"/abs/a", (dir_ / "b").string()}));
}

TEST_F(SettingsTest, RangesRequiredKeysChecksAndUnknownKeysAreErrorsNamingFileAndKey) {
  EXPECT_NE(error_of("[a]\ncount = 1\n[b]\nfiles = \"f\"\n").find("a.count"), std::string::npos);
  EXPECT_NE(error_of("[b]\nrate = 1.5\nfiles = \"f\"\n").find("b.rate"), std::string::npos);
  EXPECT_NE(error_of("[b]\nsizes = [0]\nfiles = \"f\"\n").find("b.sizes"), std::string::npos);
  EXPECT_NE(error_of("[b]\ndepths = [2.0]\nfiles = \"f\"\n").find("b.depths"), std::string::npos);
  EXPECT_NE(error_of("[a]\nseed = -1\n[b]\nfiles = \"f\"\n").find("a.seed"), std::string::npos);
  const std::string missing = error_of("[a]\ncount = 4\n");
  EXPECT_NE(missing.find("c.toml: b.files"), std::string::npos) << missing;
  EXPECT_NE(missing.find("required"), std::string::npos) << missing;
  const std::string checked = error_of("[a]\nname = \"xx\"\n[b]\nfiles = \"f\"\n");
  EXPECT_NE(checked.find("a.name"), std::string::npos) << checked;
  EXPECT_NE(checked.find("has an x"), std::string::npos) << checked;
  EXPECT_NE(error_of("[a]\nnope = 1\n[b]\nfiles = \"f\"\n").find("nope"), std::string::npos);
  // A list is non-empty unless the setting says it may be empty.
  EXPECT_NE(error_of("[b]\nfiles = []\n").find("b.files: must be a non-empty array"),
            std::string::npos);
  EXPECT_TRUE(read("[b]\nfiles = \"f\"\noptional_list = []\n").optional_list.empty());
  EXPECT_EQ(read("[b]\nfiles = \"f\"\n").optional_list, std::vector<std::string>{"default"});
  EXPECT_NE(error_of("[b]\nfiles = \"f\"\noptional_list = [1]\n").find("b.optional_list"),
            std::string::npos);
}

TEST_F(SettingsTest, TheRecordedJsonHoldsTheRecordedKeysAndOneFileAsAText) {
  Example e;
  e.files = {"/d/one"};
  nlohmann::json j = nlohmann::json::object();
  add_settings_json(j, table(), e);
  EXPECT_EQ(j["b"]["files"], "/d/one");
  EXPECT_EQ(j["a"]["seed"], 42u);
  EXPECT_EQ(j["b"]["sizes"], nlohmann::json::array({1, 2}));
  EXPECT_FALSE(j["b"].contains("unrecorded"));
  EXPECT_FALSE(j["b"].contains("custom"));
  e.files.push_back("/d/two");
  add_settings_json(j, table(), e);
  EXPECT_EQ(j["b"]["files"], nlohmann::json::array({"/d/one", "/d/two"}));
}

TEST_F(SettingsTest, DefaultTextsAreTheStructsOwnValues) {
  const SettingsTable<Example>& t = table();
  EXPECT_EQ(setting_default_text(t[0]), "x");
  EXPECT_EQ(setting_default_text(t[2]), "3");
  EXPECT_EQ(setting_default_text(t[3]), "42");
  EXPECT_EQ(setting_default_text(t[4]), "0.5");
  EXPECT_EQ(setting_default_text(t[5]), "false");
  EXPECT_EQ(setting_default_text(t[7]), "1, 2");
  EXPECT_EQ(setting_default_text(t[10]), "");
}

// The real tables: every key each config reads is in its table once, and the study's keys are
// the table's plus [slurm].
TEST_F(SettingsTest, TheConfigsTablesListEachKeyOnce) {
  std::map<std::string, std::vector<std::string>> known;
  add_setting_keys(known, training_settings());
  add_setting_keys(known, contrastive_settings());
  add_setting_keys(known, pretrain_settings());
  for (const auto& [section, keys] : known) {
    std::set<std::string> unique(keys.begin(), keys.end());
    // data.train is both commands' key; nothing else repeats.
    EXPECT_EQ(unique.size() + (section == "data" ? 1 : 0), keys.size()) << section;
  }
  std::set<std::string> study_keys;
  for (const Setting<StudyConfig>& s : study_settings())
    EXPECT_TRUE(study_keys.insert(std::string(s.section) + "." + s.key).second) << s.key;
  size_t listed = 0;
  for (const auto& [section, keys] : study_config_keys())
    if (section != "slurm") listed += keys.size();
  EXPECT_EQ(listed, study_keys.size());
}

// Every numeric key of every config's table declares its range, and a value below it (-1
// where the range starts at 0 or above), above it (numbers with an upper end) or not a number
// is an InputError naming file and key -- read through the table's own entry.
template <class Config>
void check_numeric_ranges(const SettingsTable<Config>& table, const std::string& dir,
                          size_t* checked) {
  for (const Setting<Config>& s : table) {
    if (!is_numeric_setting(s)) continue;
    const std::string key = std::string(s.section) + "." + s.key;
    EXPECT_TRUE(s.ranged) << key << " declares no range (at_least / range)";
    const bool list = std::visit(
        [](auto member) {
          if constexpr (std::is_same_v<decltype(member), std::monostate>) {
            return false;
          } else {
            using T = std::decay_t<decltype(std::declval<Config>().*member)>;
            return std::is_same_v<T, std::vector<int64_t>> ||
                   std::is_same_v<T, std::vector<double>>;
          }
        },
        s.member);
    std::vector<std::string> bad = {"\"many\""};
    if (s.min >= 0) bad.push_back("-1");
    if (s.max > s.min) bad.push_back(std::to_string(s.max * 2 + 1));
    const SettingsTable<Config> one = {s};
    std::map<std::string, std::vector<std::string>> known;
    add_setting_keys(known, one);
    for (const std::string& value : bad) {
      const std::string path = dir + "/ranges.toml";
      std::ofstream(path) << "[" << s.section << "]\n"
                          << s.key << " = " << (list ? "[" + value + "]" : value) << "\n";
      Config config{};
      try {
        read_settings(TomlConfig(path, known), one, config);
        ADD_FAILURE() << key << " = " << value << " accepted";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
      }
      ++*checked;
    }
  }
}

TEST_F(SettingsTest, EveryNumericKeyOfEveryTableDeclaresItsRangeAndRefusesWhatItExcludes) {
  size_t checked = 0;
  check_numeric_ranges(training_settings(), dir_.string(), &checked);
  check_numeric_ranges(contrastive_settings(), dir_.string(), &checked);
  check_numeric_ranges(pretrain_settings(), dir_.string(), &checked);
  check_numeric_ranges(study_settings(), dir_.string(), &checked);
  EXPECT_GE(checked, 40u) << "the tables hold numeric keys";
}

TEST_F(SettingsTest, AContrastiveConfigIsReadAndCheckedThroughItsTables) {
  const std::string path = write(
      "[model]\ninit = \"m\"\n[data]\ntrain = \"t.jsonl\"\n[output]\ndir = \"out\"\n"
      "[train]\npooling = \"lmk\"\nbatch_size = 4\ntrain_landmarks = \"fixed:16\"\n");
  const ContrastiveConfig c = read_contrastive_config(path);
  EXPECT_EQ(c.init_model, (dir_ / "m").string());
  EXPECT_EQ(c.out_dir, (dir_ / "out").string());
  EXPECT_EQ(c.train_files, std::vector<std::string>{(dir_ / "t.jsonl").string()});
  EXPECT_EQ(c.batch_size, 4);
  EXPECT_EQ(c.pooling, "lmk");
  EXPECT_EQ(c.negatives, ContrastiveConfig{}.negatives);
  for (const auto& [text, key] : std::vector<std::pair<std::string, std::string>>{
           {"pooling = \"nope\"", "train.pooling"},
           {"train_landmarks = \"fixed:0\"", "train.train_landmarks"},
           {"temperature = 0.0", "train.temperature"}}) {
    const std::string bad = write(
        "[model]\ninit = \"m\"\n[data]\ntrain = \"t.jsonl\"\n[output]\ndir = \"out\"\n[train]\n" +
        text + "\n");
    try {
      read_contrastive_config(bad);
      ADD_FAILURE() << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace lmk
