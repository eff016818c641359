#include "engine/train/contrastive.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/data/dataset_dir.h"
#include "core/data/formats.h"
#include "core/data/jsonl.h"
#include "core/tokenize/batching.h"
#include "core/tokenize/landmark.h"
#include "core/util/error.h"
#include "core/util/json_util.h"
#include "engine/embed/embed.h"
#include "engine/embed/model_folder.h"
#include "engine/eval/retrieval.h"
#include "engine/train/loop.h"
#include "engine/train/losses.h"

namespace lmk {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json config_json(const ContrastiveConfig& c) {
  json j = json::object();
  add_settings_json(j, training_settings(), static_cast<const TrainingSettings&>(c));
  add_settings_json(j, contrastive_settings(), c);
  return j;
}

// The training files' examples in file order, one at a time (plain or gzip): a streamed run
// holds one global batch, never the whole file.
class ExampleStream {
 public:
  explicit ExampleStream(std::vector<std::string> files) : files_(std::move(files)) {}

  // Every example of the files (a pass that keeps none).
  int64_t count() const {
    int64_t n = 0;
    for (const std::string& file : files_)
      for_each_training_example(file, [&](TrainingExample&&, const std::string&) {
        ++n;
        return true;
      });
    return n;
  }
  // Goes to the n-th example of the files (from their start).
  void seek(int64_t n) {
    file_ = 0;
    open();
    for (int64_t i = 0; i < n; ++i) next();
  }
  // The next example; the files are read again from the start after the last one.
  TrainingExample next() {
    nlohmann::json value;
    std::string where;
    for (size_t tried = 0; tried <= files_.size(); ++tried) {
      if (reader_ && reader_->next(value, where)) return parse_training_example(value, where);
      file_ = reader_ ? (file_ + 1) % files_.size() : 0;
      open();
    }
    throw input_error(files_.front(), "no training examples");
  }

