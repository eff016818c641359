// Runs the real lmk binary: lmk pretrain lowers the MLM loss on text with structure, and a run
// resumed from its checkpoint, or stopped by a signal and auto-resumed, ends with the weights of
// the uninterrupted run.
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>

#include "core/util/file.h"
#include "tests/support/run_lmk.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Result;
using testing::run_lmk;
using testing::TempDir;

TEST(PretrainCliTest, LearnsAndResumesExactly) {
  TempDir dir;
  const std::string tokenizer = dir.write("tokenizer.json", testing::word_level_json(100).dump());
  auto path = [&](const std::string& name) { return (dir.path() / name).string(); };
  ASSERT_EQ(
      run_lmk("model init --preset tiny --tokenizer " + tokenizer + " --out " + path("init")).code,
      0);
  // Text with structure a model can learn: word a is always followed by a + 40, then 3a mod 90.
  fs::create_directories(dir.path() / "texts");
  uint64_t state = 1;
  for (int d = 0; d < 30; ++d) {
    std::string text;
    for (int s = 0; s < 60; ++s) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const int a = 10 + static_cast<int>((state >> 33) % 40);
      text += "w" + std::to_string(a) + " w" + std::to_string(a + 40) + " w" +
              std::to_string((a * 3) % 90 + 10) + " w5 ";
    }
    dir.write("texts/doc" + std::to_string(d) + ".txt", text);
  }
  dir.write("p.toml",
            "[model]\ninit = \"init\"\n[data]\ntrain = \"texts\"\n[train]\nmax_length = 64\n"
            "batch_size = 8\nlearning_rate = 3e-3\nmax_steps = 30\ncheckpoint_every = 15\n"
            "seed = 3\n[output]\ndir = \"out\"\n");
  Result r = run_lmk("pretrain --config " + path("p.toml"), "", "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto losses = json::parse(read_file(path("out/last/train_state.json")))["losses"]
                          .get<std::vector<double>>();
  ASSERT_EQ(losses.size(), 30u);
  // Chance is ln(105) = 4.65 (uniform over the vocabulary); the first steps are near it.
  EXPECT_NEAR(losses[0], std::log(105.0), 0.3);
  const double late = (losses[25] + losses[26] + losses[27] + losses[28] + losses[29]) / 5;
  EXPECT_LT(late, losses[0] - 0.5) << "the MLM loss falls";
  // The checkpoint of step 15 is still there: resume from it and end where the full run did.
  fs::rename(path("out/last"), path("full"));
  r = run_lmk("pretrain --config " + path("p.toml") + " --resume", "", "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(read_file(path("out/last/model.safetensors")),
            read_file(path("full/model.safetensors")));
  EXPECT_EQ(json::parse(read_file(path("out/last/train_state.json")))["losses"]
                .get<std::vector<double>>(),
            losses);
  // A second run on the same output folder is refused (nothing in it touched) unless it
  // resumes or overwrites.
  const std::string weights = read_file(path("out/last/model.safetensors"));
  r = run_lmk("pretrain --config " + path("p.toml"), "", "LMK_THREADS=1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--overwrite"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(path("out/last/model.safetensors")), weights);
  r = run_lmk("pretrain --config " + path("p.toml") + " --resume --overwrite");
  EXPECT_EQ(r.code, 2) << r.output;
  // A device this build or machine does not have: exit 2 naming the option, nothing touched.
  for (const char* device : {"cuda", "cuda:7", "gpu", "cuda:-1"}) {
    r = run_lmk("pretrain --config " + path("p.toml") + " --overwrite --device " + device);
    EXPECT_EQ(r.code, 2) << device << "\n" << r.output;
    EXPECT_NE(r.output.find("--device"), std::string::npos) << device << "\n" << r.output;
    EXPECT_EQ(read_file(path("out/last/model.safetensors")), weights);
  }
  fs::create_directories(path("out/stale"));
  r = run_lmk("pretrain --config " + path("p.toml") + " --overwrite", "", "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_FALSE(fs::exists(path("out/stale")));
  EXPECT_EQ(read_file(path("out/last/model.safetensors")), weights);  // same config, same run
  // SIGUSR1 (what sbatch --signal sends before the time limit) stops it gracefully after a
  // step, with a checkpoint; --auto-resume continues to the uninterrupted run's weights.
  dir.write("s.toml",
            "[model]\ninit = \"init\"\n[data]\ntrain = \"texts\"\n[train]\nmax_length = 64\n"
            "batch_size = 8\nlearning_rate = 3e-3\nmax_steps = 30\ncheckpoint_every = 15\n"
            "seed = 3\nlog_every = 1\n[output]\ndir = \"stopped\"\n");
  const pid_t child =
      testing::start_lmk({"pretrain", "--config", path("s.toml"), "--progress-json"}, {},
                         path("s.stdout"), path("s.stderr"));
  if (!testing::wait_for_text(path("s.stdout"), "\"event\":\"step\"", child)) {
    ::kill(child, SIGKILL);
    testing::wait_lmk(child);
    FAIL() << "no step event\n" << read_file(path("s.stderr"));
  }
  ::kill(child, SIGUSR1);
  ASSERT_EQ(testing::wait_lmk(child), 75) << read_file(path("s.stderr"));
  EXPECT_NE(read_file(path("s.stderr")).find("lmk: stopped by SIGUSR1 at step "), std::string::npos)
      << read_file(path("s.stderr"));
  EXPECT_LT(json::parse(read_file(path("stopped/checkpoint/state.json")))["step"].get<int>(), 30);
  r = run_lmk("pretrain --config " + path("s.toml") + " --auto-resume", "", "LMK_THREADS=1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(read_file(path("stopped/last/model.safetensors")),
            read_file(path("full/model.safetensors")));
  // The pretrained folder encodes.
  dir.write("docs.jsonl", "{\"text\": \"w11 w51 w43\"}\n");
  r = run_lmk("encode --model " + path("out/last") + " --input " + path("docs.jsonl") + " --out " +
              path("e.npy"));
  EXPECT_EQ(r.code, 0) << r.output;
  // Bad input: a tokenizer folder without text, exit 2.
  dir.write("bad.toml",
            "[model]\ninit = \"init\"\n[data]\ntrain = \"nowhere\"\n[output]\ndir = \"o\"\n");
  r = run_lmk("pretrain --config " + path("bad.toml"));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("nowhere"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace lmk
