#include "core/train/training_config.h"

#include <map>

#include "core/pool/pooling_kind.h"
#include "core/tokenize/landmark.h"
#include "core/util/error.h"
#include "core/util/toml_config.h"

namespace lmk {

namespace {

void check_pooling(const std::string& name, const std::string& where) {
  if (name.empty()) return;    // the model folder's
  parse_pooling(name, where);  // an unknown name fails here, not later
}

void check_landmarks(const std::string& spec, const std::string& where) {
  if (!spec.empty()) LandmarkSpec::parse(spec, where);
}

// A training config file: the settings every training reads (training_settings) and the kind's
// own (`own`), every other key refused.
template <typename Config>
Config read_training_config(const std::string& path, const SettingsTable<Config>& own) {
  std::map<std::string, std::vector<std::string>> known;
  add_setting_keys(known, training_settings());
  add_setting_keys(known, own);
  const TomlConfig toml(path, known);
  Config c;
  read_settings(toml, training_settings(), static_cast<TrainingSettings&>(c));
  read_settings(toml, own, c);
  return c;
}

}  // namespace

const SettingsTable<TrainingSettings>& training_settings() {
  using S = Setting<TrainingSettings>;
  using T = TrainingSettings;
  static const SettingsTable<TrainingSettings> table = {
      S("model", "init", &T::init_model).path().required().recorded(),
      S("output", "dir", &T::out_dir).path().required().recorded(),
      S("output", "db", &T::db).path(),
      S("output", "experiment", &T::experiment),
      S("output", "run_name", &T::run_name),
      S("train", "learning_rate", &T::learning_rate).range(0, 1).recorded(),
      S("train", "weight_decay", &T::weight_decay).range(0, 10).recorded(),
      S("train", "warmup_ratio", &T::warmup_ratio).range(0, 1).recorded(),
      S("train", "max_grad_norm", &T::max_grad_norm).range(0, 1e6).recorded(),
      S("train", "batch_size", &T::batch_size).at_least(1).recorded(),
      S("train", "accumulation", &T::accumulation).at_least(1).recorded(),
      S("train", "epochs", &T::epochs).at_least(1).recorded(),
      S("train", "max_steps", &T::max_steps).at_least(0).recorded(),
      S("train", "seed", &T::seed).at_least(0).recorded(),
      S("train", "checkpoint_every", &T::checkpoint_every).at_least(0),
      S("train", "log_every", &T::log_every).at_least(1),
      S("train", "device", &T::device),
      S("train", "recompute_layers", &T::recompute_layers),
      S("lora", "rank", &T::lora_rank).at_least(0).recorded(),
      S("lora", "alpha", &T::lora_alpha).range(1e-6, 1e6).recorded(),
      S("lora", "dropout", &T::lora_dropout).range(0, 0.99).recorded(),
      S("lora", "target_modules", &T::lora_targets).one_text_or_many().recorded(),
  };
  return table;
}

const SettingsTable<ContrastiveConfig>& contrastive_settings() {
  using S = Setting<ContrastiveConfig>;
  using C = ContrastiveConfig;
  static const SettingsTable<ContrastiveConfig> table = {
      S("data", "train", &C::train_files).one_text_or_many().path().required().recorded(),
      S("data", "dev", &C::dev_dataset).path().recorded(),
      S("data", "stream", &C::stream).recorded(),
      S("train", "pooling", &C::pooling).checked(check_pooling).recorded(),
      S("train", "train_landmarks", &C::train_landmarks).checked(check_landmarks).recorded(),
      S("train", "eval_landmarks", &C::eval_landmarks).checked(check_landmarks).recorded(),
      S("train", "granularity", &C::granularity).at_least(0).recorded(),
      S("train", "query_max_length", &C::query_max_length).at_least(4).recorded(),
      S("train", "passage_max_length", &C::passage_max_length).at_least(4).recorded(),
      S("train", "query_prefix", &C::query_prefix).recorded(),
      S("train", "passage_prefix", &C::passage_prefix).recorded(),
      S("train", "temperature", &C::temperature).range(1e-4, 100).recorded(),
      S("train", "negatives", &C::negatives).at_least(0).recorded(),
      S("train", "eval_every", &C::eval_every).at_least(0),
  };
  return table;
}

ContrastiveConfig read_contrastive_config(const std::string& path) {
  return read_training_config(path, contrastive_settings());
}

const SettingsTable<PretrainConfig>& pretrain_settings() {
  using S = Setting<PretrainConfig>;
  using P = PretrainConfig;
  static const SettingsTable<PretrainConfig> table = {
      S("data", "train", &P::train).one_text_or_many().path().required().recorded(),
      S("train", "max_length", &P::max_length).at_least(8).recorded(),
      S("train", "mask_rate", &P::mask_rate).range(0.01, 0.99).recorded(),
  };
  return table;
}

PretrainConfig read_pretrain_config(const std::string& path) {
  return read_training_config(path, pretrain_settings());
}

}  // namespace lmk
