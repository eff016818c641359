// Contrastive fine-tuning (engine/train/contrastive.cpp) of a tiny encoder for a few steps on the
// CPU: InfoNCE starts at chance and falls, the same config gives the same loss curve, the model
// and checkpoint folders are written; a batch whose examples all carry teacher scores is
// distilled instead; data too small for a batch, a stream without a batch's other examples and
// a pooling that does not exist are refused naming what is wrong.
#include "engine/train/contrastive.h"

#include <gtest/gtest.h>

#include <ATen/Parallel.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "core/util/file.h"
#include "engine/embed/model_folder.h"
#include "engine/model/encoder.h"
#include "tests/support/input_error_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;

class ContrastiveTest : public ::testing::Test {
 protected:
  ContrastiveTest() {
    at::set_num_threads(1);  // the same speed on a busy machine
    // A tiny random encoder over "w0".."w99" (ids 5..104).
    const std::string tokenizer =
        dir_.write("tokenizer.json", testing::word_level_json(100).dump());
    EncoderConfig config = EncoderConfig::preset("tiny", 105, 0);
    config.num_layers = 2;
    config.global_layers = {true, true};
    // Its folder pools by the mean; the runs here train CLS unless they say otherwise.
    PoolingSettings mean;
    mean.pooling = Pooling::Mean;
    save_model_folder(path("init"), Encoder(config, 3), tokenizer, mean);
    // A learnable task: the query names two words, the positive holds both among filler, the
    // negative two others.
    std::string lines;
    for (int i = 0; i < 16; ++i) lines += example(i, /*scores=*/false).dump() + "\n";
    dir_.write("pairs.jsonl", lines);
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }

  static json example(int i, bool scores) {
    const int a = 10 + (i * 7) % 80, b = 10 + (i * 13 + 5) % 80, c = 10 + (i * 11 + 40) % 80;
    std::string filler;
    for (int f = 0; f < 6; ++f) filler += " w" + std::to_string(f % 10);
    json e = {{"query", "w" + std::to_string(a) + " w" + std::to_string(b)},
              {"pos", {"w" + std::to_string(a) + filler + " w" + std::to_string(b)}},
              {"neg", {"w" + std::to_string(c) + filler + " w" + std::to_string(c + 1)}}};
    if (scores) {
      e["pos_scores"] = {4.0};
      e["neg_scores"] = {-1.0};
    }
    return e;
  }

  // Batches of 4 queries with one hard negative each: 8 passages per batch.
  ContrastiveConfig config(const std::string& out, int64_t steps) const {
    ContrastiveConfig c;
    c.init_model = path("init");
    c.out_dir = path(out);
    c.train_files = {path("pairs.jsonl")};
    c.pooling = "cls";
    c.batch_size = 4;
    c.negatives = 1;
    c.learning_rate = 3e-3;
    c.warmup_ratio = 0;
    c.temperature = 0.05;
    c.query_max_length = 16;
    c.passage_max_length = 32;
    c.max_steps = steps;
    c.checkpoint_every = 0;
    c.log_every = 100;
    c.seed = 7;
    return c;
  }

  // The InputError message of a run of `c` ("" when there is none).
  static std::string input_error_of(const ContrastiveConfig& c) {
    return testing::error_of([&] { train_contrastive(c, false, false); });
  }

  TempDir dir_;
};

// A random encoder gives every text nearly the same vector: the first InfoNCE loss is chance
// over the batch's 8 passages, ln 8; 20 steps at a high learning rate halve it. The run reports
// every step, and writes last/ (a model folder with the pooling it trained, not the initial
// folder's) and its checkpoints.
TEST_F(ContrastiveTest, StartsAtChanceLearnsAndWritesItsFolders) {
  ContrastiveConfig c = config("out", 20);
  c.checkpoint_every = 5;
  const TrainSummary summary = train_contrastive(c, false, false);
  EXPECT_EQ(summary.steps, 20);
  ASSERT_EQ(summary.losses.size(), 20u);
  EXPECT_EQ(summary.best_dev, -1) << "no dev set";
  EXPECT_NEAR(summary.losses[0], std::log(8.0), 0.05);
  const double late = (summary.losses[17] + summary.losses[18] + summary.losses[19]) / 3;
  EXPECT_LT(late, summary.losses[0] / 2) << "the loss falls";
  const LoadedModel trained = load_model_folder(path("out/last"));
  EXPECT_EQ(trained.pooling.pooling, Pooling::Cls);
  EXPECT_EQ(json::parse(read_file(path("out/checkpoint/state.json")))["step"], 15)
      << "the last checkpoint before the end (the end is last/)";
}

// Same config and seed: the same losses, bit for bit; another seed draws other batches.
TEST_F(ContrastiveTest, TheSameConfigGivesTheSameLossCurve) {
  const TrainSummary a = train_contrastive(config("a", 2), false, false);
  const TrainSummary b = train_contrastive(config("b", 2), false, false);
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_EQ(read_file(path("a/last/model.safetensors")),
            read_file(path("b/last/model.safetensors")));
  ContrastiveConfig other = config("c", 2);
  other.seed = 8;
  EXPECT_NE(train_contrastive(other, false, false).losses, a.losses);
}

// With teacher scores on every example of the batch the loss is distillation over a query's own
// 2 passages: against a student that cannot tell them apart, ln 2 whatever the teacher says.
// One example without scores puts the whole batch back on InfoNCE (ln 8).
TEST_F(ContrastiveTest, ABatchWithTeacherScoresEverywhereIsDistilled) {
  const auto first_loss = [&](int without_scores) {
    std::string lines;
    for (int i = 0; i < 4; ++i) lines += example(i, i != without_scores).dump() + "\n";
    const std::string name = "scored" + std::to_string(without_scores);
    dir_.write(name + ".jsonl", lines);
    ContrastiveConfig c = config(name, 1);
    c.train_files = {path(name + ".jsonl")};
    return train_contrastive(c, false, false).losses.at(0);
  };
  EXPECT_NEAR(first_loss(-1), std::log(2.0), 0.02);
  EXPECT_NEAR(first_loss(2), std::log(8.0), 0.05);
}

// Refused before any step, naming what is wrong: fewer examples than a batch (the file and the
// numbers), a stream with a batch of one (nothing stands in for a missing negative), a pooling
// that does not exist.
TEST_F(ContrastiveTest, BadInputIsRefusedNamingIt) {
  std::string three;
  for (int i = 0; i < 3; ++i) three += example(i, false).dump() + "\n";
  ContrastiveConfig small = config("small", 2);
  small.train_files = {dir_.write("three.jsonl", three)};
  EXPECT_EQ(input_error_of(small),
            path("three.jsonl") + ": fewer examples (3) than one batch of 4");

  ContrastiveConfig stream = config("stream", 2);
  stream.stream = true;
  stream.batch_size = 1;
  EXPECT_EQ(input_error_of(stream).rfind("[data] stream: needs a global batch of 2 or more", 0),
            0u);

  ContrastiveConfig pooling = config("pooling", 2);
  pooling.pooling = "median";
  EXPECT_EQ(input_error_of(pooling).rfind("pooling: ", 0), 0u) << input_error_of(pooling);
  EXPECT_NE(input_error_of(pooling).find("median"), std::string::npos);
  for (const char* out : {"small", "stream", "pooling"})
    EXPECT_FALSE(fs::exists(path(std::string(out) + "/last"))) << out;
}

}  // namespace
}  // namespace lmk
