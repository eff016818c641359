// Activation recomputation (engine/model/recompute.cpp): gradients with recomputation equal the
// ordinary backward's, for the input and every parameter the piece reads; the piece runs once
// without gradients in the forward and once more, with them, in the backward.
#include "engine/model/recompute.h"

#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/function.h>

#include <functional>
#include <vector>

namespace lmk {
namespace {

// A small two-layer piece reading two parameters: tanh(x W1ᵀ) W2ᵀ.
struct Piece {
  at::Tensor w1 = at::randn({5, 4}).requires_grad_(), w2 = at::randn({4, 5}).requires_grad_();
  int calls = 0;
  std::vector<bool> grad_mode_at_call;
  at::Tensor operator()(const at::Tensor& x) {
    ++calls;
    grad_mode_at_call.push_back(at::GradMode::is_enabled());
    return at::matmul(at::tanh(at::matmul(x, w1.t())), w2.t());
  }
  std::function<at::Tensor(const at::Tensor&)> run() {
    return [this](const at::Tensor& x) { return (*this)(x); };
  }
};

// Two pieces in a row (as layers are), with and without recomputation, the same loss: the
// same output and the same gradients for the input and all four parameters.
TEST(RecomputeTest, GradientsEqualTheOrdinaryBackward) {
  at::manual_seed(3);
  Piece first, second;
  const at::Tensor x0 = at::randn({3, 6, 4}), upstream = at::randn({3, 6, 4});
  std::vector<std::vector<at::Tensor>> grads(2);
  std::vector<at::Tensor> outputs(2);
  for (int recompute = 0; recompute < 2; ++recompute) {
    const at::Tensor x = x0.clone().requires_grad_();
    at::Tensor y;
    if (recompute == 1) {
      y = recompute_in_backward(recompute_in_backward(x, first.run()), second.run());
    } else {
      y = second(first(x));
    }
    (y * upstream).sum().backward();
    outputs[recompute] = y.detach();
    ASSERT_TRUE(x.grad().defined());
    grads[recompute].push_back(x.grad());
    for (const at::Tensor& w : {first.w1, first.w2, second.w1, second.w2}) {
      ASSERT_TRUE(w.grad().defined());
      grads[recompute].push_back(w.grad().clone());
      w.mutable_grad().zero_();
    }
  }
  EXPECT_TRUE(at::allclose(outputs[0], outputs[1], 1e-6, 1e-6));
  for (size_t i = 0; i < grads[0].size(); ++i) {
    EXPECT_TRUE(at::allclose(grads[0][i], grads[1][i], 1e-5, 1e-6))
        << "gradient " << i << " max diff "
        << (grads[0][i] - grads[1][i]).abs().max().item<float>();
    EXPECT_GT(grads[0][i].abs().sum().item<float>(), 0.0f) << i;
  }
}

// The forward runs the piece once without gradients (nothing kept) and the backward once more
// with them; the result's node is the recomputation's. Without grad mode: the piece, once.
TEST(RecomputeTest, RunsThePieceAgainOnlyInTheBackward) {
  at::manual_seed(4);
  Piece piece;
  const at::Tensor x = at::randn({2, 4}).requires_grad_();
  const at::Tensor y = recompute_in_backward(x, piece.run());
  EXPECT_EQ(piece.calls, 1);
  EXPECT_EQ(piece.grad_mode_at_call, std::vector<bool>{false});
  ASSERT_TRUE(y.grad_fn());
  EXPECT_EQ(y.grad_fn()->name(), "lmk::RecomputeBackward");
  EXPECT_TRUE(y.requires_grad());
  y.sum().backward();
  EXPECT_EQ(piece.calls, 2);
  EXPECT_EQ(piece.grad_mode_at_call, (std::vector<bool>{false, true}));

  Piece plain;
  const at::NoGradGuard no_grad;
  const at::Tensor z = recompute_in_backward(x, plain.run());
  EXPECT_EQ(plain.calls, 1);
  EXPECT_FALSE(z.requires_grad());
  EXPECT_TRUE(at::allclose(z, plain(x)));
}

// An input that needs no gradient (token ids' embeddings frozen, say): the parameters still get
// the ordinary backward's gradients, and the input none.
TEST(RecomputeTest, AnInputWithoutGradientStillTrainsTheParameters) {
  at::manual_seed(5);
  Piece piece;
  const at::Tensor x = at::randn({3, 4});
  recompute_in_backward(x, piece.run()).pow(2).sum().backward();
  const at::Tensor w1 = piece.w1.grad().clone(), w2 = piece.w2.grad().clone();
  piece.w1.mutable_grad().zero_();
  piece.w2.mutable_grad().zero_();
  piece(x).pow(2).sum().backward();
  EXPECT_TRUE(at::allclose(w1, piece.w1.grad(), 1e-5, 1e-6));
  EXPECT_TRUE(at::allclose(w2, piece.w2.grad(), 1e-5, 1e-6));
  EXPECT_FALSE(x.grad().defined());
}

// Under bf16 autocast (CUDA's, or here the CPU's, which works alike) the forward runs inside the
// guard and the backward after it, on autograd's thread: the re-run piece must compute as the
// forward did (it ran in fp32: other gradients than those of the forward that gave the loss).
TEST(RecomputeTest, TheRerunKeepsTheForwardsAutocast) {
  at::manual_seed(5);
  Piece piece;
  const at::Tensor x0 = at::randn({3, 6, 4}), upstream = at::randn({3, 6, 4});
  std::vector<std::vector<at::Tensor>> grads(2);
  for (int recompute = 0; recompute < 2; ++recompute) {
    const at::Tensor x = x0.clone().requires_grad_();
    at::Tensor y;
    at::autocast::set_autocast_dtype(c10::kCPU, at::kBFloat16);
    at::autocast::set_autocast_enabled(c10::kCPU, true);
    at::autocast::increment_nesting();
    y = recompute == 1 ? recompute_in_backward(x, piece.run()) : piece(x);
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(c10::kCPU, false);
    EXPECT_EQ(y.scalar_type(), at::kBFloat16);
    (y.to(at::kFloat) * upstream).sum().backward();
    for (const at::Tensor& t : {x, piece.w1, piece.w2}) {
      grads[recompute].push_back(t.grad().clone());
      t.mutable_grad().zero_();
    }
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(c10::kCPU));
  for (size_t i = 0; i < grads[0].size(); ++i)
    EXPECT_TRUE(at::allclose(grads[0][i], grads[1][i], 1e-6, 1e-7))
        << "gradient " << i << " max diff "
        << (grads[0][i] - grads[1][i]).abs().max().item<float>();
}

}  // namespace
}  // namespace lmk
