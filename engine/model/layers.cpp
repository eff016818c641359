#include "engine/model/layers.h"

#include <ATen/ATen.h>

namespace lmk {

bool wants_grad(const at::Tensor& x) {
  return at::GradMode::is_enabled() && x.requires_grad();
}

at::Tensor apply_activation(const at::Tensor& x, const std::string& activation) {
  if (activation == "gelu") return at::gelu(x);
  if (activation == "gelu_new" || activation == "gelu_pytorch_tanh") return at::gelu(x, "tanh");
  if (activation == "silu") return at::silu(x);
  return at::relu(x);
}

at::Tensor gated_linear_unit(const at::Tensor& projected, const std::string& activation,
                             GluOrder order) {
  const auto halves = projected.chunk(2, -1);
  const at::Tensor& gate = order == GluOrder::ActivateFirst ? halves[0] : halves[1];
  const at::Tensor& up = order == GluOrder::ActivateFirst ? halves[1] : halves[0];
  // In place saves a pass when no gradient is wanted (relu's backward would need its output).
  if (!wants_grad(projected)) {
    return apply_activation(gate, activation).mul_(up);
  }
  return apply_activation(gate, activation) * up;
}

}  // namespace lmk
