// Encoder throughput on this machine, next to its own fp32 matmul throughput measured in the
// same run:
//   lmk_encode_bench [--preset small | --model DIR] [shape options of lmk model init]
//                    [--lengths 512,2048,8192] [--repeats 2] [--parts-only]
// The encoder is a preset (random weights) reshaped by the same flags as `lmk model init`
// (--architecture, --hidden-size, --layers, ...), or a model folder's (--model), so an engine
// can be compared on exactly the shape it runs. For each length: one document of random ids,
// CLS input vs landmark (g = 32) input; prints tokens/s, achieved GFLOP/s (model FLOPs / time)
// and the fraction of matmul GFLOP/s, plus the process's peak RSS so far. Markdown table on
// stdout. Then the parts: the attention kernel alone (global and local layers) and one layer's
// projections (at::linear), each at the longest length asked for, so that a slow figure can be
// traced to its part. Bad options exit 2 with a message naming the option.
#include <ATen/ATen.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "app/shape_options.h"
#include "core/eval/retrieval.h"
#include "core/embed/model_folder.h"
#include "core/model/encoder.h"
#include "core/util/error.h"
#include "core/util/runtime.h"
#include "tests/bench/bench_util.h"

using lmk::bench::matmul_gflops;
using lmk::bench::peak_rss_mb;
using lmk::bench::seconds_since;

namespace {

struct Options {
  std::string preset = "small", model;
  lmk::ShapeOverrides shape;
  std::vector<int64_t> lengths = {512, 2048, 8192};
  int repeats = 2;
  bool parts_only = false;
};

int run(const Options& options);

}  // namespace

int main(int argc, char** argv) {
  lmk::prefer_passive_openmp(argv);
  lmk::configure_memory();
  CLI::App app{"lmk_encode_bench: encoder forward throughput against this machine's fp32 matmul"};
  Options options;
  auto* preset = app.add_option("--preset", options.preset, "tiny | small | base (random weights)")
                     ->capture_default_str();
  app.add_option("--model", options.model, "a model folder (its shape and weights) instead")
      ->excludes(preset);
  lmk::cli::add_shape_options(app, options.shape);
  app.add_option("--lengths", options.lengths, "content tokens per document, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--repeats", options.repeats, "timed forwards per figure")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_flag("--parts-only", options.parts_only, "only the parts at the longest length");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return run(options);
  } catch (const lmk::InputError& e) {
    std::cerr << "lmk_encode_bench: error: " << e.what() << "\n";
    return 2;
  }
}

namespace {

int run(const Options& options) {
  const lmk::ShapeOverrides& shape = options.shape;
  if (!options.model.empty() && shape.reshapes())
    throw lmk::InputError("--model: the shape options apply to a preset, not a model folder");
  const int threads = lmk::configure_threads();
  at::NoGradGuard no_grad;
  std::unique_ptr<lmk::Encoder> loaded;
  if (!options.model.empty()) {
    loaded = std::move(lmk::load_model_folder(options.model).encoder);
  } else {
    loaded = std::make_unique<lmk::Encoder>(lmk::shaped_config(options.preset, shape, 32768, 0), 1);
  }
  lmk::Encoder& encoder = *loaded;
  const int64_t vocab = encoder.config().vocab_size;
  const double matmul = matmul_gflops();
  std::printf("%s: %s, %d threads, BLAS %s, fp32 matmul 2048^2: %.1f GFLOP/s\n\n",
              options.model.empty() ? ("preset " + options.preset).c_str() : options.model.c_str(),
              encoder.config().describe().c_str(), threads,
              (lmk::detect_blas().library + " (" + lmk::detect_blas().threading + ")").c_str(),
              matmul);
  std::printf("| tokens | input | seconds | tokens/s | GFLOP/s | of matmul | peak RSS MB |\n");
  std::printf("|---:|---|---:|---:|---:|---:|---:|\n");
  for (const int64_t content : options.lengths) {
    if (options.parts_only) break;
    for (const bool landmark : {false, true}) {
      // CLS input: [CLS] content [SEP]; landmark input: one extra token per 32.
      const int64_t L = landmark ? 1 + content + (content + 31) / 32 : content + 2;
      if (!encoder.config().uses_rope() && L > encoder.config().max_position_embeddings) {
        throw lmk::input_error("--lengths",
                               std::to_string(content) + " tokens exceed the " +
                                   std::to_string(encoder.config().max_position_embeddings) +
                                   " positions of this absolute-position model");
      }
      const at::Tensor ids = at::randint(std::min<int64_t>(5, vocab - 1), vocab, {1, L}, at::kLong);
      const at::Tensor mask = at::ones({1, L}, at::kLong);
      encoder.forward(ids.narrow(1, 0, std::min<int64_t>(L, 256)),
                      mask.narrow(1, 0, std::min<int64_t>(L, 256)));
      const auto start = std::chrono::steady_clock::now();
      for (int r = 0; r < options.repeats; ++r) encoder.forward(ids, mask);
      const double seconds = seconds_since(start) / options.repeats;
      const double gflops = lmk::bench::encoder_forward_flops(encoder.config(), L) / seconds / 1e9;
      std::printf("| %lld | %s | %.3f | %.0f | %.1f | %.0f%% | %ld |\n",
                  static_cast<long long>(content), landmark ? "LMK g=32" : "CLS", seconds,
                  static_cast<double>(content) / seconds, gflops, 100.0 * gflops / matmul,
                  peak_rss_mb());
      std::fflush(stdout);
    }
  }
  // The parts, at the longest length.
  const int64_t L = *std::max_element(options.lengths.begin(), options.lengths.end());
  const int repeats = options.repeats;
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
  bool local_layers = false;
  for (int64_t layer = 0; layer < c.num_layers; ++layer) local_layers |= !c.is_global_layer(layer);
  if (local_layers) {
    const double window = std::min<double>(L, 2 * c.half_window() + 1);
    report("attention, local layer", 4.0 * L * window * H,
           [&] { lmk::blockwise_attention(q, k, v, key_mask, c.half_window(), 0); });
  }
  // Wi is gated (2 x I outputs) except in BERT, as encoder_forward_flops counts it.
  const int64_t glu = c.architecture == lmk::Architecture::Bert ? 1 : 2;
  const at::Tensor x = at::randn({1, L, H}), wqkv = at::randn({3 * H, H}), wo = at::randn({H, H}),
                   wi = at::randn({glu * I, H}), wo2 = at::randn({H, I});
  const at::Tensor mid = at::randn({1, L, I});
  report("projections of one layer (Wqkv, Wo, Wi, Wo)", 2.0 * L * (4 * H * H + (glu + 1) * H * I),
         [&] {
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

}  // namespace
