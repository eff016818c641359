// The activations and gated linear units the architectures and latent pooling share.
#include "engine/model/layers.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

namespace lmk {
namespace {

TEST(GluTest, ModernBertActivatesTheFirstHalfGteTheSecond) {
  const at::Tensor projected = at::tensor({1.0f, 2.0f});              // I = 1: halves [1] and [2]
  const double gelu1 = 0.5 * (1 + std::erf(1 / std::sqrt(2.0)));      // 0.8413
  const double gelu2 = 2 * 0.5 * (1 + std::erf(2 / std::sqrt(2.0)));  // 1.9545
  EXPECT_NEAR(gated_linear_unit(projected, "gelu", GluOrder::ActivateFirst).item<float>(),
              gelu1 * 2, 1e-5);
  EXPECT_NEAR(gated_linear_unit(projected, "gelu", GluOrder::ActivateSecond).item<float>(),
              1 * gelu2, 1e-5);
}

}  // namespace
}  // namespace lmk
