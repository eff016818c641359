// Pretraining (engine/train/pretrain.cpp): a micro-batch of masked sequences padded as the
// model takes it, a tiny encoder pretrained for a few steps on the CPU (the loss starts at
// chance over the vocabulary and falls; every document is packed; the trained folder is
// written), and input refused naming what is wrong (too little text for a batch, a tokenizer
// without a mask token, a jsonl file without texts).
#include "engine/train/pretrain.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
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

std::vector<int64_t> values(const at::Tensor& t) {
  const at::Tensor flat = t.reshape({-1}).to(at::kLong).contiguous();
  return std::vector<int64_t>(flat.data_ptr<int64_t>(), flat.data_ptr<int64_t>() + flat.numel());
}

// Rows padded with `pad` to the longest (attention 0 there), targets flattened over [B * L]
// with -100 wherever nothing is predicted (padding included), and the predicted positions'
// indices into [B * L].
TEST(MakeMlmBatch, PadsToTheLongestAndIndexesThePredictedPositions) {
  MaskedSequence shorter{{2, 4, 7, 3}, {-100, 6, -100, -100}};
  MaskedSequence longer{{2, 8, 4, 9, 3}, {-100, -100, 5, 9, -100}};
  const MlmBatch batch = make_mlm_batch({shorter, longer}, 1);
  EXPECT_EQ(batch.rows, 2);
  EXPECT_EQ(batch.length, 5);
  EXPECT_EQ(batch.input.sizes(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(batch.mask.sizes(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(batch.target.sizes(), (std::vector<int64_t>{10}));
  for (const at::Tensor* t : {&batch.input, &batch.mask, &batch.target, &batch.predicted})
    EXPECT_EQ(t->scalar_type(), at::kLong);
  EXPECT_EQ(values(batch.input), (std::vector<int64_t>{2, 4, 7, 3, 1, 2, 8, 4, 9, 3}));
  EXPECT_EQ(values(batch.mask), (std::vector<int64_t>{1, 1, 1, 1, 0, 1, 1, 1, 1, 1}));
  EXPECT_EQ(values(batch.target),
            (std::vector<int64_t>{-100, 6, -100, -100, -100, -100, -100, 5, 9, -100}));
  EXPECT_EQ(values(batch.predicted), (std::vector<int64_t>{1, 7, 8}));
  // Nothing masked: nothing predicted.
  const MlmBatch none = make_mlm_batch({MaskedSequence{{2, 3}, {-100, -100}}}, 0);
  EXPECT_EQ(none.predicted.numel(), 0);
}

class PretrainTest : public ::testing::Test {
 protected:
  PretrainTest() {
    at::set_num_threads(1);  // the same speed on a busy machine
    tokenizer_ = dir_.write("tokenizer.json", testing::word_level_json(100).dump());
    init_folder("init", tokenizer_);
    // Text with structure a model can learn: word a is always followed by a + 40, then
    // 3a mod 90, then w5.
    fs::create_directories(dir_.path() / "texts");
    uint64_t state = 1;
    for (int d = 0; d < kDocuments; ++d) {
      std::string text;
      for (int s = 0; s < kGroups; ++s) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        const int a = 10 + static_cast<int>((state >> 33) % 40);
        text += "w" + std::to_string(a) + " w" + std::to_string(a + 40) + " w" +
                std::to_string((a * 3) % 90 + 10) + " w5 ";
      }
      dir_.write("texts/doc" + std::to_string(d) + ".txt", text);
    }
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  // A random tiny encoder (2 layers) with the tokenizer, as `lmk model init` writes it.
  void init_folder(const std::string& name, const std::string& tokenizer) const {
    EncoderConfig config = EncoderConfig::preset("tiny", 105, 0);
    config.num_layers = 2;
    config.global_layers = {true, true};
    save_model_folder(path(name), Encoder(config, 5), tokenizer, PoolingSettings{});
  }
  PretrainConfig config(const std::string& out, int64_t steps) const {
    PretrainConfig c;
    c.init_model = path("init");
    c.out_dir = path(out);
    c.train = {path("texts")};
    c.max_length = 32;
    c.batch_size = 8;
    c.learning_rate = 3e-3;
    c.warmup_ratio = 0;
    c.max_steps = steps;
    c.checkpoint_every = 0;
    c.log_every = 100;
    c.seed = 3;
    return c;
  }
  // The InputError message of a run of `c` ("" when there is none).
  static std::string input_error_of(const PretrainConfig& c) {
    return testing::error_of([&] { pretrain_mlm(c, false, false); });
  }

  static constexpr int kDocuments = 10, kGroups = 20;  // 80 words a document
  TempDir dir_;
  std::string tokenizer_;
};

// The documents are packed whole: 10 documents of 80 tokens with a separator between each
// two, 30 content tokens a sequence of 32 -> ceil(809 / 30) = 27 sequences. At first the MLM
// head guesses uniformly over the 105 ids (ln 105); 20 steps on text with structure lower the
// loss. The losses are the run's, kept in last/ beside the model.
TEST_F(PretrainTest, PacksEveryDocumentStartsAtChanceAndLearns) {
  const PretrainSummary summary = pretrain_mlm(config("out", 20), false, false);
  EXPECT_EQ(summary.sequences, (kDocuments * kGroups * 4 + kDocuments - 1 + 29) / 30);
  EXPECT_EQ(summary.steps, 20);
  ASSERT_EQ(summary.losses.size(), 20u);
  EXPECT_NEAR(summary.losses[0], std::log(105.0), 0.3);
  const double late = (summary.losses[17] + summary.losses[18] + summary.losses[19]) / 3;
  EXPECT_LT(late, summary.losses[0] - 0.5) << "the MLM loss falls";
  EXPECT_EQ(json::parse(read_file(path("out/last/train_state.json")))["losses"]
                .get<std::vector<double>>(),
            summary.losses);
  EXPECT_NO_THROW(load_model_folder(path("out/last")));
}

// Refused naming what is wrong, before any step: text for fewer sequences than one batch, a
// tokenizer without a mask token, a jsonl file with no texts, a line without "text".
TEST_F(PretrainTest, BadInputIsRefusedNamingIt) {
  PretrainConfig big = config("big", 2);
  big.batch_size = 28;
  EXPECT_EQ(input_error_of(big),
            path("texts") + ": fewer packed sequences (27) than one batch of 28");

  json no_mask = testing::word_level_json(100);
  no_mask["model"]["vocab"].erase("[MASK]");
  json added = json::array();
  for (const json& token : no_mask["added_tokens"])
    if (token["content"] != "[MASK]") added.push_back(token);
  no_mask["added_tokens"] = added;
  init_folder("no-mask", dir_.write("no-mask.json", no_mask.dump()));
  PretrainConfig masked = config("m", 2);
  masked.init_model = path("no-mask");
  EXPECT_EQ(input_error_of(masked), path("no-mask") + ": the tokenizer has no mask token");

  PretrainConfig empty = config("e", 2);
  empty.train = {dir_.write("empty.jsonl", "")};
  EXPECT_EQ(input_error_of(empty), path("empty.jsonl") + ": no texts");
  PretrainConfig wrong = config("w", 2);
  wrong.train = {dir_.write("wrong.jsonl", "{\"text\": \"w1 w2\"}\n{\"body\": \"w3\"}\n")};
  const std::string message = input_error_of(wrong);
  EXPECT_EQ(message.rfind(path("wrong.jsonl") + ":2", 0), 0u) << message;
  EXPECT_NE(message.find("text"), std::string::npos) << message;
  for (const char* out : {"big", "m", "e", "w"}) EXPECT_FALSE(fs::exists(path(out))) << out;
}

// A decoder pretrains either way -- bidirectional (LLM2Vec's conversion) on masked tokens as an
// encoder does, causal on next tokens -- from chance over the vocabulary to lower, and writes a
// folder that loads. The causal loss is next-token cross-entropy: transformers' own
// (Qwen3ForCausalLM with labels) gives the same first-step loss in tests/parity/hf_models.py.
TEST_F(PretrainTest, ADecoderPretrainsOnMaskedTokensBidirectionalAndOnNextTokensCausal) {
  std::vector<double> first_losses;
  for (const bool causal : {false, true}) {
    ShapeOverrides shape;
    shape.architecture = "qwen3";
    shape.layers = 2;
    shape.bidirectional = !causal;
    const std::string init = causal ? "causal" : "bidirectional";
    save_model_folder(path(init), Encoder(shaped_config("tiny", shape, 105, 0), 5), tokenizer_,
                      PoolingSettings{});
    PretrainConfig c = config(init + "-out", 20);
    c.init_model = path(init);
    const PretrainSummary summary = pretrain_mlm(c, false, false);
    EXPECT_NEAR(summary.losses[0], std::log(105.0), 0.3) << init;
    EXPECT_LT((summary.losses[17] + summary.losses[18] + summary.losses[19]) / 3,
              summary.losses[0] - 0.5)
        << init;
    const LoadedModel trained = load_model_folder(path(init + "-out/last"));
    EXPECT_TRUE(trained.encoder->config().is_decoder());
    EXPECT_EQ(trained.encoder->config().causal, causal);
    first_losses.push_back(summary.losses[0]);
  }
  EXPECT_NE(first_losses[0], first_losses[1]) << "two objectives, two losses";
}

}  // namespace
}  // namespace lmk
