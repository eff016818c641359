// Activation recomputation (engine/model/recompute.h): a custom autograd node that holds the
// piece's input and function, and in backward runs the piece again with gradients and calls a
// nested backward through it (as PyTorch's reentrant torch.utils.checkpoint does).
#include "engine/model/recompute.h"

#include <ATen/autocast_mode.h>
#include <ATen/core/grad_mode.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>

#include <memory>
#include <utility>

namespace lmk {
namespace {

using torch::autograd::variable_list;

// The autocast state of the devices lmk runs on, as the forward saw it: the backward runs on
// autograd's own thread, after the forward's autocast guard has ended, so the re-run layer must
// get it back (torch.utils.checkpoint does the same), or it computes in fp32 another forward
// than the one that produced the loss.
struct AutocastState {
  bool enabled[2] = {false, false};
  at::ScalarType dtype[2] = {at::kBFloat16, at::kBFloat16};
  static constexpr c10::DeviceType kDevices[2] = {c10::kCUDA, c10::kCPU};

  static AutocastState current() {
    AutocastState state;
    for (int i = 0; i < 2; ++i) {
      state.enabled[i] = at::autocast::is_autocast_enabled(kDevices[i]);
      state.dtype[i] = at::autocast::get_autocast_dtype(kDevices[i]);
    }
    return state;
  }
  void apply() const {
    for (int i = 0; i < 2; ++i) {
      at::autocast::set_autocast_enabled(kDevices[i], enabled[i]);
      at::autocast::set_autocast_dtype(kDevices[i], dtype[i]);
    }
  }
  bool any() const { return enabled[0] || enabled[1]; }
};

// Puts `state` in place while it lives, as a nested autocast region (its cache of cast weights
// cleared at the outermost end), and the previous state back.
class AutocastRegion {
 public:
  explicit AutocastRegion(const AutocastState& state)
      : previous_(AutocastState::current()), nested_(state.any()) {
    state.apply();
    if (nested_) at::autocast::increment_nesting();
  }
  ~AutocastRegion() {
    if (nested_ && at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    previous_.apply();
  }
  AutocastRegion(const AutocastRegion&) = delete;
  AutocastRegion& operator=(const AutocastRegion&) = delete;

 private:
  AutocastState previous_;
  bool nested_;
};

class RecomputeBackward : public torch::autograd::Node {
 public:
  RecomputeBackward(at::Tensor input, bool input_grad,
                    std::function<at::Tensor(const at::Tensor&)> run, AutocastState autocast)
      : input_(std::move(input)),
        input_grad_(input_grad),
        run_(std::move(run)),
        autocast_(autocast) {}

  variable_list apply(variable_list&& grads) override {
    at::Tensor x = input_.detach().requires_grad_(input_grad_);
    at::Tensor y;
    {
      const at::AutoGradMode enable(true);
      const AutocastRegion autocast(autocast_);  // the forward's
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
  AutocastState autocast_;
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
      new RecomputeBackward(input.detach(), input.requires_grad(), std::move(run),
                            AutocastState::current()),
      torch::autograd::deleteNode);
  node->set_next_edges(torch::autograd::collect_next_edges(input));
  torch::autograd::set_history(output, node);
  return output;
}

}  // namespace lmk
