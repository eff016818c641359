// Reading a study config (core/jobs/study_config.cpp, declared in study.h): a profile overrides the
// base keys, and bad keys are named with their file and line.
#include "core/jobs/study.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/store/results_store.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/study_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::expect_input_error;
using testing::kBase;
using testing::TempDir;

TEST(StudyConfig, ProfileOverridesTheBaseKeys) {
  TempDir dir;
  const std::string path = dir.write("s.toml", kBase);
  const StudyConfig full = read_study_config(path, "full");
  EXPECT_EQ(full.pretrain_steps, 10);
  EXPECT_EQ(full.lengths, (std::vector<int64_t>{128, 512, 2048}));  // 1x, 4x, 16x by default
  EXPECT_EQ(full.passage_length, 128);  // the training length unless set
  const StudyConfig micro = read_study_config(path, "micro");
  EXPECT_EQ(micro.pretrain_steps, 3);
  EXPECT_EQ(micro.pretrain_length, 128);  // not overridden: the base value
  EXPECT_EQ(micro.lengths, (std::vector<int64_t>{128, 256}));
  EXPECT_EQ(micro.dir, (dir.path().parent_path() / "build" / "studies" / "s-micro").string());
  EXPECT_EQ(micro.db, micro.dir + "/results.db");
  ASSERT_EQ(micro.variants.size(), 3u);
  EXPECT_EQ(micro.variants[1].label, "lmk-16");
  EXPECT_EQ(micro.variants[1].train_landmarks, "fixed:16");
  EXPECT_EQ(micro.variants[2].label, "lmk-var");
  const StudyConfig moved = read_study_config(path, "micro", "/tmp/x.db", "/tmp/study-here");
  EXPECT_EQ(moved.db, "/tmp/x.db");
  EXPECT_EQ(moved.dir, "/tmp/study-here");
}

TEST(StudyConfig, BadKeysAreNamed) {
  TempDir dir;
  auto with = [&](const std::string& extra, const std::string& name) {
    return dir.write(name, std::string(kBase) + extra);
  };
  EXPECT_NE(expect_input_error(with("[profile.micro.model]\nsize = 3\n", "a.toml"))
                .find("profile.micro.model.size"),
            std::string::npos);
  EXPECT_NE(
      expect_input_error(with("[profile.huge.model]\nlayers = 3\n", "b.toml")).find("profile.huge"),
      std::string::npos);
  EXPECT_NE(expect_input_error(dir.write("c.toml", "[finetune]\npoolings = [\"clss\"]\n"))
                .find("finetune.poolings"),
            std::string::npos);
  // A granularity set with 0 fails before anything runs, naming the key.
  const std::string zero =
      expect_input_error(dir.write("d.toml", "[finetune]\npoolings = [\"lmk:variable:32,0\"]\n"));
  EXPECT_NE(zero.find("finetune.poolings"), std::string::npos) << zero;
  EXPECT_NE(expect_input_error(dir.write("e.toml", "[pretrain]\nlearning_rate = -1e-3\n"))
                .find("pretrain.learning_rate"),
            std::string::npos);
  EXPECT_NE(expect_input_error(dir.write("f.toml", "[eval]\nbenchmarks = [\"mteb\"]\n"))
                .find("eval.benchmarks"),
            std::string::npos);
  // The profile's value is the one named when it is the bad one.
  EXPECT_NE(expect_input_error(with("[profile.micro.finetune]\nsteps = -2\n", "g.toml"), "micro")
                .find("profile.micro.finetune.steps"),
            std::string::npos);
  EXPECT_NE(expect_input_error(dir.write("h.toml", "[study]\ncorpus = \"no/such/folder\"\n"))
                .find("study.corpus"),
            std::string::npos);
  EXPECT_THROW(read_study_config(dir.write("i.toml", kBase), "huge"), InputError);
  EXPECT_THROW(read_study_config((dir.path() / "missing.toml").string(), "full"), InputError);
  EXPECT_NE(expect_input_error(dir.write("j.toml", "[finetune]\npoolings = [\"cls\", \"cls\"]\n"))
                .find("label"),
            std::string::npos);
}

// [model] architecture, kv_heads and bidirectional: a decoder the study makes and pretrains,
// causal (next-token pretraining) or bidirectional (masked); the decoder keys need a decoder.
TEST(StudyConfig, DecoderKeysMakeADecoderCausalOrBidirectional) {
  TempDir dir;
  const StudyConfig encoder = read_study_config(dir.write("a.toml", kBase), "full");
  EXPECT_EQ(encoder.architecture, "modernbert");
  EXPECT_EQ(encoder.kv_heads, 0);
  EXPECT_FALSE(encoder.bidirectional);
  const StudyConfig decoder = read_study_config(
      dir.write("b.toml", std::string(kBase) +
                              "[profile.quick.model]\narchitecture = \"llama\"\nkv_heads = 1\n"
                              "bidirectional = true\n"),
      "quick");
  EXPECT_EQ(decoder.architecture, "llama");
  EXPECT_EQ(decoder.kv_heads, 1);
  EXPECT_TRUE(decoder.bidirectional);
  const StudyConfig causal = read_study_config(
      dir.write("c.toml", std::string(kBase) + "[profile.quick.model]\narchitecture = \"qwen3\"\n"),
      "quick");
  EXPECT_EQ(causal.architecture, "qwen3");
  EXPECT_FALSE(causal.bidirectional);
  // A causal decoder folder of your own is fine-tuned as it is.
  std::filesystem::create_directories(dir.path() / "hf");
  dir.write("hf/config.json", "{}");
  EXPECT_EQ(read_study_config(
                dir.write("d.toml", std::string(kBase) + "[profile.quick.model]\narchitecture = "
                                                         "\"qwen3\"\ninit = \"hf\"\n"
                                                         "[profile.quick.finetune]\n"
                                                         "passage_max_length = 64\n"),
                "quick")
                .architecture,
            "qwen3");
  const std::string kv = expect_input_error(
      dir.write("e.toml", std::string(kBase) + "[profile.quick.model]\nkv_heads = 2\n"), "quick");
  EXPECT_NE(kv.find("profile.quick.model.kv_heads"), std::string::npos) << kv;
  EXPECT_NE(expect_input_error(dir.write("f.toml", "[model]\narchitecture = \"gpt2\"\n"))
                .find("model.architecture"),
            std::string::npos);
  EXPECT_NE(
      expect_input_error(dir.write("g.toml", "[model]\nkv_heads = -1\n")).find("model.kv_heads"),
      std::string::npos);
}

}  // namespace
}  // namespace lmk
