#pragma once

// The small encoder configuration the model tests share (tests/engine/model/encoder_test.cpp and
// the architectures' tests): two layers, hidden size 16, two heads, vocabulary 50.

#include "core/model/config.h"

namespace lmk::testing {

inline EncoderConfig small_config(Architecture architecture) {
  EncoderConfig c = EncoderConfig::preset("tiny", 50, 0);
  c.architecture = architecture;
  c.hidden_size = 16;
  c.intermediate_size = 24;
  c.num_heads = 2;
  c.num_layers = 2;
  c.max_position_embeddings = 128;
  c.local_attention = 8;
  c.global_layers = {true, false};
  return c;
}

}  // namespace lmk::testing
