// Encoder throughput on this machine, next to its own fp32 matmul throughput measured in the
// same run:  lmk_encode_bench [--preset small] [--lengths 512,2048,8192] [--repeats 2]
// For each length: one document of random ids, CLS input vs landmark (g = 32) input; prints
// tokens/s, achieved GFLOP/s (model FLOPs / time) and the fraction of matmul GFLOP/s, plus
// the process's peak RSS so far. Markdown table on stdout. Then the parts: the attention kernel
// alone (global and local layers of the preset) and one layer's projections (at::linear), each
// at the longest length asked for, so that a slow figure can be traced to its part.
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>

#include "core/eval/retrieval.h"
#include "core/model/encoder.h"
#include "core/util/runtime.h"
#include "tests/bench/bench_util.h"

using lmk::bench::matmul_gflops;
using lmk::bench::peak_rss_mb;
using lmk::bench::seconds_since;

int main(int argc, char** argv) {
  lmk::prefer_passive_openmp(argv);
  lmk::configure_memory();
  std::string preset = "small", lengths_arg = "512,2048,8192";
  int repeats = 2;
  bool parts_only = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--preset")
      preset = argv[i + 1];
    else if (flag == "--lengths")
      lengths_arg = argv[i + 1];
    else if (flag == "--repeats")
      repeats = std::stoi(argv[i + 1]);
    else if (flag == "--parts-only")
      parts_only = std::string(argv[i + 1]) == "1";
  }
  const int threads = lmk::configure_threads();
  at::NoGradGuard no_grad;
  lmk::Encoder encoder(lmk::EncoderConfig::preset(preset, 32768, 0), 1);
  const double matmul = matmul_gflops();
  std::printf("preset %s, %d threads, BLAS %s, fp32 matmul 2048^2: %.1f GFLOP/s\n\n",
              preset.c_str(), threads,
              (lmk::detect_blas().library + " (" + lmk::detect_blas().threading + ")").c_str(),
              matmul);
  std::printf("| tokens | input | seconds | tokens/s | GFLOP/s | of matmul | peak RSS MB |\n");
  std::printf("|---:|---|---:|---:|---:|---:|---:|\n");
  std::stringstream list(lengths_arg);
  std::string item;
  while (!parts_only && std::getline(list, item, ',')) {
    const int64_t content = std::stoll(item);
    for (const bool landmark : {false, true}) {
      // CLS input: [CLS] content [SEP]; landmark input: one extra token per 32.
      const int64_t L = landmark ? 1 + content + (content + 31) / 32 : content + 2;
      const at::Tensor ids = at::randint(5, 32768, {1, L}, at::kLong);
      const at::Tensor mask = at::ones({1, L}, at::kLong);
      encoder.forward(ids.narrow(1, 0, std::min<int64_t>(L, 256)),
                      mask.narrow(1, 0, std::min<int64_t>(L, 256)));
      const auto start = std::chrono::steady_clock::now();
      for (int r = 0; r < repeats; ++r) encoder.forward(ids, mask);
      const double seconds = seconds_since(start) / repeats;
      const double gflops = lmk::bench::encoder_forward_flops(encoder.config(), L) / seconds / 1e9;
      std::printf("| %lld | %s | %.3f | %.0f | %.1f | %.0f%% | %ld |\n",
                  static_cast<long long>(content), landmark ? "LMK g=32" : "CLS", seconds,
                  static_cast<double>(content) / seconds, gflops, 100.0 * gflops / matmul,
                  peak_rss_mb());
      std::fflush(stdout);
    }
  }
  // The parts, at the longest length.
  int64_t L = 0;
  {
    std::stringstream again(lengths_arg);
    while (std::getline(again, item, ',')) L = std::max<int64_t>(L, std::stoll(item));
  }
  const lmk::EncoderConfig& c = encoder.config();
  const int64_t heads = c.num_heads, d = c.head_dim(), H = c.hidden_size, I = c.intermediate_size;
  std::printf(
      "\nParts at %lld tokens:\n\n| part | seconds | GFLOP/s | of matmul |\n|---|---:|---:|---:|\n",
      static_cast<long long>(L));
  auto report = [&](const char* part, double flops, const std::function<void()>& run) {
    run();  // warm-up
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < repeats; ++r) run();
    const double seconds = seconds_since(start) / repeats;
    std::printf("| %s | %.3f | %.1f | %.0f%% |\n", part, seconds, flops / seconds / 1e9,
                100.0 * flops / seconds / 1e9 / matmul);
    std::fflush(stdout);
  };
  const at::Tensor qkv = at::randn({1, L, 3, heads, d});
  const at::Tensor q = qkv.select(2, 0).transpose(1, 2), k = qkv.select(2, 1).transpose(1, 2),
                   v = qkv.select(2, 2).transpose(1, 2);
  const at::Tensor key_mask = at::ones({1, L}, at::kBool);
  report("attention, global layer", 4.0 * L * L * H,
         [&] { lmk::blockwise_attention(q, k, v, key_mask, -1, 0); });
  const double window = std::min<double>(L, 2 * c.half_window() + 1);
  report("attention, local layer", 4.0 * L * window * H,
         [&] { lmk::blockwise_attention(q, k, v, key_mask, c.half_window(), 0); });
  const at::Tensor x = at::randn({1, L, H}), wqkv = at::randn({3 * H, H}), wo = at::randn({H, H}),
                   wi = at::randn({2 * I, H}), wo2 = at::randn({H, I});
  const at::Tensor mid = at::randn({1, L, I});
  report("projections of one layer (Wqkv, Wo, Wi, Wo)", 2.0 * L * (4 * H * H + 3 * H * I), [&] {
    at::linear(x, wqkv);
    at::linear(x, wo);
    at::linear(x, wi);
    at::linear(mid, wo2);
  });
  // Exact search (core/eval/retrieval.h): 1000 queries against 100k documents, top 100, as
  // the GEMM FLOPs of the scores (2·Q·D·H).
  {
    const int64_t Q = 1000, D = 100000;
    const at::Tensor queries = at::randn({Q, H}), documents = at::randn({D, H});
    std::vector<std::string> query_ids(Q), document_ids(D);
    for (int64_t i = 0; i < Q; ++i) query_ids[static_cast<size_t>(i)] = std::to_string(i);
    for (int64_t i = 0; i < D; ++i) document_ids[static_cast<size_t>(i)] = std::to_string(i);
    report("exact search, 1000 queries x 100k documents, top 100", 2.0 * Q * D * H,
           [&] { lmk::exact_search(queries, query_ids, documents, document_ids, 100); });
  }
  return 0;
}
