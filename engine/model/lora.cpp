#include "engine/model/lora.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace lmk {

bool lora_targets(const std::string& name, const std::vector<std::string>& targets) {
  return std::any_of(targets.begin(), targets.end(), [&](const std::string& t) {
    if (t == kAllLinear || t == name) return true;
    return name.size() > t.size() && name.compare(name.size() - t.size(), t.size(), t) == 0 &&
           name[name.size() - t.size() - 1] == '.';
  });
}

at::Tensor LoraAdapter::delta(const at::Tensor& x) const {
  const at::Tensor in = dropout > 0 ? at::dropout(x, dropout, at::GradMode::is_enabled()) : x;
  return at::linear(at::linear(in, a), b) * scale;
}

at::Tensor LoraAdapter::merged(const at::Tensor& weight) const {
  const at::NoGradGuard no_grad;
  const at::Tensor product = at::matmul(b.to(at::kFloat), a.to(at::kFloat)).mul_(scale);
  return (weight.to(at::kFloat) + product.to(weight.device())).to(weight.scalar_type());
}

}  // namespace lmk
