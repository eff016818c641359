#include "engine/train/pretrain.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/data/generators.h"
#include "core/data/jsonl.h"
#include "core/train/mlm_data.h"
#include "core/util/error.h"
#include "core/util/json_util.h"
#include "engine/embed/embed.h"
#include "engine/embed/model_folder.h"
#include "engine/train/loop.h"

namespace lmk {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json config_json(const PretrainConfig& c) {
  json j = json::object();
  add_settings_json(j, training_settings(), static_cast<const TrainingSettings&>(c));
  add_settings_json(j, pretrain_settings(), c);
  return j;
}

// The texts of a folder of .txt files, or of a jsonl file's "text" fields.
std::vector<std::string> read_texts(const std::string& path) {
  std::vector<std::string> texts;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (Document& d : read_text_folder(path, 1)) texts.push_back(std::move(d.text));
    return texts;
  }
  for_each_jsonl(path, [&](json& line, const std::string& where) {
    texts.push_back(json_util::get<std::string>(line, "text", where));
    return true;
  });
  if (texts.empty()) throw input_error(path, "no texts");
  return texts;
}

}  // namespace

MlmBatch make_mlm_batch(const std::vector<MaskedSequence>& masked, int32_t pad) {
  size_t length = 0;
  for (const MaskedSequence& m : masked) length = std::max(length, m.input_ids.size());
  std::vector<int32_t> ids, labels, attention;
  for (const MaskedSequence& m : masked) {
    const size_t n = m.input_ids.size();
    ids.insert(ids.end(), m.input_ids.begin(), m.input_ids.end());
    ids.insert(ids.end(), length - n, pad);
    labels.insert(labels.end(), m.labels.begin(), m.labels.end());
    labels.insert(labels.end(), length - n, -100);
    attention.insert(attention.end(), n, 1);
    attention.insert(attention.end(), length - n, 0);
  }
  MlmBatch batch;
  batch.rows = static_cast<int64_t>(masked.size());
  batch.length = static_cast<int64_t>(length);
  batch.input = at::tensor(ids, at::kInt).view({batch.rows, batch.length}).to(at::kLong);
  batch.mask = at::tensor(attention, at::kInt).view({batch.rows, batch.length}).to(at::kLong);
  batch.target = at::tensor(labels, at::kInt).to(at::kLong);  // [B * L]
  batch.predicted = batch.target.ne(-100).nonzero().squeeze(1);
  return batch;
}

