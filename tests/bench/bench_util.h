#pragma once

// What the model benchmarks share: wall time, this machine's fp32 matmul rate, the encoder's
// forward FLOP count and the process's peak RSS.

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>

#include "core/model/config.h"

namespace lmk::bench {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// fp32 `mm` of two 2048 x 2048 matrices on the current threads, in GFLOP/s (2·n³ per product).
inline double matmul_gflops() {
  const int64_t n = 2048;
  const at::Tensor a = at::randn({n, n}), b = at::randn({n, n});
  at::mm(a, b);  // warm-up
  const auto start = std::chrono::steady_clock::now();
  const int repeats = 5;
  for (int i = 0; i < repeats; ++i) at::mm(a, b);
  return 2.0 * n * n * n * repeats / seconds_since(start) / 1e9;
}

// Forward FLOPs of one row of L positions: 2 per multiply-add of every projection
// (Wqkv, Wo: 4·H²; the MLP: (GLU ? 3 : 2)·H·I), plus 4·L·keys·H per layer for attention scores
// and mixing, where keys = L in global layers and the window 2·half_window + 1 in local ones.
// Embedding lookups, norms, activations and softmax are not counted.
inline double encoder_forward_flops(const EncoderConfig& c, int64_t L) {
  const double H = static_cast<double>(c.hidden_size), I = static_cast<double>(c.intermediate_size);
  const double glu = c.architecture == Architecture::Bert ? 1.0 : 2.0;
  double flops = 0;
  for (int64_t layer = 0; layer < c.num_layers; ++layer) {
    flops += 2.0 * L * (4 * H * H + (glu + 1) * H * I);
    const double keys = c.is_global_layer(layer) ? static_cast<double>(L)
                                                 : std::min<double>(L, 2 * c.half_window() + 1);
    flops += 4.0 * L * keys * H;
  }
  return flops;
}

// The process's peak resident set so far (VmHWM), in MiB; -1 when unknown.
inline long peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  }
  return -1;
}

}  // namespace lmk::bench
