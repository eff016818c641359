#include "engine/train/loop.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/store/results_store.h"
#include "core/util/file.h"
#include "engine/model/encoder.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;

TEST(TrainingLoopTest, ANanLossStopsTheRunNamingTheStepAndKeepsTheLastCheckpoint) {
  testing::TempDir dir;
  const std::string tokenizer = dir.write("tokenizer.json", testing::word_level_json(20).dump());
  LoadedModel model;
  model.encoder = std::make_unique<Encoder>(EncoderConfig::preset("tiny", 25, 0), 1);
  LoopOptions options;
  options.out_dir = (dir.path() / "out").string();
  options.tokenizer_source = tokenizer;
  options.config = {{"what", "nan test"}};
  options.db = (dir.path() / "results.db").string();
  options.total_steps = 10;
  options.checkpoint_every = 2;
  options.learning_rate = 1e-3;
  TrainingLoop loop(options, model, false);
  const at::Tensor ids = at::randint(5, 25, {2, 8}, at::kLong), mask = at::ones({2, 8}, at::kLong);
  try {
    loop.run([&](int64_t step) {
      if (step == 3) return std::numeric_limits<double>::quiet_NaN();
      const at::Tensor loss = model.encoder->forward(ids, mask).pow(2).mean();
      loss.backward();
      return loss.item<double>();
    });
    ADD_FAILURE() << "a NaN loss did not stop the run";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("at step 3"), std::string::npos) << e.what();
  }
  EXPECT_EQ(loop.step(), 3) << "no step taken with the NaN loss";
  // The checkpoint of step 2 is intact; no last/ model was written.
  const auto state =
      nlohmann::json::parse(read_file((dir.path() / "out/checkpoint/state.json").string()));
  EXPECT_EQ(state["step"], 2);
  EXPECT_FALSE(fs::exists(dir.path() / "out/last"));
  ResultsStore store(options.db, ResultsStore::OpenMode::Existing);
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, RunStatus::Failed);
  EXPECT_NE(runs[0].error_text.find("at step 3"), std::string::npos);
}

TEST(TrainingLoopTest, ShuffledOrderIsAPermutationFixedBySeedAndEpoch) {
  const auto a = shuffled_order(100, 7, 0);
  std::vector<size_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_EQ(shuffled_order(100, 7, 0), a);
  EXPECT_NE(shuffled_order(100, 7, 1), a);
  EXPECT_NE(shuffled_order(100, 8, 0), a);
}

}  // namespace
}  // namespace lmk
