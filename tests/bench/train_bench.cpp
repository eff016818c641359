// Training throughput on this machine, next to its own fp32 matmul throughput measured in the
// same run:
//   lmk_train_bench [--preset small] [--length 512] [--batch 8] [--steps 5] [--warmup 2]
//                   [--threads 2] [--negatives 1] [--query-length 128] [--vocab 32768]
//                   [--runs mlm,lmk,cls,parts] [--recompute 0|1]
//                   [--attention-backward fused|ops] [--attention-products micro|blas]
//                   [--architecture modernbert|qwen3|llama] [--bidirectional 0|1] [--lora R]
// --architecture qwen3 / llama makes a decoder of the preset's shape as `lmk model init
// --architecture` does (causal unless --bidirectional 1); --lora R trains rank-R adapters on
// every linear layer ([lora] rank, all-linear) instead of every weight: compare the seconds and
// peak RSS with the full step (the FLOP count below is the full step's: a LoRA step skips the
// frozen weights' gradients, about a third of the backward).
// --recompute 1 recomputes each layer in the backward ([train] recompute_layers): compare the
// peak RSS (the last column) of the same step with and without.
// Three kinds of optimizer step, each run by the real TrainingLoop (engine/train/loop.h: zero_grad,
// the step's gradients, clipping at 1.0, the schedule, torch::optim::AdamW):
//   MLM          batch packed sequences of `length` ids, 30 % masked (80/10/10), encoder
//                forward, MLM head at the masked positions, cross-entropy, backward
//                (the step of lmk pretrain, engine/train/pretrain.cpp);
//   contrastive  batch queries (query-length positions) and batch x (1 + negatives) passages
//                (`length` positions) of random words, tokenized with the pooling's landmark
//                layout, encoder forward, pooling (LMK g = 32, or CLS), InfoNCE, backward
//                (the step of lmk train, engine/train/contrastive.cpp).
// Those steps are lambdas inside pretrain_mlm / train_contrastive, so their bodies are rebuilt
// here from the same public pieces (pack_sequences, mask_tokens, LandmarkTokenizer, make_batch,
// batch_tensors, Encoder::forward, Encoder::mlm_logits, pool, info_nce_loss); the optimizer
// step is the loop's own.
//
// FLOPs per step = 3 x forward (backward = 2 x forward), forward =
//   sum over rows of encoder_forward_flops(config, padded length)   (tests/bench/bench_util.h:
//       2·T·(4H² + 3HI) per layer for the projections, 4·T·keys·H per layer for attention, keys =
//       T in global layers and 2·half_window + 1 in local ones)
//   + MLM: 2·P·(H² + H·V) for the head's dense layer and the decoder tied to the embeddings,
//       P = masked positions (the head runs only there)
//   + contrastive: 2·Q·(Q·group)·H for the InfoNCE scores (pooling is not counted).
// The vocabulary counts: V = 32768 puts a third of the MLM step's FLOPs in the decoder.
// Local layers: the fused kernels (forward and backward) score tiles of queries against the key
// tiles that overlap their band (about 1.5-2x the window's keys), so the count above is what the
// model needs, not every multiply the step makes.
// Warm-up steps are excluded; seconds and the parts are medians over the measured steps,
// "fastest s" the quickest measured step (the two cores are shared: other load only slows).
// Then the parts (print_parts) and a Markdown table on stdout.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/tokenize/batching.h"
#include "core/tokenize/landmark.h"
#include "core/train/mlm_data.h"
#include "core/util/runtime.h"
#include "engine/embed/embed.h"
#include "engine/embed/model_folder.h"
#include "engine/model/attention.h"
#include "engine/model/attention_kernel.h"
#include "engine/model/encoder.h"
#include "engine/pool/pooling.h"
#include "engine/train/loop.h"
#include "engine/train/losses.h"
#include "engine/train/pretrain.h"
#include "engine/util/torch_runtime.h"
#include "tests/bench/bench_util.h"
#include "tests/support/test_tokenizers.h"

