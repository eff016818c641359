// Attention and RoPE: the band of a local layer, padding, blockwise attention (the fused kernel's
// route and the tensor-op path) against the dense formula, gradients, and the probabilities
// AttentionCapture reads. The fused kernel's own product paths: attention_kernel_test.cpp.
#include "engine/model/attention.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/function.h>

#include <cmath>
#include <functional>
#include <vector>

#include "tests/support/dense_attention.h"

namespace lmk {
namespace {

using testing::dense_attention;

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

TEST(AttentionTest, GradientsFlowThroughAttentionWhenTraining) {
  // With gradients wanted the fused kernel keeps its log-sum-exp and has its own backward.
  at::manual_seed(8);
  const at::Tensor q = at::randn({1, 2, 40, 8}).requires_grad_(),
                   k = at::randn({1, 2, 40, 8}).requires_grad_(),
                   v = at::randn({1, 2, 40, 8}).requires_grad_();
  const at::Tensor mask = at::ones({1, 40}, at::kBool);
  const at::Tensor out = blockwise_attention(q, k, v, mask, 5, 7);
  ASSERT_TRUE(out.requires_grad());
  ASSERT_TRUE(out.grad_fn());
  EXPECT_EQ(out.grad_fn()->next_edges().at(0).function->name(), "lmk::FusedAttentionBackward");
  out.pow(2).sum().backward();
  EXPECT_GT(q.grad().abs().sum().item<float>(), 0.0f);
  EXPECT_GT(v.grad().abs().sum().item<float>(), 0.0f);
  at::NoGradGuard no_grad;
  EXPECT_TRUE(at::allclose(blockwise_attention(q, k, v, mask, 5, 7), out, 1e-5, 1e-6));
}

TEST(AttentionTest, TrainingGradientsEqualTheDenseFormula) {
  // The fused backward (float32) and the tensor-op path (here in double, as on other devices
  // and dtypes), for their tiles (default, and chosen), give the dense formula's gradients.
  for (const at::ScalarType dtype : {at::kFloat, at::kDouble}) {
    const auto [q0f, k0f, v0f, mask] = random_heads(9, 2, 150, 120);
    const at::Tensor q0 = q0f.to(dtype), k0 = k0f.to(dtype), v0 = v0f.to(dtype);
    // Upstream gradient; zero on row 1's padding queries, whose output is unused.
    at::Tensor upstream = at::randn({2, 2, 150, 8}).to(dtype);
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
              << "qkv"[i] << " dtype " << dtype;
        }
      }
    }
  }
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

