#pragma once

// What the architectures' unit tests share (tests/core/model/{bert,gte,modern_bert}_test.cpp):
// an architecture built on its own, as the Encoder builds it, with the tensors it declares
// recorded and filled with random values; a plain masked attention to run its layers with; and
// a check of the declared tensors against the Hugging Face checkpoint's.

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/model/architecture.h"
#include "tests/support/dense_attention.h"

namespace lmk::testing {

// One tensor as the architecture declared it, and the values it was given.
struct DeclaredTensor {
  std::vector<int64_t> shape;
  double init_std = 0;
  bool head = false;
  at::Tensor value;
};

// An architecture graph with the tensors it declared (the graph's handles share their storage,
// so changing a value in place changes the graph). Owns the config the graph refers to.
struct BuiltArchitecture {
  EncoderConfig config;
  std::map<std::string, DeclaredTensor> tensors;
  std::unique_ptr<ArchitectureGraph> graph;
  const at::Tensor& operator[](const std::string& name) const { return tensors.at(name).value; }
};

// Builds config's architecture; every tensor is drawn from N(0, 0.5²) after seeding with `seed`
// (norm weights around 1, biases nonzero), so that every term of the forward counts.
inline std::unique_ptr<BuiltArchitecture> build_architecture(const EncoderConfig& config,
                                                             uint64_t seed) {
  auto built = std::make_unique<BuiltArchitecture>();
  built->config = config;
  at::manual_seed(seed);
  BuiltArchitecture* b = built.get();
  const WeightBuilder builder(b->config, [b](const std::string& name, std::vector<int64_t> shape,
                                             double init_std, bool head) {
    EXPECT_EQ(b->tensors.count(name), 0u) << name << " declared twice";
    at::Tensor value = at::randn(shape) * 0.5;
    if (init_std == kInitOnes) value += 1;
    b->tensors[name] = {shape, init_std, head, value};
    return value;
  });
  switch (config.architecture) {
    case Architecture::ModernBert:
      built->graph = build_modern_bert(builder);
      break;
    case Architecture::Bert:
      built->graph = build_bert(builder);
      break;
    case Architecture::Gte:
      built->graph = build_gte(builder);
      break;
    case Architecture::Llama:
    case Architecture::Qwen3:
      built->graph = build_llama(builder);
      break;
  }
  return built;
}

// Multi-head softmax attention over the keys key_mask [B, L] allows, without positions (what the
// Encoder's core does for a global layer, RoPE aside): q, k, v [B, L, H] -> [B, L, H]. Records
// the layers it is called for in `layers` when given.
inline Attend masked_attention(const at::Tensor& key_mask, int64_t heads,
                               std::vector<int64_t>* layers = nullptr) {
  const at::Tensor mask = key_mask.to(at::kBool);
  return [mask, heads, layers](const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                               int64_t layer) {
    if (layers) layers->push_back(layer);
    const int64_t B = q.size(0), L = q.size(1), H = q.size(2);
    auto split = [&](const at::Tensor& x) {
      return x.reshape({B, L, heads, H / heads}).transpose(1, 2);
    };
    return dense_attention(split(q), split(k), split(v), mask, -1)
        .first.transpose(1, 2)
        .reshape({B, L, H});
  };
}

// embed, every layer with masked_attention, finish: the final states [B, L, H].
inline at::Tensor run_layers(const BuiltArchitecture& a, const at::Tensor& ids,
                             const at::Tensor& key_mask, std::vector<int64_t>* layers = nullptr) {
  const Attend attend = masked_attention(key_mask, a.config.num_heads, layers);
  at::Tensor hidden = a.graph->embed(ids);
  for (int64_t i = 0; i < a.config.num_layers; ++i) hidden = a.graph->layer(i, hidden, attend);
  return a.graph->finish(hidden);
}

// A tensor of the Hugging Face checkpoint (its name without the model class's prefix), its
// shape, its initialization ('i': σ of the inputs, 'o': σ of the projections into the residual
// stream, '1': ones, '0': zeros) and whether it belongs to the MLM head.
struct ExpectedTensor {
  std::string name;
  std::vector<int64_t> shape;
  char init;
  bool head = false;
};

// The architecture declared exactly the expected tensors.
inline void expect_declared(const BuiltArchitecture& a,
                            const std::vector<ExpectedTensor>& expected) {
  const double std_in = 0.02, std_out = 0.02 / std::sqrt(2.0 * a.config.num_layers);
  std::vector<std::string> declared, wanted;
  for (const auto& [name, tensor] : a.tensors) declared.push_back(name);
  for (const ExpectedTensor& e : expected) wanted.push_back(e.name);
  std::sort(wanted.begin(), wanted.end());
  EXPECT_EQ(declared, wanted);
  for (const ExpectedTensor& e : expected) {
    const auto it = a.tensors.find(e.name);
    if (it == a.tensors.end()) continue;
    EXPECT_EQ(it->second.shape, e.shape) << e.name;
    EXPECT_EQ(it->second.head, e.head) << e.name;
    const double init = e.init == 'i'   ? std_in
                        : e.init == 'o' ? std_out
                        : e.init == '1' ? kInitOnes
                                        : kInitZeros;
    EXPECT_DOUBLE_EQ(it->second.init_std, init) << e.name;
  }
}

// Runs 7 tokens alone and as row 0 of a batch of 11, 4 padding positions after them (row 1: 11
// other tokens): row 0's real tokens get the same states, [B, L, H]; each forward runs every
// layer once, in order. The padding counts once the mask lets it be seen (the check is not
// vacuous: attention mixes tokens).
inline void expect_padding_does_not_change_real_tokens(const BuiltArchitecture& a) {
  const at::NoGradGuard no_grad;
  const int64_t V = a.config.vocab_size, H = a.config.hidden_size;
  const at::Tensor ids = at::randint(1, V, {1, 7}, at::kLong);
  std::vector<int64_t> layers;
  const at::Tensor alone = run_layers(a, ids, at::ones({1, 7}, at::kLong), &layers);
  EXPECT_EQ(alone.sizes(), (std::vector<int64_t>{1, 7, H}));
  std::vector<int64_t> every_layer;
  for (int64_t i = 0; i < a.config.num_layers; ++i) every_layer.push_back(i);
  EXPECT_EQ(layers, every_layer);
  at::Tensor padded_ids = at::full({2, 11}, a.config.pad_token_id, at::kLong);
  padded_ids[0].narrow(0, 0, 7).copy_(ids[0]);
  padded_ids[1].copy_(at::randint(1, V, {11}, at::kLong));
  at::Tensor mask = at::ones({2, 11}, at::kLong);
  mask[0].narrow(0, 7, 4).fill_(0);
  const at::Tensor batch = run_layers(a, padded_ids, mask);
  EXPECT_EQ(batch.sizes(), (std::vector<int64_t>{2, 11, H}));
  EXPECT_TRUE(at::allclose(batch[0].narrow(0, 0, 7), alone[0], 1e-5, 1e-5))
      << (batch[0].narrow(0, 0, 7) - alone[0]).abs().max().item<float>();
  const at::Tensor unmasked = run_layers(a, padded_ids, at::ones({2, 11}, at::kLong));
  EXPECT_FALSE(at::allclose(unmasked[0].narrow(0, 0, 7), alone[0], 1e-5, 1e-5));
}

}  // namespace lmk::testing
