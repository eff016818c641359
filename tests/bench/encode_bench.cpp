// Encoder throughput on this machine, next to its own fp32 matmul throughput measured in the
// same run:
//   lmk_encode_bench [--preset small | --model DIR] [shape options of lmk model init]
//                    [--lengths 512,2048,8192] [--repeats 2] [--parts-only]
//                    [--attention-products micro|blas]
//   lmk_encode_bench [--preset small | --model DIR] --corpus DIR --tokenizer FILE
//                    [--max-length 4096] [--documents 200]
// The encoder is a preset (random weights) reshaped by the same flags as `lmk model init`
// (--architecture, --hidden-size, --layers, ...), or a model folder's (--model), so an engine
// can be compared on exactly the shape it runs. For each length: one document of random ids,
// CLS input vs landmark (g = 32) input; prints tokens/s, achieved GFLOP/s (model FLOPs / time)
// and the fraction of matmul GFLOP/s, plus the process's peak RSS so far. Markdown table on
// stdout. Then the parts: the attention kernel alone (global and local layers; forward, and for
// the global layer forward + backward), beside LibTorch's own at::scaled_dot_product_attention
// on the same tensors (with the largest difference of their outputs), and one layer's
// projections (at::linear), each at the longest length asked for, so that a slow figure can be
// traced to its part. With --corpus: batches of real documents instead (the first --documents
// .txt files of the folder by name, LMK g = 32 input cut at --max-length), encoded four ways —
// one document per forward (the single-document rate for the same lengths), lmk's length
// buckets (core/tokenize/batching.h with EncodeOptions' limits, as lmk eval and encode batch:
// sorted, at most 16 rows, 32768 padded tokens and 5 % padding waste), the same without the
// waste cap, and batches of 16 in file order — each with its padding waste (padded positions /
// real positions − 1) and its rate of real tokens against the single-document one.
// Bad options exit 2 with a message naming the option.
#include <ATen/ATen.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "app/field_option.h"
#include "app/shape_options.h"
#include "core/tokenize/batching.h"
#include "core/tokenize/landmark.h"
#include "core/tokenize/tokenizer.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/runtime.h"
#include "engine/embed/embed.h"
#include "engine/embed/model_folder.h"
#include "engine/eval/retrieval.h"
#include "engine/model/attention_kernel.h"
#include "engine/model/encoder.h"
#include "engine/util/torch_runtime.h"
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
  std::string products = "micro";  // the attention kernel's products: micro-kernel or BLAS
  std::string corpus, tokenizer;   // --corpus mode: a folder of .txt files, its tokenizer
  int64_t max_length = 4096, documents = 200;
};

int run(const Options& options);

}  // namespace

int main(int argc, char** argv) {
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
  app.add_option("--attention-products", options.products,
                 "the attention kernel's products: micro (its own micro-kernel where it applies) "
                 "or blas (sgemm per tile)")
      ->check(CLI::IsMember({"micro", "blas"}))
      ->capture_default_str();
  auto* corpus = app.add_option("--corpus", options.corpus,
                                "a folder of .txt documents: batches of real documents instead")
                     ->check(CLI::ExistingDirectory);
  app.add_option("--tokenizer", options.tokenizer, "the corpus's tokenizer (file)")
      ->needs(corpus)
      ->check(CLI::ExistingFile);
  app.add_option("--max-length", options.max_length, "--corpus: tokens per document at most")
      ->needs(corpus)
      ->check(CLI::Range(int64_t{8}, int64_t{1} << 20))
      ->capture_default_str();
  app.add_option("--documents", options.documents, "--corpus: documents encoded")
      ->needs(corpus)
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    return run(options);
  } catch (const lmk::FieldError& e) {
    std::cerr << "lmk_encode_bench: error: " << lmk::cli::command_line_message(app, e) << "\n";
    return 2;
  } catch (const lmk::InputError& e) {
    std::cerr << "lmk_encode_bench: error: " << e.what() << "\n";
    return 2;
  }
}

