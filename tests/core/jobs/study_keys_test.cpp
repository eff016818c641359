// A study's step keys are what a study folder made before a change recognises as done
// (DIR/steps/KEY.done): a change to how steps are planned or written out must keep every key of
// an unchanged study. study_keys.txt holds the keys the planner gave before the typed steps
// (commit b9e36a3) for the shipped studies (every profile) and for a config that sets every
// option a step's arguments or training config read; this test plans the same configs at the
// same absolute paths and compares.
//
// To record the file anew (only for a change that means to invalidate finished steps, said in
// its commit): LMK_RECORD_STUDY_KEYS=1 study_keys_test.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/jobs/study.h"
#include "tests/support/study_tests.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;

// Keys hold absolute paths (the study folder, the store, inputs of your own): the configs are
// planned under one fixed root, whatever the checkout's path.
const fs::path kRoot = "/tmp/lmk-study-keys-test";

// ModernBERT's shape options (a decoder has no local window), on one corpus folder of your own.
const char* const kEncoderShapes = R"(
[study]
name = "encoder-shapes"
corpus = ["texts"]
[model]
preset = "tiny"
hidden_size = 64
layers = 2
heads = 2
intermediate_size = 96
local_window = 32
rope_theta = 5000
[finetune]
poolings = ["lmk:fixed:8"]
[eval]
benchmarks = ["passages", "documents"]
lengths = [128]
)";

// A file of your own with a fixed size and modification time: its stamp enters its steps' keys.
void write_input(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << content;
  fs::last_write_time(path, fs::file_time_type(std::chrono::seconds(1700000000)));
}

// "CONFIG PROFILE ID KEY" per step of each plan, in plan order.
std::string plan_keys() {
  std::error_code ec;
  fs::remove_all(kRoot, ec);
  fs::create_directories(kRoot / "texts");
  write_input(kRoot / "texts" / "a.txt", "a text of your own\n");
  write_input(kRoot / "mine" / "beir-a" / "corpus.jsonl", "{}\n");
  write_input(kRoot / "mine" / "beir-b" / "corpus.jsonl", "{}\n");
  write_input(kRoot / "models" / "ModernBERT-base" / "config.json", "{}\n");
  write_input(kRoot / "data" / "msmarco-train.jsonl.gz", "not really gzip\n");
  std::ofstream(kRoot / "everything.toml") << testing::kEveryOption;
  std::ofstream(kRoot / "encoder-shapes.toml") << kEncoderShapes;
  std::vector<std::string> configs = {(kRoot / "everything.toml").string(),
                                      (kRoot / "encoder-shapes.toml").string()};
  for (const char* shipped : {"pooling-vs-length", "granularity-sweep", "decoder-pooling",
                              "lmk-modernbert-msmarco-h100", "minilm-real-start"}) {
    const fs::path copy = kRoot / (std::string(shipped) + ".toml");
    fs::copy_file(fs::path(LMK_SOURCE_DIR) / "experiments" / (std::string(shipped) + ".toml"),
                  copy);
    configs.push_back(copy.string());
  }
  std::ostringstream out;
  for (const std::string& config : configs) {
    // The test's own configs have no profiles: one plan each.
    const bool own = config == configs[0] || config == configs[1];
    for (const std::string& profile : own ? std::vector<std::string>{"full"} : study_profiles()) {
      MissingInputs missing;  // the shipped studies' inputs of your own are not here
      const StudyPlan plan = plan_study(read_study_grid(config, profile, "", "", &missing));
      for (const StudyStep& step : plan.steps)
        out << fs::path(config).stem().string() << " " << profile << " " << step.id << " "
            << step.key << "\n";
    }
  }
  fs::remove_all(kRoot, ec);
  return out.str();
}

TEST(StudyKeys, AnUnchangedStudyKeepsTheKeysOfItsFinishedSteps) {
  const fs::path golden = fs::path(LMK_SOURCE_DIR) / "tests/core/jobs/study_keys.txt";
  const std::string keys = plan_keys();
  if (std::getenv("LMK_RECORD_STUDY_KEYS")) {
    std::ofstream(golden) << keys;
    GTEST_SKIP() << "recorded " << golden;
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in) << golden;
  std::stringstream recorded;
  recorded << in.rdbuf();
  // Line by line, so that a failure names the first step whose key moved.
  std::istringstream want(recorded.str()), got(keys);
  std::string want_line, got_line;
  size_t line = 0;
  while (std::getline(want, want_line)) {
    ++line;
    ASSERT_TRUE(std::getline(got, got_line))
        << "plan ends before line " << line << ": " << want_line;
    ASSERT_EQ(got_line, want_line) << "line " << line;
  }
  EXPECT_FALSE(std::getline(got, got_line)) << "plan has more steps: " << got_line;
  EXPECT_GT(line, 300u);  // every shipped study's profiles and the everything config
}

}  // namespace
}  // namespace lmk
