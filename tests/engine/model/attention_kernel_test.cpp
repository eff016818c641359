// The fused CPU attention kernel (engine/model/attention_kernel.cpp): its three product paths
// (micro-kernel, BLAS, portable) forward and backward against the dense formula, on the
// encoder's strided layout, through blockwise_attention; and fused_attention itself with its own
// scale, tiles and per-query log-sum-exp.
#include "engine/model/attention_kernel.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "engine/model/attention.h"
#include "tests/support/dense_attention.h"

namespace lmk {
namespace {

using testing::dense_attention;

// The kernels' product paths: their own micro-kernel (head sizes that are multiples of 16, with
// AVX2), BLAS sgemm, and sgemm with the softmax in plain C++ (a CPU without AVX2); each test of
// the fused kernel runs on all three, then restores the default.
struct ProductsCase {
  AttentionProducts products;
  const char* name;
};
const ProductsCase kProducts[] = {{AttentionProducts::MicroKernel, "micro-kernel"},
                                  {AttentionProducts::Blas, "BLAS"},
                                  {AttentionProducts::Portable, "portable"}};
struct RestoreProducts {
  ~RestoreProducts() { set_attention_products(AttentionProducts::MicroKernel); }
};

TEST(AttentionTest, FusedKernelMatchesTheDenseFormulaAtHeadSize64) {
  // The encoder's layout: q, k, v are [B, L, heads, d] in memory, seen as [B, heads, L, d];
  // head size 64 (every preset) and 48 (the micro-kernel's 16 columns three times).
  const RestoreProducts restore;
  for (const int64_t d : {64, 48}) {
    at::manual_seed(4);
    const int64_t B = 2, heads = 2, L = 300;
    const at::Tensor qkv = at::randn({B, L, 3, heads, d}) * 2;
    const at::Tensor q = qkv.select(2, 0).transpose(1, 2), k = qkv.select(2, 1).transpose(1, 2),
                     v = qkv.select(2, 2).transpose(1, 2);
    at::Tensor mask = at::ones({B, L}, at::kBool);
    mask[1].narrow(0, 200, 100).fill_(false);  // padding at the end
    mask[1][17] = false;                       // and a hole
    for (int64_t half_window : {-1, 64, 3}) {
      const at::Tensor dense = dense_attention(q, k, v, mask, half_window).first;
      for (const ProductsCase& products : kProducts) {
        set_attention_products(products.products);
        for (int64_t block : {0, 5, 64, 1000}) {
          const at::Tensor fused = blockwise_attention(q, k, v, mask, half_window, block);
          const double diff0 = (fused[0] - dense[0]).abs().max().item<double>();
          const double diff1 =
              (fused[1].narrow(1, 0, 200) - dense[1].narrow(1, 0, 200)).abs().max().item<double>();
          // v is ~N(0, 4): 5e-5 is float rounding over up to 60 key tiles; a wrong mask is ~0.1.
          EXPECT_LT(diff0, 5e-5) << "window " << half_window << " block " << block << " d " << d
                                 << " " << products.name;
          EXPECT_LT(diff1, 5e-5) << "window " << half_window << " block " << block << " d " << d
                                 << " " << products.name;
          EXPECT_FALSE(at::isnan(fused).any().item<bool>());
        }
      }
    }
  }
}

// The fused backward on the encoder's layout (q, k, v strided views of one [B, L, 3, heads, d]
// projection), head size 64, a padding tail and a hole, global and local layers, tiles that do
// and do not divide the length: the dense formula's gradients (in double) within float
// rounding; a wrong mask or a missed tile is off by ~0.1.
TEST(AttentionTest, FusedBackwardMatchesTheDenseFormulaOnTheEncodersLayout) {
  at::manual_seed(12);
  const int64_t B = 2, heads = 2, L = 300, d = 64;
  const at::Tensor qkv0 = at::randn({B, L, 3, heads, d});
  at::Tensor mask = at::ones({B, L}, at::kBool);
  mask[1].narrow(0, 200, 100).fill_(false);
  mask[1][17] = false;
  at::Tensor upstream = at::randn({B, heads, L, d});
  upstream[1].narrow(1, 200, 100).zero_();  // padding queries' outputs are unused
  auto gradient = [&](const at::Tensor& qkv_in, int64_t half_window, int64_t block, bool dense) {
    const at::Tensor qkv = qkv_in.clone().requires_grad_();
    const at::Tensor q = qkv.select(2, 0).transpose(1, 2), k = qkv.select(2, 1).transpose(1, 2),
                     v = qkv.select(2, 2).transpose(1, 2);
    const at::Tensor out = dense ? dense_attention(q, k, v, mask, half_window).first
                                 : blockwise_attention(q, k, v, mask, half_window, block);
    (out * upstream.to(out.scalar_type())).sum().backward();
    return qkv.grad().to(at::kDouble);
  };
  const RestoreProducts restore;
  for (int64_t half_window : {-1, 64, 3}) {
    const at::Tensor reference = gradient(qkv0.to(at::kDouble), half_window, 0, true);
    for (const ProductsCase& products : kProducts) {
      set_attention_products(products.products);
      for (int64_t block : {0, 5, 64, 1000}) {
        const at::Tensor fused = gradient(qkv0, half_window, block, false);
        const double diff = (fused - reference).abs().max().item<double>();
        EXPECT_LT(diff, 1e-4) << "window " << half_window << " block " << block << " "
                              << products.name;
        EXPECT_GT(reference.abs().max().item<double>(), 0.1);
      }
    }
  }
}

// Causal attention on the encoder's layout at head size 64, each product path, tiles that do
// and do not divide the length, global and local: forward and gradients of the dense formula
// with a lower-triangular mask (the kernel skips the tiles above the diagonal and masks the
// diagonal tiles).
TEST(AttentionKernelTest, CausalAttentionIsTheLowerTriangularFormula) {
  at::manual_seed(14);
  const int64_t B = 2, heads = 2, L = 300, d = 64;
  const at::Tensor qkv0 = at::randn({B, L, 3, heads, d});
  at::Tensor mask = at::ones({B, L}, at::kBool);
  mask[1].narrow(0, 200, 100).fill_(false);
  mask[1][17] = false;
  at::Tensor upstream = at::randn({B, heads, L, d});
  upstream[1].narrow(1, 200, 100).zero_();
  auto run = [&](const at::Tensor& qkv_in, int64_t half_window, int64_t block, bool dense) {
    const at::Tensor qkv = qkv_in.clone().requires_grad_();
    const at::Tensor q = qkv.select(2, 0).transpose(1, 2), k = qkv.select(2, 1).transpose(1, 2),
                     v = qkv.select(2, 2).transpose(1, 2);
    const at::Tensor out = dense ? dense_attention(q, k, v, mask, half_window, true).first
                                 : blockwise_attention(q, k, v, mask, half_window, block, true);
    (out * upstream.to(out.scalar_type())).sum().backward();
    return std::make_pair(out.detach().to(at::kDouble), qkv.grad().to(at::kDouble));
  };
  const RestoreProducts restore;
  for (int64_t half_window : {-1, 64, 3}) {
    const auto reference = run(qkv0.to(at::kDouble), half_window, 0, true);
    for (const ProductsCase& products : kProducts) {
      set_attention_products(products.products);
      for (int64_t block : {0, 5, 64, 1000}) {
        const auto fused = run(qkv0, half_window, block, false);
        EXPECT_LT((fused.first[0] - reference.first[0]).abs().max().item<double>(), 5e-5)
            << "window " << half_window << " block " << block << " " << products.name;
        EXPECT_LT((fused.first[1].narrow(1, 0, 200) - reference.first[1].narrow(1, 0, 200))
                      .abs()
                      .max()
                      .item<double>(),
                  5e-5)
            << "window " << half_window << " block " << block << " " << products.name;
        EXPECT_LT((fused.second - reference.second).abs().max().item<double>(), 1e-4)
            << "window " << half_window << " block " << block << " " << products.name;
      }
    }
  }
}

TEST(AttentionTest, AQueryThatSeesNoKeyAddsNoGradient) {
  // Query 8 sees only padding (window 1, keys 3.. padding): its output is zeros whatever its
  // upstream gradient, so the gradients are those of the other queries alone, and finite.
  // Head size 4 (BLAS products) and 16 (the micro-kernel's).
  for (const int64_t d : {4, 16}) {
    at::manual_seed(13);
    const at::Tensor x0 = at::randn({1, 1, 9, d});
    at::Tensor mask = at::zeros({1, 9}, at::kBool);
    mask[0].narrow(0, 0, 3).fill_(true);
    auto gradient = [&](bool upstream_on_8) {
      const at::Tensor x = x0.clone().requires_grad_();
      at::Tensor upstream = at::ones({1, 1, 9, d});
      if (!upstream_on_8) upstream[0][0][8].zero_();
      (blockwise_attention(x, x, x, mask, 1, 2) * upstream).sum().backward();
      return x.grad();
    };
    const at::Tensor with = gradient(true), without = gradient(false);
    EXPECT_FALSE(at::isnan(with).any().item<bool>()) << d;
    EXPECT_TRUE(at::allclose(with, without)) << d;
    EXPECT_GT(with.abs().sum().item<float>(), 0.0f) << d;
  }
}

TEST(AttentionTest, AQueryThatSeesNoKeyGetsZeros) {
  // Local window 1, keys 3.. are padding: query 8 sees only padding (head sizes of both
  // product paths).
  for (const int64_t d : {4, 16}) {
    const at::Tensor x = at::randn({1, 1, 9, d});
    at::Tensor mask = at::zeros({1, 9}, at::kBool);
    mask[0].narrow(0, 0, 3).fill_(true);
    const at::Tensor out = blockwise_attention(x, x, x, mask, 1, 2);
    EXPECT_TRUE(at::equal(out[0][0][8], at::zeros({d}))) << d;
    EXPECT_FALSE(at::isnan(out).any().item<bool>()) << d;
    EXPECT_GT(out[0][0][1].abs().sum().item<float>(), 0.0f) << d;
  }
}

HeadsView heads_view(const at::Tensor& t) {
  return {t.data_ptr<float>(), t.stride(0), t.stride(1), t.stride(2)};
}

// fused_attention called directly: a scale that is not 1/sqrt(d), query and key tiles of their
// own sizes, q, k, v strided as the encoder's [B, L, heads, d] projection; out and each query's
// log-sum-exp against the formula in double. Row 1 is padding from key 15 on and has a hole at
// 3, so in the local layer (keys |i - j| <= 2) queries 17..22 of row 1 see no key: zeros, and a
// log-sum-exp of minus infinity. Head size 16 (the micro-kernel's, with AVX2) and 5 (BLAS).
TEST(AttentionKernelTest, FusedAttentionGivesTheFormulaAndEachQuerysLogSumExp) {
  const RestoreProducts restore;
  const int64_t B = 2, heads = 2, L = 23;
  const float scale = 0.37f;
  at::Tensor mask = at::ones({B, L}, at::kBool);
  mask[1].narrow(0, 15, L - 15).fill_(false);
  mask[1][3] = false;
  for (const int64_t d : {16, 5}) {
    at::manual_seed(21);
    const at::Tensor qkv = at::randn({B, L, 3, heads, d});
    const at::Tensor q = qkv.select(2, 0).transpose(1, 2), k = qkv.select(2, 1).transpose(1, 2),
                     v = qkv.select(2, 2).transpose(1, 2);  // [B, heads, L, d], strided
    for (const int64_t half_window : {-1, 2}) {
      // The formula in double.
      const at::Tensor scores =
          at::matmul(q.to(at::kDouble), k.to(at::kDouble).transpose(-1, -2)) * scale;
      at::Tensor allowed = mask.view({B, 1, 1, L}).expand({B, heads, L, L});
      if (half_window >= 0) {
        const at::Tensor i = at::arange(L).view({-1, 1}), j = at::arange(L).view({1, -1});
        allowed = allowed.logical_and((i - j).abs().le(half_window));
      }
      const at::Tensor lse_expected =
          scores.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity())
              .logsumexp(-1);  // [B, heads, L]
      const at::Tensor probs =
          at::where(allowed, at::exp(scores - lse_expected.unsqueeze(-1)), at::zeros_like(scores));
      const at::Tensor out_expected = at::matmul(probs, v.to(at::kDouble));
      const at::Tensor sees_nothing = allowed.logical_not().all(-1);  // [B, heads, L]
      EXPECT_EQ(sees_nothing.sum().item<int64_t>(), half_window < 0 ? 0 : heads * 6);
      for (const ProductsCase& products : kProducts) {
        set_attention_products(products.products);
        for (const auto& [query_tile, key_tile] :
             std::vector<std::pair<int64_t, int64_t>>{{64, 256}, {3, 5}, {1, 1}, {7, 2}}) {
          const at::Tensor out = at::full({B, heads, L, d}, 7.0f);  // every value overwritten
          const at::Tensor lse = at::full({B, heads, L}, 7.0f);
          FusedAttentionProblem problem;
          problem.batch = B, problem.heads = heads, problem.length = L, problem.head_dim = d;
          problem.q = heads_view(q), problem.k = heads_view(k), problem.v = heads_view(v);
          problem.out = heads_view(out);
          const at::Tensor key_mask = mask.contiguous();
          problem.key_mask = key_mask.data_ptr<bool>();
          problem.half_window = half_window;
          problem.scale = scale;
          problem.lse = lse.data_ptr<float>();
          fused_attention(problem, query_tile, key_tile);
          const std::string where = std::string(products.name) + " d " + std::to_string(d) +
                                    " window " + std::to_string(half_window) + " tiles " +
                                    std::to_string(query_tile) + "/" + std::to_string(key_tile);
          EXPECT_LT((out.to(at::kDouble) - out_expected).abs().max().item<double>(), 1e-5) << where;
          const at::Tensor seen = sees_nothing.logical_not();
          EXPECT_LT(
              (lse.to(at::kDouble) - lse_expected).masked_select(seen).abs().max().item<double>(),
              1e-5)
              << where;
          EXPECT_TRUE(at::isinf(lse.masked_select(sees_nothing)).all().item<bool>()) << where;
          EXPECT_TRUE((lse.masked_select(sees_nothing) < 0).all().item<bool>()) << where;
          EXPECT_EQ(out.masked_select(sees_nothing.unsqueeze(-1).expand_as(out))
                        .abs()
                        .sum()
                        .item<float>(),
                    0.0f)
              << where;
        }
      }
    }
  }
}

// Which products a head size gets: the micro-kernel only when chosen, on a CPU with AVX2 and FMA,
// for a head size that is a multiple of 16; BLAS otherwise (Portable's products are sgemm too).
TEST(AttentionKernelTest, TheMicroKernelOnlyWhereItApplies) {
  const RestoreProducts restore;
  set_attention_products(AttentionProducts::MicroKernel);
#if defined(__x86_64__)
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  const bool avx2 = false;
#endif
  EXPECT_EQ(attention_products(64),
            avx2 ? AttentionProducts::MicroKernel : AttentionProducts::Blas);
  EXPECT_EQ(attention_products(48),
            avx2 ? AttentionProducts::MicroKernel : AttentionProducts::Blas);
  EXPECT_EQ(attention_products(24), AttentionProducts::Blas) << "not a multiple of 16";
  EXPECT_EQ(attention_products(5), AttentionProducts::Blas);
  set_attention_products(AttentionProducts::Blas);
  EXPECT_EQ(attention_products(64), AttentionProducts::Blas);
  set_attention_products(AttentionProducts::Portable);
  EXPECT_EQ(attention_products(64), AttentionProducts::Blas);
}

}  // namespace
}  // namespace lmk