 private:
  void open() {
    reader_.reset();
    in_ = std::make_unique<std::ifstream>(open_input(files_[file_]));
    reader_ = std::make_unique<JsonlReader>(NamedInput{*in_, files_[file_]});
  }
  std::vector<std::string> files_;
  size_t file_ = 0;
  std::unique_ptr<std::ifstream> in_;
  std::unique_ptr<JsonlReader> reader_;
};

// One micro-batch: queries, passages (group per query), teacher scores when every example has them.
struct MicroBatch {
  std::vector<std::string> queries, passages;
  std::vector<double> teacher;  // [queries * group] or empty
};

// Whether assemble finds a teacher score for each of the example's 1 + negatives passages.
bool has_teacher_scores(const TrainingExample& e, int64_t negatives) {
  return !e.pos_scores.empty() && (negatives == 0 || (!e.neg.empty() && !e.neg_scores.empty()));
}

// The micro-batch of the `picked` examples; with_teacher (every example of the whole global
// batch has scores, so that every process makes the same choice) keeps the teacher scores.
MicroBatch assemble(const std::vector<TrainingExample>& examples, const std::vector<size_t>& picked,
                    int64_t negatives, uint64_t seed, bool with_teacher) {
  MicroBatch batch;
  for (size_t example : picked) {
    const TrainingExample& e = examples[example];
    uint64_t state = splitmix64(seed ^ (example * 0x9FB21C651E98DF25ULL));
    auto draw = [&](size_t n) {
      state = splitmix64(state);
      return static_cast<size_t>(state % n);
    };
    const size_t pos = draw(e.pos.size());
    batch.queries.push_back(e.query);
    batch.passages.push_back(e.pos[pos]);
    std::vector<double> scores;
    if (!e.pos_scores.empty()) scores.push_back(e.pos_scores[pos]);
    for (int64_t n = 0; n < negatives; ++n) {
      if (!e.neg.empty()) {
        const size_t k = draw(e.neg.size());
        batch.passages.push_back(e.neg[k]);
        if (!e.neg_scores.empty()) scores.push_back(e.neg_scores[k]);
      } else {
        // No hard negative: another example's positive.
        const size_t other = (example + 1 + draw(examples.size() - 1)) % examples.size();
        batch.passages.push_back(examples[other].pos[0]);
      }
    }
    if (with_teacher) batch.teacher.insert(batch.teacher.end(), scores.begin(), scores.end());
  }
  return batch;
}

// Embeds texts with gradients: tokenized (with the row seeds of `first_row` on), one padded
// batch, the embedding stage.
at::Tensor embed(const LoadedModel& model, const LandmarkTokenizer& tokenizer,
                 const std::vector<std::string>& texts, const std::string& prefix,
                 uint64_t first_row, const PoolingPlan& plan, int32_t pad,
                 const c10::Device& device, int64_t* tokens) {
  std::vector<TokenizedText> inputs;
  std::vector<size_t> rows;
  for (size_t i = 0; i < texts.size(); ++i) {
    inputs.push_back(tokenizer.tokenize(prefix + texts[i], first_row + i));
    rows.push_back(i);
    *tokens += static_cast<int64_t>(inputs.back().ids.size());
  }
  // The encoder runs on `device` (bf16 autocast on CUDA), pooling there in fp32; the pooled
  // rows come back to the CPU, where the loss is computed in fp32 (embed_batch).
  const BfloatAutocast autocast(device.is_cuda());
  return embed_batch(model, make_batch(inputs, rows, pad), plan, device);
}

// The examples a run trains on, one micro-batch at a time: every example in memory (shuffled
// per epoch), or streamed in file order. Data parallel: a micro-batch is global_batch examples of
// the seeded order, of which this process takes the rank-th batch_size; every seeded draw is keyed
// by the global example and row, so N processes see exactly the batches of one process with N x
// batch_size.
class MicroBatches {
 public:
  MicroBatches(const ContrastiveConfig& config, const DistributedContext& dist)
      : config_(config),
        stream_(config.train_files),
        global_batch_(config.batch_size * dist.world_size()),
        first_local_(config.batch_size * dist.rank()) {
    if (config.stream) {
      count_ = stream_.count();
    } else {
      for (const std::string& file : config.train_files)
        for_each_training_example(file, [&](TrainingExample&& e, const std::string&) {
          examples_.push_back(std::move(e));
          return true;
        });
      count_ = static_cast<int64_t>(examples_.size());
    }
    if (count_ < std::max<int64_t>(2, global_batch_))
      throw input_error(config.train_files.front(), "fewer examples (" + std::to_string(count_) +
                                                        ") than one batch of " +
                                                        std::to_string(global_batch_));
    if (config.stream && global_batch_ < 2)
      throw input_error("[data] stream",
                        "needs a global batch of 2 or more (a batch's other examples stand in for "
                        "missing hard negatives)");
  }

  int64_t global_batch() const { return global_batch_; }
  // This process's first example within a global batch.
  int64_t first_local() const { return first_local_; }
  int64_t per_epoch() const { return count_ / global_batch_; }

  // This process's share of micro-batch `index` (counted over epochs).
  MicroBatch get(int64_t index) {
    const int64_t epoch = index / per_epoch(), within = index % per_epoch();
    const uint64_t seed = config_.seed ^ static_cast<uint64_t>(index) * 0xC2B2AE3D27D4EB4FULL;
    std::vector<size_t> picked;
    if (config_.stream) {
      // The global batch `within` of the file order (every epoch the same order); a new epoch,
      // or a resumed run, starts reading where that batch is.
      if (stream_at_ != index || within == 0) stream_.seek(within * global_batch_);
      window_.clear();
      for (int64_t i = 0; i < global_batch_; ++i) window_.push_back(stream_.next());
      stream_at_ = index + 1;
      for (int64_t i = 0; i < config_.batch_size; ++i)
        picked.push_back(static_cast<size_t>(first_local_ + i));
      return assemble(window_, picked, config_.negatives, seed, with_teacher(window_, {}));
    }
    if (epoch != order_epoch_) {
      order_ = shuffled_order(examples_.size(), config_.seed, epoch);
      order_epoch_ = epoch;
    }
    const auto global_begin = order_.begin() + within * global_batch_;
    picked.assign(global_begin + first_local_, global_begin + first_local_ + config_.batch_size);
    return assemble(examples_, picked, config_.negatives, seed,
                    with_teacher(examples_, {global_begin, global_begin + global_batch_}));
  }

