#pragma once

// The tiny model of the encoder tests of tests/engine/eval and tests/core/eval
// (attention_explorer_test, document_attention_test, attention_profile_test; classify_test and
// retrieval_test read it with mean pooling): a random encoder of two layers, the second attending
// within a local window, saved with landmark pooling and a word-level tokenizer ("w0".."w999"), and
// a 60-word document.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "engine/embed/embed.h"
#include "tests/support/test_tokenizers.h"

namespace lmk::testing {

class ExplorerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EncoderConfig c = EncoderConfig::preset("tiny", 1005, 0);
    c.num_layers = 2;
    c.global_layers = {true, false};  // layer 1 attends within a local window
    c.local_attention = 8;
    Encoder encoder(c, 7);
    folder_ = (dir_.path() / "model").string();
    PoolingSettings settings;
    settings.pooling = Pooling::Landmark;
    save_model_folder(folder_, encoder,
                      dir_.write("tokenizer.json", testing::word_level_json(1000).dump()),
                      settings);
    model_ = load_model_folder(folder_);
    tokenizer_ = load_tokenizer(folder_);
    for (int i = 0; i < 60; ++i) text_ += (i ? " w" : "w") + std::to_string((i * 37) % 1000);
  }

  EncodeOptions lmk_options() const {
    EncodeOptions options;
    options.pooling = Pooling::Landmark;
    options.granularity = 8;
    return options;
  }

  TempDir dir_;
  std::string folder_, text_;
  LoadedModel model_;
  std::unique_ptr<Tokenizer> tokenizer_;
};

}  // namespace lmk::testing
