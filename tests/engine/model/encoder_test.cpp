// Pins what distinguishes the architectures: getting one of these wrong raises no error, it
// only gives bad embeddings.
#include "engine/model/encoder.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <vector>

#include "tests/support/small_encoder_config.h"

namespace lmk {
namespace {

using testing::small_config;

TEST(AttentionTest, EncoderCapturesTheLayersAskedFor) {
  Encoder encoder(small_config(Architecture::ModernBert), 6);
  at::NoGradGuard no_grad;
  const at::Tensor ids = at::randint(1, 50, {1, 40}, at::kLong),
                   mask = at::ones({1, 40}, at::kLong);
  AttentionCapture last;
  last.query_positions = {{0, 39}};
  const at::Tensor hidden = encoder.forward(ids, mask, &last);
  ASSERT_EQ(last.weights.size(), 1u);
  ASSERT_EQ(last.weights.count(1), 1u) << "the final layer by default";
  EXPECT_EQ(last.weights.at(1).sizes(), (std::vector<int64_t>{1, 1, 2, 40}));
  // Layer 1 is local (window 8: |i - j| <= 4): position 0 sees 0..4 only.
  EXPECT_EQ(last.weights.at(1)[0][0][0].narrow(0, 5, 35).abs().sum().item<float>(), 0.0f);
  EXPECT_NEAR(last.weights.at(1)[0][0][0].sum().item<float>(), 1.0f, 1e-5);
  AttentionCapture both;
  both.query_positions = {{0}};
  both.layers = {0, 1};
  both.per_head = true;
  EXPECT_TRUE(at::equal(encoder.forward(ids, mask, &both), hidden)) << "capture changes nothing";
  ASSERT_EQ(both.weights.size(), 2u);
  EXPECT_EQ(both.weights.at(0).sizes(), (std::vector<int64_t>{1, 2, 1, 40}));
  // Layer 0 is global: position 0 sees beyond the window.
  EXPECT_GT(both.weights.at(0)[0][0][0].narrow(0, 5, 35).sum().item<float>(), 0.0f);
  EXPECT_TRUE(
      at::allclose(both.weights.at(1).mean(1)[0][0], last.weights.at(1)[0][0][0], 1e-5, 1e-7));
}

// Recomputing each layer in the backward gives the gradients of the ordinary backward, for
// every parameter, with padding, in every architecture (and the same forward), to rounding: the
// forward without gradients runs the inference kernel, the recomputation the training path.
TEST(EncoderTest, RecomputedLayersGiveTheSameGradients) {
  for (auto architecture : {Architecture::ModernBert, Architecture::Bert, Architecture::Gte}) {
    Encoder encoder(small_config(architecture), 11);
    const at::Tensor ids = at::randint(1, 50, {2, 30}, at::kLong);
    at::Tensor mask = at::ones({2, 30}, at::kLong);
    mask[1].narrow(0, 21, 9).fill_(0);
    // Padding positions carry no loss: their states are not defined the same way by the
    // inference kernel (the forward here runs without gradients) and the training path.
    const at::Tensor real = mask.unsqueeze(-1).to(at::kFloat);
    const at::Tensor weights = at::randn({2, 30, 16}) * real;
    std::vector<std::vector<at::Tensor>> grads(2);
    std::vector<at::Tensor> outputs(2);
    for (int recompute = 0; recompute < 2; ++recompute) {
      encoder.set_recompute_layers(recompute == 1);
      encoder.zero_grad();
      const at::Tensor hidden = encoder.forward(ids, mask);
      (hidden * weights).sum().backward();
      outputs[recompute] = hidden.detach() * real;
      for (const auto& p : encoder.parameters())
        grads[recompute].push_back(p.grad().defined() ? p.grad().clone() : at::zeros_like(p));
    }
    EXPECT_TRUE(at::allclose(outputs[0], outputs[1], 1e-5, 1e-6))
        << architecture_name(architecture) << " "
        << (outputs[0] - outputs[1]).abs().max().item<float>();
    ASSERT_EQ(grads[0].size(), grads[1].size());
    size_t nonzero = 0;
    for (size_t i = 0; i < grads[0].size(); ++i) {
      EXPECT_TRUE(at::allclose(grads[0][i], grads[1][i], 1e-4, 1e-5))
          << architecture_name(architecture) << " parameter " << i << " max diff "
          << (grads[0][i] - grads[1][i]).abs().max().item<float>();
      nonzero += grads[0][i].abs().sum().item<float>() > 0;
    }
    EXPECT_GT(nonzero, grads[0].size() / 2) << "the gradients reach the parameters";
  }
}

TEST(EncoderTest, PaddingDoesNotChangeRealTokensInAnyArchitecture) {
  for (auto architecture : {Architecture::ModernBert, Architecture::Bert, Architecture::Gte}) {
    Encoder encoder(small_config(architecture), 7);
    at::NoGradGuard no_grad;
    const at::Tensor ids = at::randint(1, 50, {1, 20}, at::kLong);
    const at::Tensor alone = encoder.forward(ids, at::ones({1, 20}, at::kLong));
    at::Tensor padded_ids = at::zeros({2, 33}, at::kLong),
               padded_mask = at::zeros({2, 33}, at::kLong);
    padded_ids[0].narrow(0, 0, 20).copy_(ids[0]);
    padded_mask[0].narrow(0, 0, 20).fill_(1);
    padded_ids[1].copy_(at::randint(1, 50, {33}, at::kLong));
    padded_mask[1].fill_(1);
    const at::Tensor batch = encoder.forward(padded_ids, padded_mask);
    EXPECT_TRUE(at::allclose(batch[0].narrow(0, 0, 20), alone[0], 1e-4, 1e-5))
        << architecture_name(architecture);
    EXPECT_FALSE(at::isnan(batch).any().item<bool>());
  }
}

TEST(EncoderTest, LocalLayersLimitTheReceptiveField) {
  EncoderConfig c = small_config(Architecture::ModernBert);
  c.global_layers = {false, false};  // two local layers, half window 4: position 0 sees up to 8
  Encoder encoder(c, 11);
  at::NoGradGuard no_grad;
  at::Tensor ids = at::randint(1, 50, {1, 40}, at::kLong);
  const at::Tensor mask = at::ones({1, 40}, at::kLong);
  const at::Tensor base = encoder.forward(ids, mask);
  at::Tensor far = ids.clone(), near = ids.clone(), edge = ids.clone(), beyond = ids.clone();
  far[0][30] = (ids[0][30].item<int64_t>() % 49) + 1;
  near[0][3] = (ids[0][3].item<int64_t>() % 49) + 1;
  edge[0][8] = (ids[0][8].item<int64_t>() % 49) + 1;
  beyond[0][9] = (ids[0][9].item<int64_t>() % 49) + 1;
  auto first = [&](const at::Tensor& t) { return encoder.forward(t, mask)[0][0]; };
  EXPECT_TRUE(at::equal(first(far), base[0][0]));
  EXPECT_TRUE(at::equal(first(beyond), base[0][0])) << "9 > 2 * half window";
  EXPECT_GT((first(edge) - base[0][0]).abs().max().item<float>(), 0.0f)
      << "8 = 2 * half window is inside";
  EXPECT_FALSE(at::allclose(first(near), base[0][0]));
  // A global first layer lets position 0 see everything.
  c.global_layers = {true, false};
  Encoder global(c, 11);
  EXPECT_FALSE(at::allclose(global.forward(far, mask)[0][0], global.forward(ids, mask)[0][0]));
}

// The RoPE ablation: with every layer global and no rotation, attention has no notion of
// position, so the first position's output does not change when the other tokens are permuted;
// with RoPE it does.
TEST(EncoderTest, WithoutRopeAttentionIgnoresOrder) {
  for (auto architecture : {Architecture::ModernBert, Architecture::Gte}) {
    EncoderConfig c = small_config(architecture);
    c.global_layers = {true, true};
    at::NoGradGuard no_grad;
    const at::Tensor ids = at::randint(1, 50, {1, 12}, at::kLong),
                     mask = at::ones({1, 12}, at::kLong);
    at::Tensor shuffled = ids.clone();
    shuffled[0].narrow(0, 1, 11).copy_(ids[0].narrow(0, 1, 11).flip(0));
    // Attention sharp enough to depend on the keys' positions (initial weights give nearly
    // uniform attention, which ignores order whatever the rotation).
    auto sharpen = [](const Encoder& encoder) {
      for (const auto& [name, weight] : encoder.named_weights())
        if (name.find("qkv") != std::string::npos || name.find("Wqkv") != std::string::npos)
          weight.mul_(40);
    };
    Encoder rotating(c, 3);
    sharpen(rotating);
    EXPECT_FALSE(at::allclose(rotating.forward(ids, mask)[0][0],
                              rotating.forward(shuffled, mask)[0][0], 1e-4, 1e-5))
        << architecture_name(architecture);
    c.rope_disabled = true;
    Encoder ablated(c, 3);
    sharpen(ablated);
    EXPECT_TRUE(at::allclose(ablated.forward(ids, mask)[0][0],
                             ablated.forward(shuffled, mask)[0][0], 1e-4, 1e-5))
        << architecture_name(architecture);
  }
}

TEST(EncoderTest, BlockSizeDoesNotChangeTheOutput) {
  Encoder encoder(small_config(Architecture::ModernBert), 5);
  at::NoGradGuard no_grad;
  const at::Tensor ids = at::randint(1, 50, {2, 50}, at::kLong),
                   mask = at::ones({2, 50}, at::kLong);
  encoder.set_attention_block(1 << 20);
  const at::Tensor whole = encoder.forward(ids, mask);
  encoder.set_attention_block(7);
  EXPECT_TRUE(at::allclose(encoder.forward(ids, mask), whole, 1e-5, 1e-5));
  EXPECT_EQ(encoder.mlm_logits(whole).sizes(), (std::vector<int64_t>{2, 50, 50}));
}

// Unpadding (ModernBERT's design, the CUDA path): the layers on the valid tokens only and
// attention over cumulative lengths give the padded forward's states at every real token, the
// same gradients (with and without recomputation), zeros at the padding; a batch that is not
// right-padded runs padded. On the CPU varlen_attention runs each row through the fused
// kernel, so this checks the bookkeeping the CUDA path shares: unpad / repad, RoPE by row
// position, cumulative lengths, local windows per row.
TEST(EncoderTest, UnpaddedBatchesGiveThePaddedStatesAndGradients) {
  for (auto architecture : {Architecture::ModernBert, Architecture::Bert, Architecture::Gte}) {
    EncoderConfig c = small_config(architecture);
    c.local_attention = 6;  // windows shorter than the rows
    Encoder encoder(c, 13);
    const at::Tensor ids = at::randint(1, 50, {3, 30}, at::kLong);
    at::Tensor mask = at::ones({3, 30}, at::kLong);
    mask[0].narrow(0, 17, 13).fill_(0);
    mask[2].narrow(0, 4, 26).fill_(0);
    const at::Tensor real = mask.unsqueeze(-1).to(at::kFloat);
    const at::Tensor weights = at::randn({3, 30, 16}) * real;
    const std::string name = architecture_name(architecture);
    std::vector<at::Tensor> outputs;
    std::vector<std::vector<at::Tensor>> grads;
    for (auto unpadding : {Encoder::Unpadding::Never, Encoder::Unpadding::Always}) {
      for (bool recompute : {false, true}) {
        encoder.set_unpadding(unpadding);
        encoder.set_recompute_layers(recompute);
        encoder.zero_grad();
        EXPECT_EQ(encoder.runs_unpadded(ids), unpadding == Encoder::Unpadding::Always);
        const at::Tensor hidden = encoder.forward(ids, mask);
        (hidden * weights).sum().backward();
        if (unpadding == Encoder::Unpadding::Always)
          EXPECT_EQ((hidden.detach() * (1 - real)).abs().max().item<float>(), 0.0f)
              << name << ": zeros at the padding";
        outputs.push_back(hidden.detach() * real);
        grads.emplace_back();
        for (const auto& p : encoder.parameters())
          grads.back().push_back(p.grad().defined() ? p.grad().clone() : at::zeros_like(p));
      }
    }
    for (size_t run = 1; run < outputs.size(); ++run) {
      EXPECT_TRUE(at::allclose(outputs[0], outputs[run], 1e-5, 1e-5))
          << name << " run " << run << ": "
          << (outputs[0] - outputs[run]).abs().max().item<float>();
      for (size_t i = 0; i < grads[0].size(); ++i)
        EXPECT_TRUE(at::allclose(grads[0][i], grads[run][i], 1e-4, 1e-5))
            << name << " run " << run << " parameter " << i << " max diff "
            << (grads[0][i] - grads[run][i]).abs().max().item<float>();
    }
    // Without gradients: the inference path.
    at::NoGradGuard no_grad;
    encoder.set_unpadding(Encoder::Unpadding::Always);
    const at::Tensor unpadded = encoder.forward(ids, mask) * real;
    encoder.set_unpadding(Encoder::Unpadding::Never);
    EXPECT_TRUE(at::allclose(unpadded, encoder.forward(ids, mask) * real, 1e-5, 1e-5)) << name;
  }
}

TEST(EncoderTest, UnpaddingNeedsRightPaddedRows) {
  at::Tensor mask = at::ones({2, 6}, at::kLong);
  mask[0].narrow(0, 4, 2).fill_(0);
  const auto batch = unpad_batch(mask);
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->total, 10);
  EXPECT_EQ(batch->max_length, 6);
  EXPECT_TRUE(at::equal(batch->cu_seqlens, at::tensor(std::vector<int32_t>{0, 4, 10})));
  EXPECT_TRUE(
      at::equal(batch->positions, at::tensor(std::vector<int64_t>{0, 1, 2, 3, 0, 1, 2, 3, 4, 5})));
  const at::Tensor x = at::randn({2, 6, 3});
  EXPECT_TRUE(at::equal(repad(unpad(x, *batch), *batch), x * mask.unsqueeze(-1)));
  mask[1][0] = 0;  // left padding
  EXPECT_FALSE(unpad_batch(mask).has_value());
  // ... runs padded, the same states as Never.
  Encoder encoder(small_config(Architecture::ModernBert), 2);
  at::NoGradGuard no_grad;
  const at::Tensor ids = at::randint(1, 50, {2, 6}, at::kLong);
  encoder.set_unpadding(Encoder::Unpadding::Always);
  const at::Tensor a = encoder.forward(ids, mask);
  encoder.set_unpadding(Encoder::Unpadding::Never);
  EXPECT_TRUE(at::equal(a, encoder.forward(ids, mask)));
}

// varlen_attention's route: FlashAttention only on CUDA in fp16 / bf16 with a head size it
// takes; the CPU (any dtype) computes each row.
TEST(AttentionTest, VarlenRoute) {
  EXPECT_EQ(varlen_route(at::zeros({4, 2, 64})), VarlenRoute::PerRow);
  EXPECT_EQ(varlen_route(at::zeros({4, 2, 64}, at::kBFloat16)), VarlenRoute::PerRow);
}

}  // namespace
}  // namespace lmk