 private:
  // Whether every example of the global batch (`global`: its indices into `examples`; empty:
  // all of them) has teacher scores, so that every process makes the same choice.
  bool with_teacher(const std::vector<TrainingExample>& examples,
                    const std::vector<size_t>& global) const {
    auto scored = [&](const TrainingExample& e) {
      return has_teacher_scores(e, config_.negatives);
    };
    if (global.empty()) return std::all_of(examples.begin(), examples.end(), scored);
    return std::all_of(global.begin(), global.end(),
                       [&](size_t example) { return scored(examples[example]); });
  }

  const ContrastiveConfig& config_;
  std::vector<TrainingExample> examples_;  // in memory
  ExampleStream stream_;                   // streamed
  int64_t count_ = 0;
  const int64_t global_batch_, first_local_;
  std::vector<size_t> order_;  // the example order of epoch order_epoch_
  int64_t order_epoch_ = -1;
  int64_t stream_at_ = -1;               // streamed: the micro-batch the stream stands before
  std::vector<TrainingExample> window_;  // streamed: the global batch read last
};

// The model to train: the checkpoint's when resuming, else the initial folder, with the config's
// pooling settings, on the config's device; and the initial folder's tokenizer.
struct TrainedModel {
  LoadedModel model;
  std::unique_ptr<Tokenizer> tokenizer;
  PoolingPlan plan;
  c10::Device device = c10::kCPU;
};

TrainedModel load_model(const ContrastiveConfig& config, bool resume) {
  TrainedModel trained;
  trained.model = load_training_model(config, resume);
  trained.tokenizer = load_tokenizer(config.init_model);
  LoadedModel& model = trained.model;
  PoolingSettings settings = model.pooling;
  if (!config.pooling.empty()) settings.pooling = parse_pooling(config.pooling, "pooling");
  if (!config.train_landmarks.empty())
    settings.landmarks.train = LandmarkSpec::parse(config.train_landmarks, "train_landmarks");
  if (!config.eval_landmarks.empty())
    settings.landmarks.eval = LandmarkSpec::parse(config.eval_landmarks, "eval_landmarks");
  settings.max_seq_length = config.passage_max_length;
  model.pooling = settings;
  trained.plan = plan_pooling(settings.pooling, static_cast<int>(config.granularity), settings,
                              model.latent.get(), /*normalize=*/true, config.init_model);
  trained.device = process_device(config.device);
  if (trained.device.is_cuda() && model.latent)
    throw input_error("[train] device", "latent-attention pooling trains on the CPU only");
  model.encoder->to(trained.device);  // before the loop: its optimizer follows the parameters
  model.encoder->set_recompute_layers(config.recompute_layers);
  return trained;
}

// nDCG@10 on the dev dataset, as lmk eval computes it with the training's lengths and prefixes.
double evaluate_dev(const ContrastiveConfig& config, const TrainedModel& trained) {
  at::NoGradGuard no_grad;
  RetrievalOptions options;
  options.encode.pooling = trained.model.pooling.pooling;
  options.encode.device = trained.device.str();
  options.encode.granularity = static_cast<int>(config.granularity);
  options.encode.max_length = static_cast<size_t>(config.passage_max_length);
  options.query_max_length = static_cast<size_t>(config.query_max_length);
  options.query_prefix = config.query_prefix;
  options.document_prefix = config.passage_prefix;
  options.show_progress = false;
  const SplitEvaluation result =
      evaluate_retrieval(trained.model, *trained.tokenizer, read_beir(config.dev_dataset, "dev"),
                         options, trained.plan);
  return result.metrics.overall.values.at("ndcg_at_10");
}

}  // namespace

