// Activation recomputation (core/model/recompute.h): a custom autograd node that holds the
// piece's input and function, and in backward runs the piece again with gradients and calls a
// nested backward through it (as PyTorch's reentrant torch.utils.checkpoint does).
#include "core/model/recompute.h"

#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <memory>
#include <utility>

namespace lmk {
namespace {

using torch::autograd::variable_list;

class RecomputeBackward : public torch::autograd::Node {
 public:
  RecomputeBackward(at::Tensor input, bool input_grad,
                    std::function<at::Tensor(const at::Tensor&)> run)
      : input_(std::move(input)), input_grad_(input_grad), run_(std::move(run)) {}

  variable_list apply(variable_list&& grads) override {
    at::Tensor x = input_.detach().requires_grad_(input_grad_);
    at::Tensor y;
    {
      const at::AutoGradMode enable(true);
      y = run_(x);
    }
    // The parameters' gradients accumulate as in an ordinary backward; the input's is returned.
    torch::autograd::backward({y}, {grads.at(0)});
    return {input_grad_ ? x.grad() : at::Tensor()};
  }

  std::string name() const override { return "lmk::RecomputeBackward"; }
  void release_variables() override {
    input_.reset();
    run_ = nullptr;
  }

 private:
  at::Tensor input_;
  bool input_grad_;
  std::function<at::Tensor(const at::Tensor&)> run_;
};

}  // namespace

at::Tensor recompute_in_backward(const at::Tensor& input,
                                 std::function<at::Tensor(const at::Tensor&)> run) {
  if (!at::GradMode::is_enabled()) return run(input);
  at::Tensor output;
  {
    const at::NoGradGuard no_grad;
    output = run(input);
  }
  auto node = std::shared_ptr<RecomputeBackward>(
      new RecomputeBackward(input.detach(), input.requires_grad(), std::move(run)),
      torch::autograd::deleteNode);
  node->set_next_edges(torch::autograd::collect_next_edges(input));
  torch::autograd::set_history(output, node);
  return output;
}

}  // namespace lmk