namespace {

using Clock = std::chrono::steady_clock;

struct BenchOptions {
  std::string preset = "small";
  int64_t length = 512, query_length = 128, batch = 8, negatives = 1, vocab = 32768;
  int steps = 5, warmup = 2, threads = 2;
  std::string runs = "mlm,lmk,cls,parts";  // what to run
  bool recompute = false;                  // --recompute 1: layers recomputed in the backward
  bool fused_backward = true;  // --attention-backward ops: attention's tensor-op backward
  bool micro_products = true;  // --attention-products blas: the fused kernels' sgemm per tile
  std::string architecture = "modernbert";
  bool bidirectional = false;  // decoders: --bidirectional 1
  int64_t lora = 0;            // --lora R: adapters of rank R on every linear layer
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Per optimizer step: wall time of the whole loop iteration and its parts, tokens and FLOPs.
struct StepRecord {
  double total = 0, forward = 0, backward = 0, optimizer = 0;
  int64_t tokens = 0;
  double flops = 0;
};

// What one step's gradient function reports back to the timer: forward_done after the loss
// (data preparation and tokenization included), backward_done after backward(); the rest of the
// loop iteration (zero_grad before the step; clipping, the schedule and AdamW after it) counts
// as optimizer.
struct StepMarks {
  Clock::time_point start, forward_done, backward_done;
  int64_t tokens = 0;
  double flops = 0;
};

// Runs warmup + steps optimizer steps of `gradients` through a TrainingLoop and times each.
// gradients(step, marks) computes one step's gradients, filling marks, and returns its loss.
std::vector<StepRecord> run_steps(lmk::LoadedModel& model, const std::string& tokenizer_path,
                                  const std::string& out_dir, double learning_rate,
                                  const BenchOptions& o,
                                  const std::function<double(int64_t, StepMarks&)>& gradients) {
  lmk::LoopOptions options;
  options.out_dir = out_dir;
  options.tokenizer_source = tokenizer_path;
  options.kind = "bench";
  options.learning_rate = learning_rate;
  options.total_steps = o.warmup + o.steps;
  options.checkpoint_every = 0;
  options.log_every = options.total_steps + 1;
  lmk::TrainingLoop loop(options, model, /*resume=*/false);
  std::vector<StepRecord> records;
  StepMarks marks;
  Clock::time_point previous = Clock::now();
  loop.run([&](int64_t step) { return gradients(step, marks); },
           [&](int64_t step) {
             const Clock::time_point now = Clock::now();
             StepRecord r;
             r.total = std::chrono::duration<double>(now - previous).count();
             r.forward = std::chrono::duration<double>(marks.forward_done - marks.start).count();
             r.backward =
                 std::chrono::duration<double>(marks.backward_done - marks.forward_done).count();
             r.optimizer = r.total - r.forward - r.backward;
             r.tokens = marks.tokens;
             r.flops = marks.flops;
             if (step > o.warmup) records.push_back(r);
             previous = Clock::now();
           });
  return records;
}

void print_row(const char* name, const std::vector<StepRecord>& records, double matmul) {
  std::vector<double> total, forward, backward, optimizer;
  double tokens = 0, flops = 0;
  for (const StepRecord& r : records) {
    total.push_back(r.total), forward.push_back(r.forward), backward.push_back(r.backward);
    optimizer.push_back(r.optimizer);
    tokens += static_cast<double>(r.tokens) / static_cast<double>(records.size());
    flops += r.flops / static_cast<double>(records.size());
  }
  const double seconds = median(total), gflops = flops / seconds / 1e9;
  const double best = *std::min_element(total.begin(), total.end());
  std::printf(
      "| %s | %.0f | %.1f | %.3f | %.3f | %.0f | %.1f | %.0f%% | %.3f | %.3f | %.3f | %ld |\n",
      name, tokens, flops / 1e9, seconds, best, tokens / seconds, gflops, 100.0 * gflops / matmul,
      median(forward), median(backward), median(optimizer), lmk::bench::peak_rss_mb());
  std::fflush(stdout);
}

// A fresh model of the preset, as `lmk model init` makes it.
lmk::LoadedModel fresh_model(const BenchOptions& o) {
  lmk::LoadedModel model;
  lmk::ShapeOverrides shape;
  shape.architecture = o.architecture;
  shape.bidirectional = o.bidirectional;
  model.encoder = std::make_unique<lmk::Encoder>(
      lmk::shaped_config(o.preset, shape, o.vocab, /*pad_token_id=*/0), /*seed=*/1);
  model.encoder->set_recompute_layers(o.recompute);
  if (o.lora > 0) {
    lmk::LoraSettings lora;
    lora.rank = o.lora;
    model.encoder->attach_lora(lora, 1);
  }
  return model;
}

// "w<id> w<id> ..." of n random words (one token each with the word-level tokenizer).
std::string random_words(std::mt19937_64& rng, int64_t n, int64_t words) {
  std::uniform_int_distribution<int64_t> word(0, words - 1);
  std::string text;
  for (int64_t i = 0; i < n; ++i) text += (i ? " w" : "w") + std::to_string(word(rng));
  return text;
}

// The MLM step of lmk pretrain (engine/train/pretrain.cpp) for one micro-batch.
std::vector<StepRecord> bench_mlm(const lmk::Tokenizer& tokenizer,
                                  const std::string& tokenizer_path, const std::string& out_dir,
                                  const BenchOptions& o) {
  lmk::LoadedModel model = fresh_model(o);
  const lmk::EncoderConfig& config = model.encoder->config();
  const lmk::SpecialTokens special = tokenizer.special_tokens();
  const int32_t cls = *special.cls, sep = *special.sep, pad = special.pad.value_or(0);
  // Random documents of 100-2000 content ids, packed into full-length sequences.
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int32_t> id(5, static_cast<int32_t>(o.vocab) - 1);
  std::uniform_int_distribution<int> document_length(100, 2000);
  const int64_t wanted = o.batch * (o.warmup + o.steps);
  std::vector<std::vector<int32_t>> documents;
  for (int64_t content = 0; content < (wanted + 1) * o.length;) {
    std::vector<int32_t> document(static_cast<size_t>(document_length(rng)));
    for (int32_t& i : document) i = id(rng);
    content += static_cast<int64_t>(document.size());
    documents.push_back(std::move(document));
  }
  const std::vector<std::vector<int32_t>> sequences =
      lmk::pack_sequences(documents, static_cast<size_t>(o.length), cls, sep);
  lmk::MaskingOptions masking;
  masking.mask_id = *special.mask;
  masking.vocab_size = static_cast<int32_t>(o.vocab);
  masking.never_mask = {cls, sep, pad, *special.mask, special.unk.value_or(1)};
  masking.first_random_id = 5;
  const double H = static_cast<double>(config.hidden_size), V = static_cast<double>(o.vocab);
  return run_steps(
      model, tokenizer_path, out_dir + "/mlm", 5e-4, o, [&](int64_t step, StepMarks& marks) {
        marks.start = Clock::now();
        // Masked inputs of the micro-batch, padded to its longest sequence (lmk pretrain's).
        std::vector<lmk::MaskedSequence> masked;
        for (int64_t b = 0; b < o.batch; ++b) {
          const auto s = static_cast<size_t>(step * o.batch + b);
          masked.push_back(lmk::mask_tokens(sequences[s], masking, lmk::splitmix64(s)));
        }
        const lmk::MlmBatch batch = lmk::make_mlm_batch(masked, pad);
        const int64_t B = batch.rows, L = batch.length;
        const at::Tensor &input = batch.input, &mask = batch.mask, &target = batch.target,
                         &predicted = batch.predicted;
        const at::Tensor hidden = model.encoder->forward(input, mask).reshape({B * L, -1});
        const at::Tensor logits = model.encoder->mlm_logits(hidden.index_select(0, predicted));
        const at::Tensor loss = at::cross_entropy_loss(logits, target.index_select(0, predicted));
        const double value = loss.item<double>();
        marks.forward_done = Clock::now();
        loss.backward();
        marks.backward_done = Clock::now();
        const auto P = static_cast<double>(predicted.numel());
        marks.tokens = B * L;
        marks.flops = 3.0 * (static_cast<double>(B) * lmk::bench::encoder_forward_flops(config, L) +
                             2.0 * P * (H * H + H * V));
        return value;
      });
}

// The contrastive step of lmk train (engine/train/contrastive.cpp), InfoNCE with hard negatives.
std::vector<StepRecord> bench_contrastive(const lmk::Tokenizer& tokenizer,
                                          const std::string& tokenizer_path,
                                          const std::string& out_dir, lmk::Pooling pooling,
                                          const BenchOptions& o) {
  lmk::LoadedModel model = fresh_model(o);
  const lmk::EncoderConfig& config = model.encoder->config();
  const int64_t group = 1 + o.negatives, every_k = 32;
  // Fixed g = 32 for LMK (the bench times one layout, not the variable draw of lmk train).
  const lmk::PoolingPlan plan = lmk::plan_pooling(pooling, static_cast<int>(every_k), model.pooling,
                                                  model.latent.get(), /*normalize=*/true);
  const lmk::LandmarkSpec& spec = plan.landmarks;
  const uint64_t seed = 42;
  const lmk::LandmarkTokenizer query_tokenizer(
      tokenizer, {spec, static_cast<size_t>(o.query_length), std::nullopt, seed});
  const lmk::LandmarkTokenizer passage_tokenizer(
      tokenizer, {spec, static_cast<size_t>(o.length), std::nullopt, seed + 1});
  const int32_t pad = tokenizer.special_tokens().pad.value_or(0);
  // Texts longer than the limits, so that every row is truncated to its full length.
  std::mt19937_64 rng(11);
  const int64_t steps = o.warmup + o.steps, words = o.vocab - 5;
  std::vector<std::string> queries, passages;
  for (int64_t i = 0; i < steps * o.batch; ++i) {
    queries.push_back(random_words(rng, o.query_length + o.query_length / 8, words));
    for (int64_t g = 0; g < group; ++g)
      passages.push_back(random_words(rng, o.length + o.length / 8, words));
  }
  const double H = static_cast<double>(config.hidden_size);
  // Tokenized, one padded batch, the embedding stage (contrastive.cpp's embed()).
  auto embed = [&](const lmk::LandmarkTokenizer& landmarks, const std::vector<std::string>& texts,
                   uint64_t first_row, StepMarks& marks) {
    std::vector<lmk::TokenizedText> inputs;
    std::vector<size_t> rows;
    for (size_t i = 0; i < texts.size(); ++i) {
      inputs.push_back(landmarks.tokenize(texts[i], first_row + i));
      rows.push_back(i);
      marks.tokens += static_cast<int64_t>(inputs.back().ids.size());
    }
    const lmk::Batch batch = lmk::make_batch(inputs, rows, pad);
    marks.flops += 3.0 * static_cast<double>(batch.rows) *
                   lmk::bench::encoder_forward_flops(config, static_cast<int64_t>(batch.length));
    return lmk::embed_batch(model, batch, plan);
  };
  const std::string name = pooling == lmk::Pooling::Landmark ? "/lmk" : "/cls";
  return run_steps(
      model, tokenizer_path, out_dir + name, 5e-5, o, [&](int64_t step, StepMarks& marks) {
        marks.start = Clock::now();
        marks.tokens = 0, marks.flops = 0;
        const auto first = static_cast<size_t>(step * o.batch);
        const std::vector<std::string> step_queries(queries.begin() + first,
                                                    queries.begin() + first + o.batch);
        const std::vector<std::string> step_passages(passages.begin() + first * group,
                                                     passages.begin() + (first + o.batch) * group);
        const auto row = static_cast<uint64_t>(first * group);
        const at::Tensor q = embed(query_tokenizer, step_queries, row, marks);
        const at::Tensor p = embed(passage_tokenizer, step_passages, row, marks);
        const at::Tensor loss = lmk::info_nce_loss(q, p, group, 0.02);
        const double value = loss.item<double>();
        marks.forward_done = Clock::now();
        loss.backward();
        marks.backward_done = Clock::now();
        const auto Q = static_cast<double>(o.batch);
        marks.flops += 3.0 * 2.0 * Q * (Q * static_cast<double>(group)) * H;
        return value;
      });
}

// The parts of the contrastive step's passage forward + backward, each alone at the passage
// batch's shape (rows = batch x (1 + negatives), `length` positions), so that a slow step can
// be traced to its part: one layer's projections, the attention of a global and of a local
// layer (the path training takes: the fused kernel and its backward, or the tensor ops with
// --attention-backward ops), and the MLM head over 30 % of the MLM batch.
// "per step" = seconds x the part's count in one step (layers of the preset; the head once).
void print_parts(const BenchOptions& o, double matmul) {
  const lmk::EncoderConfig c = lmk::EncoderConfig::preset(o.preset, o.vocab, 0);
  const int64_t N = o.batch * (1 + o.negatives), L = o.length, H = c.hidden_size,
                I = c.intermediate_size, heads = c.num_heads, d = c.head_dim();
  int64_t global_layers = 0;
  for (int64_t layer = 0; layer < c.num_layers; ++layer) global_layers += c.is_global_layer(layer);
  std::printf(
      "\nParts, forward + backward, %lld x %lld positions (model FLOPs x 3):\n\n| part | seconds | "
      "GFLOP/s | of matmul | count | per step s |\n|---|---:|---:|---:|---:|---:|\n",
      static_cast<long long>(N), static_cast<long long>(L));
  auto report = [&](const std::string& part, double forward_flops, int64_t count,
                    const std::function<void()>& run) {
    run();  // warm-up
    std::vector<double> times;
    for (int r = 0; r < o.steps; ++r) {
      const auto start = Clock::now();
      run();
      times.push_back(lmk::bench::seconds_since(start));
    }
    const double seconds = median(times), gflops = 3 * forward_flops / seconds / 1e9;
    std::printf("| %s | %.3f | %.1f | %.0f%% | %lld | %.3f |\n", part.c_str(), seconds, gflops,
                100.0 * gflops / matmul, static_cast<long long>(count),
                seconds * static_cast<double>(count));
    std::fflush(stdout);
  };
  auto weight = [](std::vector<int64_t> shape) {
    return (at::randn(shape) * 0.02).requires_grad_();
  };
  // Backward of outputs against random upstream gradients.
  auto backward = [](const std::vector<at::Tensor>& outputs) {
    std::vector<at::Tensor> gradients;
    for (const at::Tensor& t : outputs) gradients.push_back(at::randn_like(t));
    torch::autograd::backward(outputs, gradients);
  };
  {
    const at::Tensor x = at::randn({N, L, H}).requires_grad_(),
                     mid = at::randn({N, L, I}).requires_grad_();
    const at::Tensor wqkv = weight({3 * H, H}), wo = weight({H, H}), wi = weight({2 * I, H}),
                     wo2 = weight({H, I});
    report("projections of one layer (Wqkv, Wo, Wi, Wo)", 2.0 * N * L * (4 * H * H + 3 * H * I),
           c.num_layers, [&] {
             backward(
                 {at::linear(x, wqkv), at::linear(x, wo), at::linear(x, wi), at::linear(mid, wo2)});
           });
  }
  {
    // q, k, v as views of one [N, L, 3, heads, d] projection, as the encoder slices Wqkv's output.
    const at::Tensor qkv = at::randn({N, L, 3, heads, d}).requires_grad_();
    const at::Tensor key_mask = at::ones({N, L}, at::kBool);
    auto attention = [&](int64_t half_window) {
      const at::Tensor q = qkv.select(2, 0).transpose(1, 2), k = qkv.select(2, 1).transpose(1, 2),
                       v = qkv.select(2, 2).transpose(1, 2);
      backward({lmk::blockwise_attention(q, k, v, key_mask, half_window, 0)});
    };
    const double window = std::min<double>(L, 2 * c.half_window() + 1);
    report("attention, global layer", 4.0 * N * L * L * H, global_layers, [&] { attention(-1); });
    report("attention, local layer (FLOPs of the window)", 4.0 * N * L * window * H,
           c.num_layers - global_layers, [&] { attention(c.half_window()); });
  }
  {
    lmk::Encoder encoder(c, 1);
    const auto P = static_cast<int64_t>(0.3 * static_cast<double>(o.batch * L));
    const at::Tensor hidden = at::randn({P, H}).requires_grad_();
    const at::Tensor target = at::randint(5, o.vocab, {P}, at::kLong);
    report("MLM head (dense, decoder, cross-entropy) at 30 % of the MLM batch",
           2.0 * P * (H * H + H * static_cast<double>(o.vocab)), 1,
           [&] { at::cross_entropy_loss(encoder.mlm_logits(hidden), target).backward(); });
  }
}
}  // namespace

int main(int argc, char** argv) {
  lmk::configure_memory();
  BenchOptions o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--preset")
      o.preset = value;
    else if (flag == "--length")
      o.length = std::stoll(value);
    else if (flag == "--query-length")
      o.query_length = std::stoll(value);
    else if (flag == "--batch")
      o.batch = std::stoll(value);
    else if (flag == "--negatives")
      o.negatives = std::stoll(value);
    else if (flag == "--vocab")
      o.vocab = std::stoll(value);
    else if (flag == "--steps")
      o.steps = std::stoi(value);
    else if (flag == "--warmup")
      o.warmup = std::stoi(value);
    else if (flag == "--threads")
      o.threads = std::stoi(value);
    else if (flag == "--runs")
      o.runs = value;
    else if (flag == "--recompute")
      o.recompute = value == "1";
    else if (flag == "--attention-backward" && (value == "fused" || value == "ops"))
      o.fused_backward = value == "fused";
    else if (flag == "--attention-products" && (value == "micro" || value == "blas"))
      o.micro_products = value == "micro";
    else if (flag == "--architecture")
      o.architecture = value;
    else if (flag == "--bidirectional")
      o.bidirectional = value == "1";
    else if (flag == "--lora")
      o.lora = std::stoll(value);
    else {
      std::fprintf(stderr, "lmk_train_bench: unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  if (o.steps < 1 || o.warmup < 0 || o.batch < 1 || o.length < 8 || o.query_length < 4) {
    std::fprintf(stderr, "lmk_train_bench: --steps, --batch >= 1, --length >= 8 expected\n");
    return 2;
  }
  const int threads = lmk::configure_threads(o.threads);
  lmk::set_fused_attention_backward(o.fused_backward);
  lmk::set_attention_products(o.micro_products ? lmk::AttentionProducts::MicroKernel
                                               : lmk::AttentionProducts::Blas);
  // A word-level tokenizer of vocab ids: "w<i>" is id 5 + i; [PAD] [UNK] [CLS] [SEP] [MASK] 0-4.
  lmk::testing::TempDir dir;
  const std::string tokenizer_path = dir.write(
      "tokenizer.json", lmk::testing::word_level_json(static_cast<int>(o.vocab - 5)).dump());
  const std::unique_ptr<lmk::Tokenizer> tokenizer = lmk::load_tokenizer(tokenizer_path);
  const std::string out_dir = (dir.path() / "runs").string();

  const long setup_rss = lmk::bench::peak_rss_mb();
  const double matmul_before = lmk::bench::matmul_gflops();
  const lmk::BlasInfo blas = lmk::detect_blas();
  std::printf(
      "preset %s, %d threads, BLAS %s (%s), idle threads %s, vocab %lld, batch %lld, length %lld, "
      "queries %lld, "
      "%lld hard negative(s); %d warm-up + %d measured steps (medians); layers recomputed in "
      "the backward: %s; attention backward: %s; architecture %s%s; LoRA rank %lld; peak RSS "
      "after setup %ld MB\n",
      o.preset.c_str(), threads, blas.name.c_str(), blas.library.c_str(),
      lmk::waiting_settings().c_str(), static_cast<long long>(o.vocab),
      static_cast<long long>(o.batch), static_cast<long long>(o.length),
      static_cast<long long>(o.query_length), static_cast<long long>(o.negatives), o.warmup,
      o.steps, o.recompute ? "yes" : "no", o.fused_backward ? "fused" : "tensor ops",
      o.architecture.c_str(), o.bidirectional ? " (bidirectional)" : "",
      static_cast<long long>(o.lora), setup_rss);
  std::fflush(stdout);
  auto wanted = [&](const std::string& run) {
    return ("," + o.runs + ",").find("," + run + ",") != std::string::npos;
  };
  std::vector<std::pair<const char*, std::vector<StepRecord>>> rows;
  if (wanted("mlm")) rows.emplace_back("MLM", bench_mlm(*tokenizer, tokenizer_path, out_dir, o));
  if (wanted("lmk"))
    rows.emplace_back(
        "contrastive, LMK g=32",
        bench_contrastive(*tokenizer, tokenizer_path, out_dir, lmk::Pooling::Landmark, o));
  if (wanted("cls"))
    rows.emplace_back("contrastive, CLS",
                      bench_contrastive(*tokenizer, tokenizer_path, out_dir, lmk::Pooling::Cls, o));
  const double matmul_after = lmk::bench::matmul_gflops();
  const double matmul = (matmul_before + matmul_after) / 2;
  std::printf(
      "fp32 matmul 2048^2: %.1f GFLOP/s before, %.1f after; share of matmul against their "
      "mean %.1f\n\n",
      matmul_before, matmul_after, matmul);
  // Another process on the two cores shows up as a matmul rate that moved during the run.
  if (std::abs(matmul_before - matmul_after) > 0.15 * matmul)
    std::printf(
        "warning: the matmul rate moved by more than 15 %% during the run: was the machine "
        "busy? (uptime)\n\n");
  std::printf(
      "| step | tokens/step | GFLOP/step | seconds | fastest s | tokens/s | GFLOP/s | of matmul | "
      "forward s "
      "| backward s | optimizer s | peak RSS MB |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& [name, records] : rows) print_row(name, records, matmul);
  if (wanted("parts")) print_parts(o, matmul);
  return 0;
}