TrainSummary train_contrastive(const ContrastiveConfig& config, bool resume, bool progress_json,
                               const DistributedContext& dist) {
  TrainedModel trained = load_model(config, resume);
  LoadedModel& model = trained.model;
  const PoolingPlan& plan = trained.plan;
  const c10::Device device = trained.device;
  const Tokenizer& tokenizer = *trained.tokenizer;
  MicroBatches batches(config, dist);
  const int64_t global_batch = batches.global_batch(), first_local = batches.first_local();
  const int64_t steps_per_epoch = std::max<int64_t>(1, batches.per_epoch() / config.accumulation);
  const int64_t group = 1 + config.negatives;

  // Landmark layout at training time (variable granularity is drawn per row).
  const LandmarkSpec& train_spec = plan.train_landmarks;
  LandmarkOptions query_options{train_spec, static_cast<size_t>(config.query_max_length),
                                std::nullopt, config.seed};
  LandmarkOptions passage_options{train_spec, static_cast<size_t>(config.passage_max_length),
                                  std::nullopt, config.seed + 1};
  query_options.decoder = passage_options.decoder = model.encoder->config().is_decoder();
  const LandmarkTokenizer query_tokenizer(tokenizer, query_options);
  const LandmarkTokenizer passage_tokenizer(tokenizer, passage_options);
  const int32_t pad = tokenizer.special_tokens().pad.value_or(0);

  const LoopOptions options = loop_options(
      config, "train", config_json(config),
      config.max_steps > 0 ? config.max_steps : config.epochs * steps_per_epoch, progress_json);
  TrainingLoop loop(options, model, resume, dist);
  TrainSummary summary;
  summary.best_dev = loop.extra_state().value("best_dev", -1.0);

  loop.run(
      [&](int64_t step) {
        double step_loss = 0;
        for (int64_t micro = 0; micro < config.accumulation; ++micro) {
          const int64_t index = step * config.accumulation + micro;  // micro-batch, over epochs
          const MicroBatch batch = batches.get(index);
          // Row seeds (variable granularity) of the global batch: queries first_local + i,
          // passages first_local * group + i after the micro-batch's first row.
          const auto row =
              static_cast<uint64_t>(index) * static_cast<uint64_t>(global_batch * group);
          int64_t tokens = 0;
          const at::Tensor q = embed(model, query_tokenizer, batch.queries, config.query_prefix,
                                     row + static_cast<uint64_t>(first_local), plan, pad, device,
                                     &tokens);  // [B, H]
          const at::Tensor p =
              embed(model, passage_tokenizer, batch.passages, config.passage_prefix,
                    row + static_cast<uint64_t>(first_local * group), plan, pad, device,
                    &tokens);  // [B * group, H]
          loop.add_tokens(tokens);
          // InfoNCE scores each query against every process's passages ([W * B * group, H]);
          // distillation reads only a query's own group. Either way this process's loss is
          // the mean over its queries, and the loop's gradient average makes the step the
          // combined batch's.
          const at::Tensor loss =
              batch.teacher.empty()
                  ? info_nce_loss(q, all_gather_with_gradient(dist, p), group, config.temperature,
                                  first_local)
                  : distillation_loss(
                        q, p, group,
                        at::tensor(batch.teacher, at::kDouble).view({q.size(0), group}),
                        config.temperature);
          const double value = loss.item<double>();
          // A NaN still runs backward: the other processes wait in its all-reduce, and the
          // loop stops every process after the step.
          (loss / static_cast<double>(config.accumulation)).backward();
          step_loss += value / static_cast<double>(config.accumulation);
        }
        return step_loss;
      },
      [&](int64_t step) {
        const bool last = step == options.total_steps;
        if (!(config.eval_every > 0 && step % config.eval_every == 0) && !last) return;
        if (config.dev_dataset.empty()) return;
        // Rank 0 evaluates and keeps the best model (every process holds the same weights);
        // the others wait for it.
        if (dist.is_main()) {
          const double dev = evaluate_dev(config, trained);
          loop.log({{"dev.ndcg_at_10", dev}});
          if (dev > summary.best_dev) {
            summary.best_dev = dev;
            loop.extra_state()["best_dev"] = dev;
            loop.save_model("best");
          }
        }
        dist.barrier();
      });
  summary.steps = loop.step();
  summary.losses = loop.losses();
  return summary;
}

}  // namespace lmk
