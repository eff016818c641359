// Pins what distinguishes the architectures: getting one of these wrong raises no error, it
// only gives bad embeddings.
#include "core/model/encoder.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <functional>
#include <vector>

namespace lmk {
namespace {

EncoderConfig small_config(Architecture architecture) {
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

TEST(GluTest, ModernBertActivatesTheFirstHalfGteTheSecond) {
  const at::Tensor projected = at::tensor({1.0f, 2.0f});              // I = 1: halves [1] and [2]
  const double gelu1 = 0.5 * (1 + std::erf(1 / std::sqrt(2.0)));      // 0.8413
  const double gelu2 = 2 * 0.5 * (1 + std::erf(2 / std::sqrt(2.0)));  // 1.9545
  EXPECT_NEAR(gated_linear_unit(projected, "gelu", GluOrder::ActivateFirst).item<float>(),
              gelu1 * 2, 1e-5);
  EXPECT_NEAR(gated_linear_unit(projected, "gelu", GluOrder::ActivateSecond).item<float>(),
              1 * gelu2, 1e-5);
}

TEST(RopeTest, RotatesHalvesNotInterleavedPairs) {
  // d = 4, theta = 10000: inv_freq = [1, 0.01]. Position 1, x = e0: pairs are (0, 2) and (1, 3).
  at::Tensor x = at::zeros({1, 1, 2, 4});
  x[0][0][1][0] = 1.0f;
  x[0][0][0][0] = 1.0f;
  const at::Tensor y = apply_rope(x, 10000.0);
  EXPECT_NEAR(y[0][0][0][0].item<float>(), 1.0f, 1e-6) << "position 0 is not rotated";
  EXPECT_NEAR(y[0][0][1][0].item<float>(), std::cos(1.0), 1e-6);
  EXPECT_NEAR(y[0][0][1][1].item<float>(), 0.0, 1e-6)
      << "an interleaved RoPE would put sin(1) here";
  EXPECT_NEAR(y[0][0][1][2].item<float>(), std::sin(1.0), 1e-6);
  // Rotations keep norms and make q·k depend on relative position only.
  const at::Tensor q = at::randn({1, 1, 6, 8}),
                   k = at::randn({1, 1, 1, 8}).expand({1, 1, 6, 8}).contiguous();
  const at::Tensor qr = apply_rope(q.narrow(2, 0, 1).expand({1, 1, 6, 8}).contiguous(), 500.0),
                   kr = apply_rope(k, 500.0);
  const at::Tensor dots = (qr * kr).sum(-1);  // same q and k at every position: all dots equal
  EXPECT_TRUE(at::allclose(dots, dots[0][0][0].expand_as(dots), 1e-4, 1e-5));
}

TEST(RopeTest, OnePassKernelEqualsTheTensorFormula) {
  // Inference runs a one-pass loop; training (gradients wanted) the tensor ops. Same numbers.
  at::manual_seed(9);
  const at::Tensor x = at::randn({2, 8, 3, 16}).transpose(1, 2);  // [B, heads, L, d], strided
  const RopeTables tables = rope_tables(8, 16, 160000.0);
  const at::Tensor fast = apply_rope(x, tables);
  const at::Tensor trained = apply_rope(x.clone().requires_grad_(), tables);
  ASSERT_TRUE(trained.requires_grad());
  EXPECT_TRUE(at::allclose(fast, trained.detach(), 1e-6, 1e-6));
}

TEST(AttentionTest, WindowEdgeIsInclusiveAndPaddingIsIgnored) {
  // q = k = 0: uniform over allowed keys; v one-hot per position shows which keys were used.
  const int64_t L = 9;
  const at::Tensor q = at::zeros({1, 1, L, L}), k = at::zeros({1, 1, L, L});
  const at::Tensor v = at::eye(L).view({1, 1, L, L});
  at::Tensor mask = at::ones({1, L}, at::kBool);
  mask[0][8] = false;  // padding
  const at::Tensor out = blockwise_attention(q, k, v, mask, /*half_window=*/2, /*block=*/4);
  // Query 4 sees keys 2..6 (|i - j| <= 2, inclusive), each 1/5.
  for (int64_t j = 0; j < L; ++j) {
    EXPECT_NEAR(out[0][0][4][j].item<float>(), (j >= 2 && j <= 6) ? 0.2f : 0.0f, 1e-6) << j;
  }
  // Query 0 sees 0..2; query 7 sees 5..7 (8 is padding).
  EXPECT_NEAR(out[0][0][0][2].item<float>(), 1.0f / 3, 1e-6);
  EXPECT_NEAR(out[0][0][7][8].item<float>(), 0.0f, 1e-6);
  EXPECT_NEAR(out[0][0][7][5].item<float>(), 1.0f / 3, 1e-6);
  // Global: every real key, never the padding.
  const at::Tensor global = blockwise_attention(q, k, v, mask, -1, 3);
  EXPECT_NEAR(global[0][0][4][0].item<float>(), 1.0f / 8, 1e-6);
  EXPECT_NEAR(global[0][0][4][8].item<float>(), 0.0f, 1e-6);
}

// softmax(q kᵀ / sqrt(d), masked) v with the whole [L, L] matrix, and the probabilities.
std::pair<at::Tensor, at::Tensor> dense_attention(const at::Tensor& q, const at::Tensor& k,
                                                  const at::Tensor& v, const at::Tensor& mask,
                                                  int64_t half_window) {
  const int64_t B = q.size(0), heads = q.size(1), L = q.size(2), d = q.size(3);
  const at::Tensor scores = at::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(d));
  at::Tensor allowed = mask.view({B, 1, 1, L}).expand({B, heads, L, L});
  if (half_window >= 0) {
    const at::Tensor i = at::arange(L).view({-1, 1}), j = at::arange(L).view({1, -1});
    allowed = allowed.logical_and((i - j).abs().le(half_window));
  }
  const at::Tensor probs = at::softmax(scores.masked_fill(allowed.logical_not(), -1e30), -1);
  return {at::matmul(probs, v), probs};
}

// Random q, k, v [2, heads, L, 8]; batch row 1 is padding from position real_in_row1 on.
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> random_heads(uint64_t seed,
                                                                        int64_t heads, int64_t L,
                                                                        int64_t real_in_row1) {
  at::manual_seed(seed);
  const at::Tensor q = at::randn({2, heads, L, 8}), k = at::randn({2, heads, L, 8}),
                   v = at::randn({2, heads, L, 8});
  at::Tensor mask = at::ones({2, L}, at::kBool);
  mask[1].narrow(0, real_in_row1, L - real_in_row1).fill_(false);
  return {q, k, v, mask};
}

TEST(AttentionTest, BlockwiseEqualsTheDenseFormula) {
  const auto [q, k, v, mask] = random_heads(3, 3, 37, 30);
  for (int64_t half_window : {-1, 0, 5}) {
    const at::Tensor dense = dense_attention(q, k, v, mask, half_window).first;
    for (int64_t block : {1, 7, 64}) {
      const at::Tensor blockwise = blockwise_attention(q, k, v, mask, half_window, block);
      // Padding queries (row 1, 30..36) may see no real key at all; their output is unused.
      EXPECT_TRUE(at::allclose(blockwise[0], dense[0], 1e-5, 1e-5))
          << "window " << half_window << " block " << block;
      EXPECT_TRUE(
          at::allclose(blockwise[1].narrow(1, 0, 30), dense[1].narrow(1, 0, 30), 1e-5, 1e-5))
          << "window " << half_window << " block " << block;
    }
  }
}

TEST(AttentionTest, FusedKernelMatchesTheDenseFormulaAtHeadSize64) {
  // The encoder's layout: q, k, v are [B, L, heads, d] in memory, seen as [B, heads, L, d].
  at::manual_seed(4);
  const int64_t B = 2, heads = 2, L = 300, d = 64;
  const at::Tensor qkv = at::randn({B, L, 3, heads, d}) * 2;
  const at::Tensor q = qkv.select(2, 0).transpose(1, 2), k = qkv.select(2, 1).transpose(1, 2),
                   v = qkv.select(2, 2).transpose(1, 2);
  at::Tensor mask = at::ones({B, L}, at::kBool);
  mask[1].narrow(0, 200, 100).fill_(false);  // padding at the end
  mask[1][17] = false;                       // and a hole
  for (int64_t half_window : {-1, 64, 3}) {
    const at::Tensor dense = dense_attention(q, k, v, mask, half_window).first;
    for (int64_t block : {0, 5, 64, 1000}) {
      const at::Tensor fused = blockwise_attention(q, k, v, mask, half_window, block);
      const double diff0 = (fused[0] - dense[0]).abs().max().item<double>();
      const double diff1 =
          (fused[1].narrow(1, 0, 200) - dense[1].narrow(1, 0, 200)).abs().max().item<double>();
      // v is ~N(0, 4): 5e-5 is float rounding over up to 60 key tiles; a wrong mask is ~0.1.
      EXPECT_LT(diff0, 5e-5) << "window " << half_window << " block " << block;
      EXPECT_LT(diff1, 5e-5) << "window " << half_window << " block " << block;
      EXPECT_FALSE(at::isnan(fused).any().item<bool>());
    }
  }
}

TEST(AttentionTest, GradientsFlowThroughAttentionWhenTraining) {
  // The fused kernel has no backward: with gradients wanted the tensor ops run, same values.
  at::manual_seed(8);
  const at::Tensor q = at::randn({1, 2, 40, 8}).requires_grad_(),
                   k = at::randn({1, 2, 40, 8}).requires_grad_(),
                   v = at::randn({1, 2, 40, 8}).requires_grad_();
  const at::Tensor mask = at::ones({1, 40}, at::kBool);
  const at::Tensor out = blockwise_attention(q, k, v, mask, 5, 7);
  ASSERT_TRUE(out.requires_grad());
  out.pow(2).sum().backward();
  EXPECT_GT(q.grad().abs().sum().item<float>(), 0.0f);
  EXPECT_GT(v.grad().abs().sum().item<float>(), 0.0f);
  at::NoGradGuard no_grad;
  EXPECT_TRUE(at::allclose(blockwise_attention(q, k, v, mask, 5, 7), out, 1e-5, 1e-6));
}

TEST(AttentionTest, TrainingGradientsEqualTheDenseFormula) {
  // The tensor-op path's blocks (default, and chosen) give the dense formula's gradients.
  const auto [q0, k0, v0, mask] = random_heads(9, 2, 150, 120);
  // Upstream gradient; zero on row 1's padding queries, whose output is unused.
  at::Tensor upstream = at::randn({2, 2, 150, 8});
  upstream[1].narrow(1, 120, 30).zero_();
  auto gradients = [&](const std::function<at::Tensor(at::Tensor, at::Tensor, at::Tensor)>& f) {
    const at::Tensor q = q0.clone().requires_grad_(), k = k0.clone().requires_grad_(),
                     v = v0.clone().requires_grad_();
    (f(q, k, v) * upstream).sum().backward();
    return std::vector<at::Tensor>{q.grad(), k.grad(), v.grad()};
  };
  for (int64_t half_window : {-1, 5, 40}) {
    const auto dense = gradients([&](at::Tensor q, at::Tensor k, at::Tensor v) {
      return dense_attention(q, k, v, mask, half_window).first;
    });
    for (int64_t block : {0, 7, 64}) {
      const auto blockwise = gradients([&](at::Tensor q, at::Tensor k, at::Tensor v) {
        return blockwise_attention(q, k, v, mask, half_window, block);
      });
      for (size_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(at::allclose(blockwise[i], dense[i], 1e-4, 1e-5))
            << "window " << half_window << " block " << block << " gradient "
            << "qkv"[i];
      }
    }
  }
}

TEST(AttentionTest, AQueryThatSeesNoKeyGetsZeros) {
  // Local window 1, keys 3.. are padding: query 8 sees only padding.
  const at::Tensor x = at::randn({1, 1, 9, 4});
  at::Tensor mask = at::zeros({1, 9}, at::kBool);
  mask[0].narrow(0, 0, 3).fill_(true);
  const at::Tensor out = blockwise_attention(x, x, x, mask, 1, 2);
  EXPECT_TRUE(at::equal(out[0][0][8], at::zeros({4})));
  EXPECT_GT(out[0][0][1].abs().sum().item<float>(), 0.0f);
}

TEST(AttentionTest, ProbabilitiesOfChosenRowsPerHeadAndAveraged) {
  const int64_t B = 2, heads = 3, L = 150;
  const auto [q, k, v, mask] = random_heads(5, heads, L, 120);
  // 70 rows for batch row 0 (more than one chunk of 64), 2 for row 1.
  std::vector<std::vector<int64_t>> rows(2);
  for (int64_t i = 0; i < 70; ++i) rows[0].push_back((i * 7) % L);
  rows[1] = {0, 119};
  for (int64_t half_window : {-1, 10}) {
    const at::Tensor probs = dense_attention(q, k, v, mask, half_window).second;  // [B,h,L,L]
    const at::Tensor per_head =
        attention_probabilities(q, k, mask, half_window, rows, /*per_head=*/true, false);
    ASSERT_EQ(per_head.sizes(), (std::vector<int64_t>{B, heads, 70, L}));
    for (int64_t b = 0; b < B; ++b) {
      const auto& r = rows[static_cast<size_t>(b)];
      const at::Tensor expected = probs[b].index_select(1, at::tensor(r, at::kLong));
      EXPECT_TRUE(at::allclose(per_head[b].narrow(1, 0, static_cast<int64_t>(r.size())), expected,
                               1e-5, 1e-6))
          << "window " << half_window << " row " << b;
    }
    EXPECT_TRUE(at::equal(per_head[1].narrow(1, 2, 68), at::zeros({heads, 68, L})))
        << "rows past a batch row's own queries stay zero";
    const at::Tensor mean =
        attention_probabilities(q, k, mask, half_window, rows, /*per_head=*/false, true);
    ASSERT_EQ(mean.sizes(), (std::vector<int64_t>{B, 1, 1, L}));
    EXPECT_TRUE(at::allclose(mean[0][0][0], per_head[0].mean(at::IntArrayRef{0, 1}), 1e-5, 1e-7));
    EXPECT_TRUE(at::allclose(mean[1][0][0], per_head[1].narrow(1, 0, 2).mean(at::IntArrayRef{0, 1}),
                             1e-5, 1e-7));
    EXPECT_NEAR(mean[1].sum().item<float>(), 1.0f, 1e-5);
    EXPECT_EQ(mean[1][0][0].narrow(0, 120, 30).abs().sum().item<float>(), 0.0f) << "padding";
  }
}

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

TEST(EncoderTest, ParameterNamesFollowHuggingFace) {
  const Encoder modern(small_config(Architecture::ModernBert));
  const auto& mw = modern.named_weights();
  EXPECT_EQ(mw.count("layers.0.attn_norm.weight"), 0u) << "layer 0 has no attn_norm";
  EXPECT_EQ(mw.count("layers.1.attn_norm.weight"), 1u);
  EXPECT_EQ(mw.at("layers.0.attn.Wqkv.weight").sizes(), (std::vector<int64_t>{48, 16}));
  EXPECT_EQ(mw.at("layers.1.mlp.Wi.weight").sizes(), (std::vector<int64_t>{48, 16}));
  EXPECT_EQ(mw.count("layers.1.mlp.Wi.bias"), 0u) << "bias-free by default";
  EXPECT_EQ(mw.count("embeddings.norm.bias"), 0u) << "bias-free LayerNorm";
  EXPECT_TRUE(modern.is_head_weight("head.dense.weight"));
  const Encoder bert(small_config(Architecture::Bert));
  EXPECT_EQ(bert.named_weights().at("embeddings.position_embeddings.weight").sizes(),
            (std::vector<int64_t>{128, 16}));
  EXPECT_EQ(bert.named_weights().count("encoder.layer.1.attention.output.LayerNorm.bias"), 1u);
  const Encoder gte(small_config(Architecture::Gte));
  EXPECT_EQ(gte.named_weights().at("encoder.layer.0.mlp.up_gate_proj.weight").sizes(),
            (std::vector<int64_t>{48, 16}));
  EXPECT_EQ(gte.named_weights().count("encoder.layer.0.mlp.up_gate_proj.bias"), 0u);
  EXPECT_EQ(gte.named_weights().at("encoder.layer.0.attention.qkv_proj.weight").sizes(),
            (std::vector<int64_t>{48, 16}));
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

}  // namespace
}  // namespace lmk
