#pragma once

// The small building blocks every architecture and the latent-attention pooling share:
// activations and gated linear units.

#include <ATen/core/Tensor.h>

#include <string>

namespace lmk {

// Whether autograd needs x's history (training): then only differentiable tensor ops run.
bool wants_grad(const at::Tensor& x);

// gelu (erf), gelu_new / gelu_pytorch_tanh (tanh), silu or relu of x.
at::Tensor apply_activation(const at::Tensor& x, const std::string& activation);

// Which half of a GLU projection goes through the activation.
enum class GluOrder {
  ActivateFirst,   // ModernBERT: act(first half) * second half
  ActivateSecond,  // GTE: first half (up) * act(second half (gate))
};
// Splits projected [..., 2I] into halves and gates one with the other.
at::Tensor gated_linear_unit(const at::Tensor& projected, const std::string& activation,
                             GluOrder order);

}  // namespace lmk