namespace {

// --corpus: the documents' tokens/s under three batch policies (see the top of the file).
int run_corpus(const Options& options, lmk::Encoder& encoder, double matmul) {
  if (options.tokenizer.empty()) throw lmk::InputError("--corpus needs --tokenizer");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(options.corpus))
    if (entry.is_regular_file() && entry.path().extension() == ".txt")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  const std::unique_ptr<lmk::Tokenizer> tokenizer = lmk::load_tokenizer(options.tokenizer);
  if (static_cast<int64_t>(tokenizer->vocab_size()) > encoder.config().vocab_size)
    throw lmk::input_error("--tokenizer", "its " + std::to_string(tokenizer->vocab_size()) +
                                              " ids do not fit the model's vocabulary of " +
                                              std::to_string(encoder.config().vocab_size));
  lmk::LandmarkOptions landmark_options;
  landmark_options.spec = lmk::LandmarkSpec::parse("fixed:32");
  landmark_options.max_length = static_cast<size_t>(options.max_length);
  const lmk::LandmarkTokenizer landmarks(*tokenizer, landmark_options);
  std::vector<lmk::TokenizedText> inputs;
  std::vector<size_t> lengths;
  for (const auto& file : files) {
    if (static_cast<int64_t>(inputs.size()) == options.documents) break;
    const std::string text = lmk::read_file(file.string());
    if (text.empty()) continue;
    inputs.push_back(landmarks.tokenize(text, inputs.size()));
    lengths.push_back(inputs.back().ids.size());
  }
  if (inputs.empty())
    throw lmk::input_error("--corpus", options.corpus + " holds no non-empty .txt file");
  std::vector<size_t> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  size_t real = 0;
  for (const size_t n : lengths) real += n;
  std::printf(
      "%zu documents of %s, LMK g=32 input cut at %lld tokens: %zu tokens, median %zu, "
      "%zu at the cut\n\n",
      inputs.size(), options.corpus.c_str(), static_cast<long long>(options.max_length), real,
      sorted[sorted.size() / 2],
      static_cast<size_t>(
          std::count(lengths.begin(), lengths.end(), static_cast<size_t>(options.max_length))));
  const int32_t pad = tokenizer->special_tokens().pad.value_or(0);
  std::vector<std::vector<size_t>> single, arrival;
  for (size_t i = 0; i < inputs.size(); ++i) {
    single.push_back({i});
    if (i % 16 == 0) arrival.emplace_back();
    arrival.back().push_back(i);
  }
  const lmk::EncodeOptions lmk_batches;  // what lmk eval / encode batch by
  const std::pair<std::string, std::vector<std::vector<size_t>>> policies[] = {
      {"one document per forward", single},
      {"lmk's length buckets (<= " + std::to_string(lmk_batches.batch_size) +
           " rows, <= " + std::to_string(lmk_batches.max_batch_tokens) + " padded tokens, <= " +
           std::to_string(static_cast<int>(100 * lmk_batches.max_padding_waste + 0.5)) +
           " % waste)",
       lmk::bucket_by_length(lengths, lmk_batches.batch_size, lmk_batches.max_batch_tokens,
                             lmk_batches.max_padding_waste)},
      {"length buckets without the waste cap",
       lmk::bucket_by_length(lengths, lmk_batches.batch_size, lmk_batches.max_batch_tokens)},
      {"16 rows in file order", arrival}};
  std::printf(
      "| batch policy | batches | padded tokens | padding waste | seconds | real tokens/s | "
      "GFLOP/s (real) | of matmul | of one per forward |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  {  // warm-up
    const auto [ids, mask] = lmk::batch_tensors(lmk::make_batch(inputs, {0}, pad));
    encoder.forward(ids, mask);
  }
  double single_rate = 0;
  for (const auto& [name, batches] : policies) {
    size_t padded = 0;
    double flops = 0;
    for (const auto& rows : batches) {
      size_t longest = 0;
      for (const size_t r : rows) longest = std::max(longest, lengths[r]);
      padded += longest * rows.size();
    }
    for (const size_t n : lengths)
      flops += lmk::bench::encoder_forward_flops(encoder.config(), static_cast<int64_t>(n));
    const auto start = std::chrono::steady_clock::now();
    for (const auto& rows : batches) {
      const lmk::Batch batch = lmk::make_batch(inputs, rows, pad);
      const auto [ids, mask] = lmk::batch_tensors(batch);
      encoder.forward(ids, mask);
    }
    const double seconds = seconds_since(start);
    const double rate = static_cast<double>(real) / seconds;
    if (single_rate == 0) single_rate = rate;
    std::printf("| %s | %zu | %zu | %.1f%% | %.1f | %.0f | %.1f | %.0f%% | %.0f%% |\n",
                name.c_str(), batches.size(), padded,
                100.0 * (static_cast<double>(padded) / static_cast<double>(real) - 1.0), seconds,
                rate, flops / seconds / 1e9, 100.0 * flops / seconds / 1e9 / matmul,
                100.0 * rate / single_rate);
    std::fflush(stdout);
  }
  return 0;
}

