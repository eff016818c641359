// Running a study (core/jobs/study_run.cpp, declared in study.h): a failing step stops it naming
// the step and a later run reuses what finished; what a step leaves in the store must be there; one
// study runs per folder; an interrupted training step continues from its checkpoint.
#include "core/jobs/study.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/store/results_store.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/study_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::find_step;
using testing::kBase;
using testing::TempDir;

TEST(StudyRun, AFailingStepStopsTheStudyNamingItAndALaterRunReusesWhatFinished) {
  TempDir dir;
  // `lmk` replaced by a script: fails for the pretrain step, else writes its outputs.
  const std::string script = dir.write("fake-lmk", R"(#!/bin/sh
echo "args: $*"
case "$1" in pretrain) echo "boom: pretraining failed" >&2; exit 2;; esac
exit 0
)");
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  const std::string path = dir.write("s.toml", std::string(kBase) + "");
  StudyPlan plan = plan_study(read_study_config(path, "micro", "", (dir.path() / "st").string()));
  // Only the steps up to pretraining, with outputs the script does not need to write.
  plan.steps.resize(8);
  ASSERT_EQ(plan.steps.back().id, "pretrain");
  for (auto& step : plan.steps) {
    step.outputs.clear();
    step.store_histogram.clear();
  }
  std::vector<std::string> lines;
  auto report = [&](const std::string& line, bool) { lines.push_back(line); };
  try {
    run_study(plan, script, report);
    FAIL() << "the failing step did not stop the study";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("study step pretrain failed (exit 2)"), std::string::npos) << message;
    EXPECT_NE(message.find("boom: pretraining failed"), std::string::npos) << message;
  }
  for (size_t i = 0; i + 1 < plan.steps.size(); ++i)
    EXPECT_TRUE(step_done(plan, plan.steps[i])) << plan.steps[i].id;
  EXPECT_FALSE(step_done(plan, plan.steps.back()));
  // Again without the failing step: all reused, nothing run.
  plan.steps.pop_back();
  const StudyRunSummary summary = run_study(plan, script, report);
  EXPECT_EQ(summary.ran, 0u);
  EXPECT_EQ(summary.reused, 7u);
  // A changed step (other arguments) runs again, and so do the steps that depend on it.
  plan.steps[1].key = "changed";
  const StudyRunSummary after = run_study(plan, script, report);
  EXPECT_EQ(after.ran, 5u);     // the tokenizer, the windows, the stats, passkey, init
  EXPECT_EQ(after.reused, 2u);  // the corpus and the pairs do not read the tokenizer
}

TEST(StudyRun, WhatAStepLeavesInTheStoreMustBeThereAndOneStudyRunsPerFolder) {
  TempDir dir;
  const std::string path = dir.write("s.toml", kBase);
  StudyPlan plan = plan_study(read_study_config(path, "micro", "", (dir.path() / "st").string()));
  const std::string script = dir.write("ok-lmk", "#!/bin/sh\nexit 0\n");
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  StudyStep stats = find_step(plan, "stats/manpages");
  EXPECT_EQ(stats.store_histogram, "manpages-documents");
  stats.deps.clear();
  plan.steps = {stats};
  run_study(plan, script, [](const std::string&, bool) {});
  // The (fake) step wrote no histogram: not done, whatever its marker says.
  EXPECT_FALSE(step_done(plan, plan.steps[0]));
  {
    ResultsStore store(plan.config.db);
    LengthHistogram histogram;
    histogram.dataset = "manpages-documents";
    histogram.tokenizer = "t";
    histogram.bins = {{16, 32, 3}};
    store.add_length_histogram(histogram);
  }
  EXPECT_TRUE(step_done(plan, plan.steps[0]));
  // A second study process on the same folder is refused while the first runs.
  const std::string lock = plan.config.dir + "/study.lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  try {
    run_study(plan, script, [](const std::string&, bool) {});
    ADD_FAILURE() << "ran beside another study";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("another lmk study"), std::string::npos) << e.what();
  }
  ::close(fd);
  EXPECT_EQ(run_study(plan, script, [](const std::string&, bool) {}).reused, 1u);
}

TEST(StudyRun, AnInterruptedTrainingStepContinuesFromItsCheckpointUnlessADependencyRanAgain) {
  TempDir dir;
  const std::string path = dir.write("s.toml", kBase);
  StudyPlan plan = plan_study(read_study_config(path, "micro", "", (dir.path() / "st").string()));
  StudyStep init = find_step(plan, "init");
  StudyStep pretrain = find_step(plan, "pretrain");
  const std::string out = pretrain.dir;
  EXPECT_EQ(out, plan.config.dir + "/pretrain/" + pretrain.key.substr(0, 12));
  // The fake lmk records its arguments and whether a checkpoint is there, and writes outputs.
  const std::string calls_file = (dir.path() / "calls").string();
  const std::string script = dir.write(
      "args-lmk", "#!/bin/sh\necho \"$*\" >> " + calls_file + "\n[ $1 = pretrain ] && test -e " +
                      out + "/checkpoint/state.json && echo has-checkpoint >> " + calls_file +
                      "\nmkdir -p " + init.dir + " " + out + "/last && touch " + init.dir +
                      "/config.json " + out + "/last/config.json\n");
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  init.deps.clear();
  pretrain.deps = {"init"};
  pretrain.store_run.clear();
  plan.steps = {init, pretrain};
  auto calls = [&] { return read_file(calls_file); };
  std::vector<std::string> lines;
  auto report = [&](const std::string& line, bool) { lines.push_back(line); };
  auto said = [&](const std::string& text) {
    for (const std::string& line : lines)
      if (line.find(text) != std::string::npos) return true;
    return false;
  };
  run_study(plan, script, report);
  EXPECT_NE(calls().find("pretrain --config " + out + ".toml --auto-resume"), std::string::npos)
      << calls();
  EXPECT_EQ(read_file(out + ".toml"), pretrain.files[0].second);
  // Interrupted (its marker gone, a checkpoint left), inputs done: continues from it.
  std::filesystem::remove(calls_file);
  lines.clear();
  std::filesystem::remove(plan.config.dir + "/steps/" + pretrain.key + ".done");
  std::filesystem::create_directories(out + "/checkpoint");
  std::ofstream(out + "/checkpoint/state.json") << "{}";
  run_study(plan, script, report);
  EXPECT_TRUE(said("pretrain: continuing from its checkpoint"));
  EXPECT_NE(calls().find("has-checkpoint"), std::string::npos) << calls();
  EXPECT_EQ(calls().find("model init"), std::string::npos) << "init ran again: " << calls();
  // When its dependency runs again the checkpoint (of other inputs) is not resumed.
  std::filesystem::remove(calls_file);
  lines.clear();
  std::filesystem::remove_all(plan.config.dir + "/steps");
  std::filesystem::create_directories(out + "/checkpoint");
  std::ofstream(out + "/checkpoint/state.json") << "{}";
  run_study(plan, script, report);
  EXPECT_FALSE(said("continuing from its checkpoint"));
  EXPECT_NE(calls().find("model init"), std::string::npos) << calls();
  EXPECT_EQ(calls().find("has-checkpoint"), std::string::npos) << calls();
}

}  // namespace
}  // namespace lmk