// Causal attention (a decoder's): query i sees keys j <= i (and its band in a local layer), on
// every path -- the fused float32 kernel and the tensor ops (double), forward and gradients,
// the captured probabilities, and the unpadded per-row path -- as the dense formula with a
// lower-triangular mask; and it differs from bidirectional attention.
TEST(AttentionTest, CausalAttentionOnEveryPathIsTheLowerTriangularFormula) {
  for (const at::ScalarType dtype : {at::kFloat, at::kDouble}) {
    const auto [q0f, k0f, v0f, mask] = random_heads(21, 2, 150, 120);
    const at::Tensor q0 = q0f.to(dtype), k0 = k0f.to(dtype), v0 = v0f.to(dtype);
    at::Tensor upstream = at::randn({2, 2, 150, 8}).to(dtype);
    upstream[1].narrow(1, 120, 30).zero_();
    auto gradients = [&](const std::function<at::Tensor(at::Tensor, at::Tensor, at::Tensor)>& f) {
      const at::Tensor q = q0.clone().requires_grad_(), k = k0.clone().requires_grad_(),
                       v = v0.clone().requires_grad_();
      const at::Tensor out = f(q, k, v);
      (out * upstream).sum().backward();
      return std::vector<at::Tensor>{out.detach(), q.grad(), k.grad(), v.grad()};
    };
    for (int64_t half_window : {-1, 5, 40}) {
      const auto dense = gradients([&](at::Tensor q, at::Tensor k, at::Tensor v) {
        return dense_attention(q, k, v, mask, half_window, /*causal=*/true).first;
      });
      const at::Tensor both_ways = dense_attention(q0, k0, v0, mask, half_window).first;
      EXPECT_GT((both_ways[0] - dense[0][0]).abs().max().item<double>(), 0.1);
      for (int64_t block : {0, 7, 64}) {
        const auto blockwise = gradients([&](at::Tensor q, at::Tensor k, at::Tensor v) {
          return blockwise_attention(q, k, v, mask, half_window, block, /*causal=*/true);
        });
        // Row 1's padding queries (120..149) may see no key in a band: their output is unused.
        EXPECT_TRUE(at::allclose(blockwise[0][0], dense[0][0], 1e-5, 1e-5));
        EXPECT_TRUE(at::allclose(blockwise[0][1].narrow(1, 0, 120), dense[0][1].narrow(1, 0, 120),
                                 1e-5, 1e-5));
        for (size_t i = 1; i < 4; ++i) {
          EXPECT_TRUE(at::allclose(blockwise[i], dense[i], 1e-4, 1e-5))
              << "window " << half_window << " block " << block << " "
              << (i == 0 ? "output" : std::string("gradient ") + "qkv"[i - 1]) << " dtype "
              << dtype;
        }
      }
    }
  }
  // The captured probabilities of chosen rows.
  const auto [q, k, v, mask] = random_heads(22, 3, 150, 120);
  const std::vector<std::vector<int64_t>> rows = {{0, 1, 77, 149}, {0, 60, 119}};
  for (int64_t half_window : {-1, 10}) {
    const at::Tensor probs = dense_attention(q, k, v, mask, half_window, true).second;
    const at::Tensor captured =
        attention_probabilities(q, k, mask, half_window, rows, /*per_head=*/true, false, true);
    for (int64_t b = 0; b < 2; ++b) {
      const auto& r = rows[static_cast<size_t>(b)];
      const auto n = static_cast<int64_t>(r.size());
      EXPECT_TRUE(at::allclose(captured[b].narrow(1, 0, n),
                               probs[b].index_select(1, at::tensor(r, at::kLong)), 1e-5, 1e-6))
          << "window " << half_window << " row " << b;
    }
    EXPECT_EQ(captured[0][0][0].narrow(0, 1, 149).abs().sum().item<float>(), 0.0f)
        << "query 0 sees itself only";
  }
  // Unpadded (each row on its own, every key valid): the padded batch's real tokens.
  const auto batch = unpad_batch(mask);
  ASSERT_TRUE(batch.has_value());
  auto tokens_first = [&](const at::Tensor& t) {  // [B, h, L, d] -> [total, h, d]
    return unpad(t.transpose(1, 2), *batch);
  };
  for (int64_t half_window : {-1, 5}) {
    const at::Tensor padded = blockwise_attention(q, k, v, mask, half_window, 0, true);
    const at::Tensor unpadded = varlen_attention(tokens_first(q), tokens_first(k), tokens_first(v),
                                                 *batch, half_window, 0, true);
    EXPECT_TRUE(at::allclose(unpadded, tokens_first(padded), 1e-5, 1e-6))
        << "window " << half_window;
  }
}

// The tensor-op path in bf16 (a CUDA run under autocast: local layers, padded causal batches,
// head sizes FlashAttention does not take): it threw ("value cannot be converted to type
// BFloat16 without overflow": the float "minus infinity" of masked scores). Scores are now fp32;
// the result is the dense formula within bf16's precision, causal or not, global or banded.
TEST(AttentionTest, TheTensorOpPathRunsInBfloat16) {
  const auto [q, k, v, mask] = random_heads(31, 2, 70, 50);
  for (const bool causal : {false, true})
    for (int64_t half_window : {-1, 6}) {
      const at::Tensor dense = dense_attention(q, k, v, mask, half_window, causal).first;
      const at::Tensor half =
          blockwise_attention(q.to(at::kBFloat16), k.to(at::kBFloat16), v.to(at::kBFloat16), mask,
                              half_window, 16, causal);
      EXPECT_EQ(half.scalar_type(), at::kBFloat16);
      EXPECT_TRUE(at::allclose(half[0].to(at::kFloat), dense[0], 3e-2, 3e-2))
          << "window " << half_window << " causal " << causal << " max diff "
          << (half[0].to(at::kFloat) - dense[0]).abs().max().item<float>();
      EXPECT_FALSE(at::isnan(half).any().item<bool>());
    }
}

// LibTorch's masked SDPA kernels differ on a row whose mask allows no key (a padded batch row
// of an empty text): the CPU's gives zeros in 2.11, CUDA's memory-efficient kernel has given
// NaN. masked_sdpa (a global layer on CUDA over a padded batch) lets such a row see its first key
// instead, so every kernel gets a defined row (its output is padding, never read).
TEST(AttentionTest, AMaskedRowWithoutKeysSeesItsFirstKey) {
  auto [q, k, v, mask] = random_heads(32, 2, 12, 0);  // row 1: no key at all
  const at::Tensor out = masked_sdpa(q, k, v, mask);
  EXPECT_FALSE(at::isnan(out).any().item<bool>());
  EXPECT_TRUE(at::allclose(out[0], dense_attention(q, k, v, mask, -1).first[0], 1e-5, 1e-5));
  // Row 1 attends to key 0 alone: every query's output is v's first row.
  EXPECT_TRUE(at::allclose(out[1], v[1].narrow(1, 0, 1).expand_as(v[1]), 1e-5, 1e-6));
  EXPECT_TRUE(mask[1].logical_not().all().item<bool>()) << "the caller's mask is left alone";
}

}  // namespace
}  // namespace lmk