PretrainSummary pretrain_mlm(const PretrainConfig& config, bool resume, bool progress_json,
                             const DistributedContext& dist) {
  LoadedModel model = load_training_model(config, resume);
  // The objective follows the attention: a causal decoder predicts each next token (masked
  // tokens would be guessed from the left alone), every other model the masked ones.
  const bool next_token = model.encoder->config().is_decoder() && model.encoder->config().causal;
  const auto tokenizer = load_tokenizer(config.init_model);
  const SpecialTokens special = tokenizer->special_tokens();
  if (!next_token && !special.mask)
    throw InputError(config.init_model + ": the tokenizer has no mask token");
  // Sequences open with [CLS] / BOS (a decoder without one, Qwen's: with its end-of-text
  // token, which also separates the documents) and end with [SEP] / EOS.
  const int32_t sep = special.sep.value_or(special.eos.value_or(special.cls.value_or(0)));
  const int32_t cls = special.cls.value_or(special.bos.value_or(sep));
  const int32_t pad = special.pad.value_or(0);

  // Every document tokenized once, then packed.
  std::vector<std::vector<int32_t>> documents;
  for (const std::string& source : config.train)
    for (const std::string& text : read_texts(source))
      documents.push_back(tokenizer->encode(text).ids);
  const std::vector<std::vector<int32_t>> sequences =
      pack_sequences(documents, static_cast<size_t>(config.max_length), cls, sep);
  // Data parallel: this process takes the rank-th batch_size sequences of each global batch.
  const int64_t global_batch = config.batch_size * dist.world_size();
  const int64_t first_local = config.batch_size * dist.rank();
  if (sequences.size() < static_cast<size_t>(global_batch))
    throw input_error(config.train.front(),
                      "fewer packed sequences (" + std::to_string(sequences.size()) +
                          ") than one batch of " + std::to_string(global_batch));
  MaskingOptions masking;
  masking.mask_rate = config.mask_rate;
  masking.mask_id = special.mask.value_or(0);
  masking.vocab_size = static_cast<int32_t>(model.encoder->config().vocab_size);
  for (const auto& id : {special.cls, special.sep, special.pad, special.bos, special.eos,
                         special.mask, special.unk}) {
    if (id) masking.never_mask.push_back(*id);
  }
  // Random replacements come from the ordinary vocabulary: above the special ids.
  for (int32_t id : masking.never_mask)
    masking.first_random_id = std::max(masking.first_random_id, id + 1);
  if (masking.first_random_id >= masking.vocab_size) masking.first_random_id = 0;

  const int64_t micro_per_epoch = static_cast<int64_t>(sequences.size()) / global_batch;
  const int64_t steps_per_epoch = std::max<int64_t>(1, micro_per_epoch / config.accumulation);
  const c10::Device device = process_device(config.device);
  model.encoder->to(device);  // before the loop: its optimizer follows the parameters
  model.encoder->set_recompute_layers(config.recompute_layers);
  const LoopOptions options = loop_options(
      config, "pretrain", config_json(config),
      config.max_steps > 0 ? config.max_steps : config.epochs * steps_per_epoch, progress_json);
  TrainingLoop loop(options, model, resume, dist);

  std::vector<size_t> order;
  int64_t order_epoch = -1;
  loop.run([&](int64_t step) {
    double step_loss = 0;
    for (int64_t micro = 0; micro < config.accumulation; ++micro) {
      const int64_t index = step * config.accumulation + micro;
      const int64_t epoch = index / micro_per_epoch, within = index % micro_per_epoch;
      if (epoch != order_epoch) {
        order = shuffled_order(sequences.size(), config.seed, epoch);
        order_epoch = epoch;
      }
      // Masked inputs (or next-token targets) of the micro-batch, padded to its longest.
      std::vector<MaskedSequence> masked;
      for (int64_t b = 0; b < config.batch_size; ++b) {
        const size_t s = order[static_cast<size_t>(within * global_batch + first_local + b)];
        // Masks differ per epoch: the draw is keyed by (seed, epoch, sequence).
        const uint64_t mask_seed =
            splitmix64(config.seed ^ splitmix64(static_cast<uint64_t>(epoch))) ^ s;
        masked.push_back(next_token ? next_token_targets(sequences[s])
                                    : mask_tokens(sequences[s], masking, mask_seed));
      }
      const MlmBatch batch = make_mlm_batch(masked, pad);
      loop.add_tokens(batch.rows * batch.length);
      const at::Tensor target = batch.target.to(device), predicted = batch.predicted.to(device);
      // The mean over the global batch's predicted tokens: this process's sum over its own, over
      // (global count / world size), since the loop averages the processes' gradients.
      const double global_masked = dist.sum(static_cast<double>(predicted.numel()));
      if (global_masked == 0 || predicted.numel() == 0) continue;  // nothing masked here
      at::Tensor logits;
      {
        // bf16 autocast on CUDA for the forward; the loss in fp32.
        const BfloatAutocast autocast(device.is_cuda());
        const at::Tensor hidden =
            model.encoder->forward(batch.input.to(device), batch.mask.to(device))
                .reshape({batch.rows * batch.length, -1});
        logits = model.encoder->mlm_logits(hidden.index_select(0, predicted));
      }
      const at::Tensor loss =
          at::cross_entropy_loss(logits.to(at::kFloat), target.index_select(0, predicted), {},
                                 at::Reduction::Sum)
              .div(global_masked / dist.world_size());
      const double value = loss.item<double>();
      // A NaN still runs backward; the loop stops every process after the step.
      (loss / static_cast<double>(config.accumulation)).backward();
      step_loss += value / static_cast<double>(config.accumulation);
    }
    return step_loss;
  });
  PretrainSummary summary;
  summary.steps = loop.step();
  summary.sequences = static_cast<int64_t>(sequences.size());
  summary.losses = loop.losses();
  return summary;
}

}  // namespace lmk
