#include "engine/train/losses.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cmath>

namespace lmk {
namespace {

TEST(InfoNceTest, HandComputedWithInBatchAndHardNegatives) {
  // 2 queries, group 2 (positive, hard negative): passages rows 0,1 for q0 and 2,3 for q1.
  const at::Tensor q = at::tensor({1.0f, 0.0f, 0.0f, 1.0f}).view({2, 2});
  const at::Tensor p = at::tensor({1.0f, 0.0f,    // q0's positive
                                   0.0f, 1.0f,    // q0's negative
                                   0.0f, 1.0f,    // q1's positive
                                   -1.0f, 0.0f})  // q1's negative
                           .view({4, 2});
  const double t = 0.5;
  // q0 scores / t: [2, 0, 0, -2]; target column 0. q1: [0, 2, 2, 0]; target column 2.
  const double l0 = -2 + std::log(std::exp(2) + 1 + 1 + std::exp(-2));
  const double l1 = -2 + std::log(1 + std::exp(2) + std::exp(2) + 1);
  EXPECT_NEAR(info_nce_loss(q, p, 2, t).item<double>(), (l0 + l1) / 2, 1e-5);
  // The positive of query 1 is column 2, not column 1: swapping the targets changes the loss.
  const at::Tensor swapped = at::cat({p.narrow(0, 2, 2), p.narrow(0, 0, 2)});
  EXPECT_GT(info_nce_loss(q, swapped, 2, t).item<double>(), (l0 + l1) / 2 + 1);
}

TEST(InfoNceTest, GradientsPullThePositiveCloser) {
  at::manual_seed(1);
  const at::Tensor q = at::randn({3, 4}).requires_grad_();
  const at::Tensor p = at::randn({6, 4});
  info_nce_loss(q, p, 2, 0.1).backward();
  // Moving each query along -grad raises its positive's score relative to the others.
  const at::Tensor moved = (q - 0.01 * q.grad()).detach();
  EXPECT_LT(info_nce_loss(moved, p, 2, 0.1).item<double>(),
            info_nce_loss(q.detach(), p, 2, 0.1).item<double>());
}

TEST(DistillationTest, SoftTargetsOverTheQuerysOwnGroup) {
  const at::Tensor q = at::tensor({1.0f, 0.0f}).view({1, 2});
  const at::Tensor p = at::tensor({1.0f, 0.0f, 0.0f, 1.0f}).view({2, 2});
  const at::Tensor teacher = at::tensor({0.0, std::log(3.0)}).view({1, 2});  // targets 1/4, 3/4
  // Student scores / t (t = 1): [1, 0]; log-softmax: [1 - lse, -lse], lse = log(e + 1).
  const double lse = std::log(std::exp(1.0) + 1);
  const double expected = -(0.25 * (1 - lse) + 0.75 * (-lse));
  EXPECT_NEAR(distillation_loss(q, p, 2, teacher, 1.0).item<double>(), expected, 1e-6);
}

TEST(ScheduleTest, WarmupThenLinearDecay) {
  // 10 steps, 2 warm-up: 0.5, 1.0, then (10 - s) / 8.
  EXPECT_DOUBLE_EQ(warmup_linear_lr(0, 10, 2, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(warmup_linear_lr(1, 10, 2, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(warmup_linear_lr(2, 10, 2, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(warmup_linear_lr(6, 10, 2, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(warmup_linear_lr(9, 10, 2, 1.0), 0.125);
  EXPECT_DOUBLE_EQ(warmup_linear_lr(5, 10, 0, 2.0), 1.0);
}

}  // namespace
}  // namespace lmk
