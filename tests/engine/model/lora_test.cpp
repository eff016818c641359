// LoRA (engine/model/lora.h, Encoder::attach_lora): PEFT's target rule, the adapter's formula
// against a product written out here, an attached adapter that changes nothing until trained,
// merged weights that compute what the adapters compute, and gradients that reach the
// adapters only. Numbers against PEFT itself: tests/parity/lora_peft.py (lora_peft_*).
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "engine/model/encoder.h"
#include "engine/model/lora.h"
#include "tests/support/small_encoder_config.h"

namespace lmk {
namespace {

TEST(LoraTargets, FollowPeftsSuffixRule) {
  const std::vector<std::string> q = {"q_proj"};
  EXPECT_TRUE(lora_targets("layers.0.self_attn.q_proj", q));
  EXPECT_TRUE(lora_targets("q_proj", q));
  EXPECT_FALSE(lora_targets("layers.0.self_attn.xq_proj", q)) << "a whole name component";
  EXPECT_FALSE(lora_targets("layers.0.self_attn.q_proj_2", q));
  EXPECT_TRUE(lora_targets("encoder.layer.1.attention.output.dense", {"output.dense"}));
  EXPECT_FALSE(lora_targets("encoder.layer.1.intermediate.dense", {"output.dense"}));
  EXPECT_TRUE(lora_targets("anything.at.all", {kAllLinear}));
  EXPECT_TRUE(lora_targets("layers.1.mlp.up_proj", {"q_proj", "layers.1.mlp.up_proj"}));
}

TEST(LoraAdapter, DeltaAndMergeAreScaleTimesBA) {
  at::manual_seed(3);
  LoraAdapter adapter;
  adapter.a = at::randn({3, 5});
  adapter.b = at::randn({4, 3});
  adapter.scale = 2.5;
  const at::Tensor x = at::randn({2, 7, 5}), w = at::randn({4, 5});
  // Written out: delta_o = scale · Σ_r B[o, r] Σ_i A[r, i] x_i.
  const at::Tensor expected = at::einsum("or,ri,bti->bto", {adapter.b, adapter.a, x}) * 2.5;
  EXPECT_TRUE(at::allclose(adapter.delta(x), expected, 1e-5, 1e-6));
  const at::Tensor merged = adapter.merged(w);
  EXPECT_TRUE(at::allclose(merged, w + 2.5 * at::mm(adapter.b, adapter.a), 1e-6, 1e-6));
  EXPECT_TRUE(at::allclose(at::linear(x, merged), at::linear(x, w) + expected, 1e-4, 1e-5));
  // Dropout acts in grad mode only (training); inference is deterministic.
  adapter.dropout = 0.5;
  at::Tensor evaluated;
  {
    const at::NoGradGuard no_grad;
    evaluated = adapter.delta(x);
  }
  EXPECT_TRUE(at::allclose(evaluated, expected, 1e-5, 1e-6));
  EXPECT_FALSE(at::allclose(adapter.delta(x), expected, 1e-3, 1e-3)) << "masks in training";
}

class EncoderLora : public ::testing::TestWithParam<Architecture> {
 protected:
  static EncoderConfig config() {
    EncoderConfig c = testing::small_config(GetParam());
    if (c.is_decoder()) c.causal = true;
    return c;
  }
};

TEST_P(EncoderLora, AttachedAdaptersChangeNothingUntilTrainedThenMergeExactly) {
  Encoder encoder(config(), 5);
  const at::Tensor ids = at::randint(5, 50, {2, 12}).to(at::kLong);
  const at::Tensor mask = at::ones({2, 12}, at::kLong);
  at::Tensor before;
  {
    const at::NoGradGuard no_grad;
    before = encoder.forward(ids, mask);
  }
  LoraSettings s;
  s.rank = 3;
  s.alpha = 6;
  const std::vector<std::string> adapted = encoder.attach_lora(s, 11);
  ASSERT_FALSE(adapted.empty());
  EXPECT_EQ(adapted.size(), encoder.linear_layers().size()) << "all-linear: every layer";
  for (const auto& [name, weight] : encoder.named_weights())
    EXPECT_FALSE(weight.requires_grad()) << name << " is frozen";
  for (const std::string& name : adapted) {
    const LoraAdapter& a = *encoder.linear_layers().at(name);
    const double bound = 1.0 / std::sqrt(static_cast<double>(a.a.size(1)));
    EXPECT_LE(a.a.abs().max().item<double>(), bound) << "PEFT's Kaiming-uniform bound";
    EXPECT_GT(a.a.abs().max().item<double>(), bound / 2);
    EXPECT_EQ(a.b.abs().max().item<double>(), 0.0);
    EXPECT_DOUBLE_EQ(a.scale, 2.0);
  }
  {
    const at::NoGradGuard no_grad;
    EXPECT_TRUE(at::equal(encoder.forward(ids, mask), before)) << "B = 0: no change";
    for (const std::string& name : adapted) encoder.linear_layers().at(name)->b.normal_(0, 0.2);
  }
  // The trained adapters against a second encoder holding the merged weights.
  Encoder merged(config(), 5, /*initialize=*/false);
  {
    const at::NoGradGuard no_grad;
    for (const auto& [name, weight] : merged.named_weights())
      at::Tensor(weight).copy_(encoder.merged_weight(name));
    const at::Tensor with_adapters = encoder.forward(ids, mask);
    EXPECT_GT((with_adapters - before).abs().max().item<double>(), 1e-3);
    EXPECT_TRUE(at::allclose(merged.forward(ids, mask), with_adapters, 1e-4, 1e-5));
  }
  // Gradients reach the adapters only.
  encoder.forward(ids, mask).pow(2).sum().backward();
  for (const std::string& name : adapted) {
    const LoraAdapter& a = *encoder.linear_layers().at(name);
    ASSERT_TRUE(a.a.grad().defined()) << name;
    EXPECT_GT(a.b.grad().abs().max().item<double>(), 0) << name;
  }
  for (const auto& [name, weight] : encoder.named_weights())
    EXPECT_FALSE(weight.grad().defined()) << name;
}

TEST_P(EncoderLora, RefusesWhatItCannotAttach) {
  Encoder encoder(config(), 5);
  LoraSettings s;
  s.rank = 0;
  EXPECT_THROW(encoder.attach_lora(s, 1), InputError);
  s.rank = 2;
  s.target_modules = {"no_such_layer"};
  try {
    encoder.attach_lora(s, 1);
    ADD_FAILURE() << "no layer matches";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_layer"), std::string::npos) << e.what();
  }
  s.target_modules = {kAllLinear};
  s.rank = 100000;  // above every layer's larger side
  try {
    encoder.attach_lora(s, 1);
    ADD_FAILURE() << "rank 100000";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("larger side ("), std::string::npos) << e.what();
  }
  s.rank = 16;  // the hidden size: every layer's larger side is at least that
  encoder.attach_lora(s, 1);
  EXPECT_THROW(encoder.attach_lora(s, 1), InputError) << "attached already";
}

// Activation recomputation ([train] recompute_layers) gives the adapters the same gradients:
// the first layer's input (frozen embeddings) needs none, the adapters inside each layer do.
TEST(EncoderLoraRecompute, GradientsEqualTheOrdinaryBackwards) {
  EncoderConfig c = testing::small_config(Architecture::Qwen3);
  c.causal = true;
  const at::Tensor ids = at::randint(5, 50, {2, 10}).to(at::kLong);
  const at::Tensor mask = at::ones({2, 10}, at::kLong);
  std::vector<std::vector<at::Tensor>> grads;
  for (const bool recompute : {false, true}) {
    at::manual_seed(11);  // B's draws below (building an Encoder no longer seeds the global one)
    Encoder encoder(c, 5);
    LoraSettings s;
    s.rank = 2;
    encoder.attach_lora(s, 3);
    {
      const at::NoGradGuard no_grad;
      for (const auto& [name, adapter] : encoder.linear_layers()) adapter->b.normal_(0, 0.1);
    }
    encoder.set_recompute_layers(recompute);
    encoder.forward(ids, mask).pow(2).sum().backward();
    grads.emplace_back();
    for (const auto& [name, adapter] : encoder.linear_layers()) {
      ASSERT_TRUE(adapter->a.grad().defined()) << name << (recompute ? " (recomputed)" : "");
      grads.back().push_back(adapter->a.grad());
      grads.back().push_back(adapter->b.grad());
    }
  }
  ASSERT_EQ(grads[0].size(), grads[1].size());
  for (size_t i = 0; i < grads[0].size(); ++i)
    EXPECT_TRUE(at::allclose(grads[0][i], grads[1][i], 1e-5, 1e-6)) << i;
}

TEST(EncoderLoraTargets, DecoderAttentionProjectionsOnly) {
  EncoderConfig c = testing::small_config(Architecture::Qwen3);
  Encoder encoder(c, 5);
  LoraSettings s;
  s.rank = 2;
  s.target_modules = {"q_proj", "v_proj"};
  const std::vector<std::string> adapted = encoder.attach_lora(s, 1);
  EXPECT_EQ(adapted,
            (std::vector<std::string>{"layers.0.self_attn.q_proj", "layers.0.self_attn.v_proj",
                                      "layers.1.self_attn.q_proj", "layers.1.self_attn.v_proj"}));
  EXPECT_FALSE(encoder.linear_layers().at("layers.0.self_attn.k_proj")->attached());
  // Two seeds: other draws; one seed: the same.
  Encoder again(c, 5), other(c, 5);
  again.attach_lora(s, 1);
  other.attach_lora(s, 2);
  const std::string q = "layers.1.self_attn.q_proj";
  EXPECT_TRUE(at::equal(again.linear_layers().at(q)->a, encoder.linear_layers().at(q)->a));
  EXPECT_FALSE(at::equal(other.linear_layers().at(q)->a, encoder.linear_layers().at(q)->a));
}

INSTANTIATE_TEST_SUITE_P(Architectures, EncoderLora,
                         ::testing::Values(Architecture::ModernBert, Architecture::Bert,
                                           Architecture::Gte, Architecture::Qwen3,
                                           Architecture::Llama),
                         [](const auto& info) { return architecture_name(info.param); });

}  // namespace
}  // namespace lmk
