// Encoder throughput on this machine, next to its own fp32 matmul throughput measured in the
// same run:  lmk_encode_bench [--preset small] [--lengths 512,2048,8192] [--repeats 2]
// For each length: one document of random ids, CLS input vs landmark (g = 32) input; prints
// tokens/s, achieved GFLOP/s (model FLOPs / time) and the fraction of matmul GFLOP/s, plus
// the process's peak RSS so far. Markdown table on stdout.
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "core/model/encoder.h"
#include "core/util/runtime.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double matmul_gflops() {
  const int64_t n = 2048;
  const at::Tensor a = at::randn({n, n}), b = at::randn({n, n});
  at::mm(a, b);  // warm-up
  const auto start = std::chrono::steady_clock::now();
  const int repeats = 5;
  for (int i = 0; i < repeats; ++i) at::mm(a, b);
  return 2.0 * n * n * n * repeats / seconds_since(start) / 1e9;
}

// Forward FLOPs: 2 per multiply-add of every projection, plus attention scores and mixing.
double model_flops(const lmk::EncoderConfig& c, int64_t L) {
  const double H = static_cast<double>(c.hidden_size), I = static_cast<double>(c.intermediate_size);
  const double glu = c.architecture == lmk::Architecture::Bert ? 1.0 : 2.0;
  double flops = 0;
  for (int64_t layer = 0; layer < c.num_layers; ++layer) {
    flops += 2.0 * L * (4 * H * H + (glu + 1) * H * I);
    const double keys = c.is_global_layer(layer) ? static_cast<double>(L) : std::min<double>(L, 2 * c.half_window() + 1);
    flops += 4.0 * L * keys * H;
  }
  return flops;
}

long peak_rss_mb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6)) / 1024;
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  lmk::prefer_passive_openmp(argv);
  lmk::configure_memory();
  std::string preset = "small", lengths_arg = "512,2048,8192";
  int repeats = 2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--preset") preset = argv[i + 1];
    else if (flag == "--lengths") lengths_arg = argv[i + 1];
    else if (flag == "--repeats") repeats = std::stoi(argv[i + 1]);
  }
  const int threads = lmk::configure_threads();
  at::NoGradGuard no_grad;
  lmk::Encoder encoder(lmk::EncoderConfig::preset(preset, 32768, 0), 1);
  const double matmul = matmul_gflops();
  std::printf("preset %s, %d threads, BLAS %s, fp32 matmul 2048^2: %.1f GFLOP/s\n\n", preset.c_str(), threads,
              lmk::detect_blas().library.c_str(), matmul);
  std::printf("| tokens | input | seconds | tokens/s | GFLOP/s | of matmul | peak RSS MB |\n");
  std::printf("|---:|---|---:|---:|---:|---:|---:|\n");
  std::stringstream list(lengths_arg);
  std::string item;
  while (std::getline(list, item, ',')) {
    const int64_t content = std::stoll(item);
    for (const bool landmark : {false, true}) {
      // CLS input: [CLS] content [SEP]; landmark input: one extra token per 32.
      const int64_t L = landmark ? 1 + content + (content + 31) / 32 : content + 2;
      const at::Tensor ids = at::randint(5, 32768, {1, L}, at::kLong);
      const at::Tensor mask = at::ones({1, L}, at::kLong);
      encoder.forward(ids.narrow(1, 0, std::min<int64_t>(L, 256)), mask.narrow(1, 0, std::min<int64_t>(L, 256)));
      const auto start = std::chrono::steady_clock::now();
      for (int r = 0; r < repeats; ++r) encoder.forward(ids, mask);
      const double seconds = seconds_since(start) / repeats;
      const double gflops = model_flops(encoder.config(), L) / seconds / 1e9;
      std::printf("| %lld | %s | %.3f | %.0f | %.1f | %.0f%% | %ld |\n", static_cast<long long>(content),
                  landmark ? "LMK g=32" : "CLS", seconds, static_cast<double>(content) / seconds, gflops,
                  100.0 * gflops / matmul, peak_rss_mb());
      std::fflush(stdout);
    }
  }
  return 0;
}
