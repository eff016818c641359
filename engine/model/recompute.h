#pragma once

// Activation recomputation (gradient checkpointing) for one piece of a forward pass: the
// forward runs without keeping the piece's intermediate tensors, and its backward runs the piece
// again with gradients before going through it. Training then holds one layer's activations
// instead of all of them, for the cost of a second forward of each layer.

#include <ATen/core/Tensor.h>

#include <functional>

namespace lmk {

// run(input) with its activations dropped: the result's backward calls run again on the saved
// input (run must compute the same thing then: no randomness) and accumulates the gradients of
// every parameter it reads, as an ordinary backward would. Without grad mode: run(input).
at::Tensor recompute_in_backward(const at::Tensor& input,
                                 std::function<at::Tensor(const at::Tensor&)> run);

}  // namespace lmk
