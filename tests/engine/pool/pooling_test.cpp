#include "engine/pool/pooling.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "core/util/error.h"

namespace lmk {
namespace {

// hidden[b, p, :] = (b * 100 + p) in every channel, so pooled values are easy to read.
at::Tensor ramp(int64_t B, int64_t L, int64_t H) {
  at::Tensor h = at::zeros({B, L, H});
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t p = 0; p < L; ++p) h[b][p].fill_(static_cast<double>(b * 100 + p));
  }
  return h;
}

TEST(PoolingTest, EveryKind) {
  const at::Tensor hidden = ramp(2, 6, 3);
  at::Tensor mask = at::ones({2, 6}, at::kLong);
  mask[1].narrow(0, 4, 2).fill_(0);  // row 1 has 4 tokens
  const std::vector<std::vector<int32_t>> positions = {{1, 3, 5}, {}};
  auto value = [&](Pooling p, int64_t row, PoolingOptions o = {}) {
    return pool(p, hidden, mask, positions, o)[row][0].item<float>();
  };
  EXPECT_FLOAT_EQ(value(Pooling::Cls, 1), 100);
  EXPECT_FLOAT_EQ(value(Pooling::Mean, 0), 2.5f);
  EXPECT_FLOAT_EQ(value(Pooling::Mean, 1), 101.5f) << "padding excluded";
  EXPECT_FLOAT_EQ(value(Pooling::Landmark, 0), 3.0f) << "mean of positions 1, 3, 5";
  EXPECT_FLOAT_EQ(value(Pooling::Landmark, 1), 101.5f) << "no landmark: mean pooling";
  EXPECT_FLOAT_EQ(value(Pooling::MultiCls, 0), 3.0f);
  EXPECT_FLOAT_EQ(value(Pooling::Last, 0), 5);
  EXPECT_FLOAT_EQ(value(Pooling::Last, 1), 103) << "last real token";
  PoolingOptions every2;
  every2.every_k = 2;
  EXPECT_FLOAT_EQ(value(Pooling::MeanEveryK, 0, every2), 3.0f) << "positions 1, 3, 5";
  EXPECT_FLOAT_EQ(value(Pooling::MeanEveryK, 1, every2), 102.0f) << "positions 1, 3 (5 is padding)";
  PoolingOptions normalized;
  normalized.normalize = true;
  const at::Tensor unit = pool(Pooling::Mean, hidden, mask, positions, normalized);
  EXPECT_TRUE(at::allclose(unit.norm(2, -1), at::ones({2})));
}

TEST(PoolingTest, NamesAndErrors) {
  for (const char* name : {"cls", "mean", "lmk", "multicls", "latent", "last", "mean_every_k"}) {
    EXPECT_STREQ(pooling_name(parse_pooling(name)), name);
  }
  EXPECT_THROW(parse_pooling("max"), InputError);
  const at::Tensor hidden = ramp(1, 4, 2), mask = at::ones({1, 4});
  EXPECT_THROW(pool(Pooling::Landmark, hidden, mask, {{7}}), InputError);
  EXPECT_THROW(pool(Pooling::Landmark, hidden, mask, {}), InputError);
  EXPECT_THROW(pool(Pooling::Latent, hidden, mask, {{}}), InputError);
}

}  // namespace
}  // namespace lmk