int run(const Options& options) {
  const lmk::ShapeOverrides& shape = options.shape;
  if (!options.model.empty() && shape.reshapes())
    throw lmk::InputError("--model: the shape options apply to a preset, not a model folder");
  const int threads = lmk::configure_threads();
  lmk::set_attention_products(options.products == "blas" ? lmk::AttentionProducts::Blas
                                                         : lmk::AttentionProducts::MicroKernel);
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
  const bool micro =
      lmk::attention_products(encoder.config().head_dim()) == lmk::AttentionProducts::MicroKernel;
  std::printf(
      "%s: %s, %d threads, BLAS %s, idle threads %s, attention products %s, fp32 matmul "
      "2048^2: %.1f GFLOP/s\n\n",
      options.model.empty() ? ("preset " + options.preset).c_str() : options.model.c_str(),
      encoder.config().describe().c_str(), threads,
      (lmk::detect_blas().name + " (" + lmk::detect_blas().library + ")").c_str(),
      lmk::waiting_settings().c_str(), micro ? "micro-kernel" : "BLAS sgemm", matmul);
  if (!options.corpus.empty()) return run_corpus(options, encoder, matmul);
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
  // LibTorch's own attention on the same tensors (its CPU flash attention: tiles and an online
  // softmax too), and how far its output is from the fused kernel's.
  const auto sdpa_difference = [](const at::Tensor& ours, const at::Tensor& theirs) {
    return (ours - theirs).abs().max().item<double>();
  };
  report("attention, global layer, LibTorch's scaled_dot_product_attention", 4.0 * L * L * H,
         [&] { at::scaled_dot_product_attention(q, k, v); });
  std::printf("|   (largest difference from the fused kernel: %.1e) | | | |\n",
              sdpa_difference(lmk::blockwise_attention(q, k, v, key_mask, -1, 0),
                              at::scaled_dot_product_attention(q, k, v)));
  // Training: the forward with its backward (3x the forward's products: 12 L² H FLOPs).
  {
    const at::AutoGradMode with_gradients(true);
    const at::Tensor qg = q.detach().clone().requires_grad_(),
                     kg = k.detach().clone().requires_grad_(),
                     vg = v.detach().clone().requires_grad_(), out_grad = at::randn_like(q);
    report("attention, global layer, forward + backward", 12.0 * L * L * H,
           [&] { lmk::blockwise_attention(qg, kg, vg, key_mask, -1, 0).backward(out_grad); });
    report("attention, global layer, forward + backward, LibTorch's scaled_dot_product_attention",
           12.0 * L * L * H,
           [&] { at::scaled_dot_product_attention(qg, kg, vg).backward(out_grad); });
  }
  bool local_layers = false;
  for (int64_t layer = 0; layer < c.num_layers; ++layer) local_layers |= !c.is_global_layer(layer);
  if (local_layers) {
    const double window = std::min<double>(L, 2 * c.half_window() + 1);
    report("attention, local layer", 4.0 * L * window * H,
           [&] { lmk::blockwise_attention(q, k, v, key_mask, c.half_window(), 0); });
    // LibTorch has no windowed CPU kernel: a window is a dense [L, L] mask (L² bytes), with which
    // scaled_dot_product_attention takes its math path and holds every score (measured: 18.8 GB
    // at 32768 tokens with 4 heads): run up to 8192 tokens only.
    if (L <= 8192) {
      const at::Tensor positions = at::arange(L);
      const at::Tensor band =
          (positions.unsqueeze(1) - positions.unsqueeze(0)).abs().le(c.half_window());
      report("attention, local layer, LibTorch's scaled_dot_product_attention (dense band mask)",
             4.0 * L * window * H, [&] { at::scaled_dot_product_attention(q, k, v, band); });
      std::printf(
          "|   (largest difference from the fused kernel: %.1e; the mask alone %.0f MB) | | | |\n",
          sdpa_difference(lmk::blockwise_attention(q, k, v, key_mask, c.half_window(), 0),
                          at::scaled_dot_product_attention(q, k, v, band)),
          static_cast<double>(band.numel()) / 1e6);
    }
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
  // Exact search (engine/eval/retrieval.h): 1000 queries against 100k documents, top 100, as
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
