#include "engine/embed/model_folder.h"

#include <ATen/ATen.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/model/safetensors.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/json_util.h"
#include "core/util/paper_defaults.h"

namespace lmk {

namespace fs = std::filesystem;
using nlohmann::json;
namespace ju = json_util;

namespace {

// The prefix Hugging Face's *ForMaskedLM (encoders) and *ForCausalLM (decoders) classes put
// before the model's tensors.
const char* encoder_prefix(const EncoderConfig& c) {
  switch (c.architecture) {
    case Architecture::ModernBert:
    case Architecture::Llama:
    case Architecture::Qwen3:
      return "model.";
    case Architecture::Bert:
      return "bert.";
    case Architecture::Gte:
      return c.gte_layout == GteLayout::RemoteCode ? "new." : "gte.";
  }
  return "";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "[2, 3]".
std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text;
  for (const int64_t d : shape) text += (text.empty() ? "" : ", ") + std::to_string(d);
  return "[" + text + "]";
}

// Tensors a checkpoint may hold that the encoder does not need: tied decoders, BERT's pooler
// and next-sentence head, position-id buffers.
bool ignorable(const std::string& name) {
  static const std::set<std::string> kNames = {"decoder.weight", "cls.predictions.decoder.weight",
                                               "cls.predictions.decoder.bias",
                                               "lm_head.decoder.weight", "embeddings.position_ids"};
  return kNames.count(name) || starts_with(name, "pooler.") ||
         starts_with(name, "cls.seq_relationship.");
}

at::ScalarType scalar_type(DType dtype, const std::string& where) {
  switch (dtype) {
    case DType::F32:
      return at::kFloat;
    case DType::F16:
      return at::kHalf;
    case DType::BF16:
      return at::kBFloat16;
    case DType::F64:
      return at::kDouble;
    default:
      throw input_error(where,
                        std::string("weights must be floating point, found ") + dtype_name(dtype));
  }
}

// Copies a tensor out of the mapped file (owning, aligned) as float32.
at::Tensor to_float_tensor(const SafetensorsFile& file, const TensorEntry& entry) {
  const std::string where = file.path() + ": tensor '" + entry.name + "'";
  at::Tensor raw =
      at::empty(entry.shape, at::TensorOptions().dtype(scalar_type(entry.dtype, where)));
  const std::string_view bytes = file.bytes(entry);
  std::memcpy(raw.data_ptr(), bytes.data(), bytes.size());
  return raw.to(at::kFloat);
}

// Tensors to write as one F32 safetensors file: each copied to the CPU as contiguous float32
// (from any device and dtype) and kept alive here until the file is written.
struct Float32Tensors {
  std::vector<at::Tensor> keep;
  std::vector<TensorToWrite> tensors;
  void add(const std::string& name, const at::Tensor& t) {
    keep.push_back(t.detach().to(at::kCPU, at::kFloat).contiguous());
    const at::Tensor& c = keep.back();
    tensors.push_back({name, DType::F32, c.sizes().vec(),
                       std::string_view(static_cast<const char*>(c.data_ptr()),
                                        static_cast<size_t>(c.numel()) * sizeof(float))});
  }
  void write(const std::string& path) const {
    write_safetensors(path, tensors, {{"format", "pt"}});
  }
};

// The weight files of a folder: model.safetensors, or the shards its index names.
std::vector<std::string> weight_files(const fs::path& dir) {
  if (fs::is_regular_file(dir / "model.safetensors")) return {(dir / "model.safetensors").string()};
  const fs::path index = dir / "model.safetensors.index.json";
  if (!fs::is_regular_file(index))
    throw input_error(dir.string(), "no model.safetensors or model.safetensors.index.json");
  const json j = ju::parse(read_file(index.string()), index.string());
  const json& map = ju::required(j, "weight_map", index.string());
  if (!map.is_object()) throw input_error(index.string() + ": weight_map", "expected an object");
  std::set<std::string> shards;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string shard =
        ju::convert<std::string>(it.value(), index.string() + ": weight_map." + it.key());
    if (shard.find('/') != std::string::npos || shard == "..")
      throw input_error(index.string(), "shard '" + shard + "' must be a file in the folder");
    shards.insert(shard);
  }
  std::vector<std::string> files;
  for (const auto& s : shards) files.push_back((dir / s).string());
  return files;
}

// A sentence-transformers folder's own pooling (modules.json: its Pooling module's config.json,
// a Normalize module; sentence_bert_config.json: max_seq_length), as sentence-transformers
// itself reads them. A folder without modules.json keeps the defaults (CLS, normalized).
PoolingSettings read_sentence_transformers_pooling(const fs::path& dir) {
  PoolingSettings settings;
  const fs::path modules_path = dir / "modules.json";
  if (!fs::is_regular_file(modules_path)) return settings;
  const std::string where = modules_path.string();
  const json modules = ju::parse(read_file(where), where);
  if (!modules.is_array()) throw input_error(where, "must be a JSON array of modules");
  bool normalize = false;
  for (size_t i = 0; i < modules.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const std::string type = ju::optional<std::string>(modules[i], "type", at, "");
    if (type == "sentence_transformers.models.Normalize") normalize = true;
    if (type != "sentence_transformers.models.Pooling") continue;
    const std::string folder = ju::optional<std::string>(modules[i], "path", at, "");
    if (folder.find("..") != std::string::npos)
      throw input_error(at + ".path", "must be a folder inside the model folder");
    const fs::path config_path = dir / folder / "config.json";
    const std::string config_where = config_path.string();
    if (!fs::is_regular_file(config_path)) throw input_error(config_where, "no such file");
    const json c = ju::parse(read_file(config_where), config_where);
    const auto mode = [&](const char* key) {
      return ju::optional<bool>(c, key, config_where, false);
    };
    if (mode("pooling_mode_cls_token")) {
      settings.pooling = Pooling::Cls;
    } else if (mode("pooling_mode_mean_tokens")) {
      settings.pooling = Pooling::Mean;
    } else if (mode("pooling_mode_lasttoken")) {
      settings.pooling = Pooling::Last;
    } else {
      throw input_error(config_where,
                        "a pooling lmk does not compute (it computes pooling_mode_cls_token, "
                        "pooling_mode_mean_tokens and pooling_mode_lasttoken)");
    }
  }
  settings.normalize = normalize;
  const fs::path st_config = dir / "sentence_bert_config.json";
  if (fs::is_regular_file(st_config)) {
    const std::string st_where = st_config.string();
    const json j = ju::parse(read_file(st_where), st_where);
    settings.max_seq_length = ju::optional<int64_t>(j, "max_seq_length", st_where, 512);
    if (settings.max_seq_length < 1)
      throw input_error(st_where + ": max_seq_length", "must be >= 1");
    settings.truncate_by_default = true;
  }
  return settings;
}

PoolingSettings read_pooling_settings(const fs::path& dir, json* latent_config) {
  PoolingSettings settings;
  const fs::path path = dir / "lmk_pooling.json";
  if (!fs::is_regular_file(path)) return read_sentence_transformers_pooling(dir);
  const std::string where = path.string();
  const json j = ju::parse(read_file(where), where);
  settings.pooling = parse_pooling(ju::get<std::string>(j, "pooling", where), where + ": pooling");
  settings.normalize = ju::optional<bool>(j, "normalize", where, true);
  settings.max_seq_length = ju::optional<int64_t>(j, "max_seq_length", where, 512);
  settings.landmarks.train = LandmarkSpec::parse(
      ju::optional<std::string>(j, "train_landmark", where, paper::train_landmarks_text()),
      where + ": train_landmark");
  settings.landmarks.eval = LandmarkSpec::parse(
      ju::optional<std::string>(j, "eval_landmark", where, paper::eval_landmarks_text()),
      where + ": eval_landmark");
  if (latent_config && j.contains("latent")) *latent_config = j["latent"];
  return settings;
}

void write_json(const fs::path& path, const json& j) {
  AtomicFile out(path.string());
  out.write(j.dump(2) + "\n");
  out.commit();
}

void copy_file_atomically(const fs::path& from, const fs::path& to) {
  AtomicFile out(to.string());
  out.write(read_file(from.string()));
  out.commit();
}

}  // namespace

LoadedModel load_model_folder(const std::string& dir_name) {
  const fs::path dir(dir_name);
  if (!fs::is_directory(dir)) throw input_error(dir_name, "not a model folder");
  const std::string config_path = (dir / "config.json").string();
  if (!fs::is_regular_file(config_path)) throw input_error(dir_name, "no config.json");
  LoadedModel model;
  const EncoderConfig config =
      EncoderConfig::from_json(ju::parse(read_file(config_path), config_path), config_path);
  json latent_config;
  model.pooling = read_pooling_settings(dir, &latent_config);
  model.encoder = std::make_unique<Encoder>(config, 0, /*initialize=*/false);
  const std::string prefix = encoder_prefix(config);

  std::set<std::string> loaded;
  at::NoGradGuard no_grad;
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  for (const auto& path : weight_files(dir))
    files.push_back(std::make_unique<SafetensorsFile>(path));

  // Latent attention pooling weights, when present, size their module.
  for (const auto& file : files) {
    if (const TensorEntry* latents = file->find("latent.latents")) {
      const TensorEntry* ffn_out = file->find("latent.ffn_out.weight");
      if (latents->shape.size() != 2 || !ffn_out || ffn_out->shape.size() != 2) {
        throw input_error(file->path(), "latent attention tensors are incomplete");
      }
      const int64_t heads =
          latent_config.is_object()
              ? ju::optional<int64_t>(latent_config, "heads", "lmk_pooling.json: latent", 8)
              : 8;
      model.latent = std::make_unique<LatentAttention>(config.hidden_size, latents->shape[0], heads,
                                                       ffn_out->shape[1]);
    }
  }

  for (const auto& file : files) {
    for (const TensorEntry& entry : file->header().tensors) {
      std::string name = entry.name;
      if (starts_with(name, prefix)) name = name.substr(prefix.size());
      if (ends_with(name, ".gamma")) name = name.substr(0, name.size() - 6) + ".weight";
      if (ends_with(name, ".beta")) name = name.substr(0, name.size() - 5) + ".bias";
      const std::map<std::string, at::Tensor>* targets = &model.encoder->named_weights();
      if (!targets->count(name) && model.latent && model.latent->named_weights().count(name))
        targets = &model.latent->named_weights();
      auto it = targets->find(name);
      if (it == targets->end()) {
        if (!ignorable(name)) model.unexpected.push_back(entry.name);
        continue;
      }
      if (entry.shape != it->second.sizes().vec()) {
        throw input_error(file->path() + ": tensor '" + entry.name + "'",
                          "shape " + shape_text(entry.shape) + ", the config needs " +
                              shape_text(it->second.sizes().vec()));
      }
      if (!loaded.insert(name).second)
        throw input_error(file->path() + ": tensor '" + entry.name + "'", "given twice");
      it->second.copy_(to_float_tensor(*file, entry));
    }
  }
  std::vector<std::string> missing;
  for (const auto& [name, tensor] : model.encoder->named_weights()) {
    if (loaded.count(name)) continue;
    if (model.encoder->is_head_weight(name)) {
      model.missing_head.push_back(name);
      model.encoder->initialize_weight(name);  // kept random, as a fresh head
    } else {
      missing.push_back(name);
    }
  }
  if (model.latent) {
    for (const auto& [name, tensor] : model.latent->named_weights()) {
      if (!loaded.count(name)) missing.push_back(name);
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 10; ++i) list += (i ? ", " : "") + missing[i];
    if (missing.size() > 10) list += ", ... (" + std::to_string(missing.size()) + " in all)";
    throw input_error(dir_name, "checkpoint lacks tensors: " + list);
  }
  return model;
}

void save_model_folder(const std::string& dir_name, const Encoder& encoder,
                       const std::string& tokenizer_path, const PoolingSettings& pooling,
                       const LatentAttention* latent) {
  const fs::path dir(dir_name);
  std::error_code ec;
  fs::create_directories(dir / "1_Pooling", ec);
  if (ec) throw input_error(dir_name, "cannot create folder: " + ec.message());
  const EncoderConfig& config = encoder.config();

  // Weights, named as Hugging Face's *ForMaskedLM classes name them.
  Float32Tensors weights;
  const std::string prefix = encoder_prefix(config);
  // With LoRA adapters attached, the adapted layers' weights merged (W + scale · B A): a plain
  // folder every tool reads; the adapters alone go to a PEFT folder (save_adapter_folder).
  for (const auto& [name, t] : encoder.named_weights())
    weights.add(encoder.is_head_weight(name) ? name : prefix + name, encoder.merged_weight(name));
  if (latent) {
    for (const auto& [name, t] : latent->named_weights()) weights.add(name, t);
  }
  weights.write((dir / "model.safetensors").string());
  write_json(dir / "config.json", config.to_json());

  // Tokenizer files.
  const fs::path tokenizer(tokenizer_path);
  if (fs::is_directory(tokenizer)) {
    bool any = false;
    for (const char* name : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                             "tokenizer.model", "spiece.model"}) {
      if (fs::is_regular_file(tokenizer / name)) {
        copy_file_atomically(tokenizer / name, dir / name);
        any = true;
      }
    }
    if (!any) throw input_error(tokenizer_path, "folder holds no tokenizer files");
  } else if (tokenizer.extension() == ".model") {
    copy_file_atomically(tokenizer, dir / "tokenizer.model");
  } else if (fs::is_regular_file(tokenizer)) {
    copy_file_atomically(tokenizer, dir / "tokenizer.json");
    if (fs::is_regular_file(tokenizer.parent_path() / "tokenizer_config.json")) {
      copy_file_atomically(tokenizer.parent_path() / "tokenizer_config.json",
                           dir / "tokenizer_config.json");
    }
  } else {
    throw input_error(tokenizer_path, "no such tokenizer");
  }

  // sentence-transformers: Transformer -> Pooling (-> Normalize).
  json modules = json::array({{{"idx", 0},
                               {"name", "0"},
                               {"path", ""},
                               {"type", "sentence_transformers.models.Transformer"}},
                              {{"idx", 1},
                               {"name", "1"},
                               {"path", "1_Pooling"},
                               {"type", "sentence_transformers.models.Pooling"}}});
  if (pooling.normalize) {
    modules.push_back({{"idx", 2},
                       {"name", "2"},
                       {"path", "2_Normalize"},
                       {"type", "sentence_transformers.models.Normalize"}});
    fs::create_directories(dir / "2_Normalize", ec);
  }
  write_json(dir / "modules.json", modules);
  write_json(dir / "sentence_bert_config.json",
             {{"max_seq_length", pooling.max_seq_length}, {"do_lower_case", false}});
  // Landmark pooling needs landmark tokens inserted by the tokenizer (sentence-transformers
  // PR #3642); lmk_pooling.json below is what reproduces it.
  write_json(dir / "1_Pooling" / "config.json",
             {{"word_embedding_dimension", config.hidden_size},
              {"pooling_mode_cls_token", pooling.pooling == Pooling::Cls},
              {"pooling_mode_mean_tokens", pooling.pooling == Pooling::Mean},
              {"pooling_mode_max_tokens", false},
              {"pooling_mode_mean_sqrt_len_tokens", false},
              {"pooling_mode_weightedmean_tokens", false},
              {"pooling_mode_lasttoken", pooling.pooling == Pooling::Last},
              {"include_prompt", true}});
  json settings = {{"pooling", pooling_name(pooling.pooling)},
                   {"normalize", pooling.normalize},
                   {"max_seq_length", pooling.max_seq_length},
                   {"train_landmark", pooling.landmarks.train.to_string()},
                   {"eval_landmark", pooling.landmarks.eval.to_string()}};
  if (latent) settings["latent"] = {{"latents", latent->latents()}, {"heads", latent->heads()}};
  write_json(dir / "lmk_pooling.json", settings);
}

// ---------------------------------------------------------------------------------------------
// PEFT LoRA adapter folders.

namespace {

constexpr const char* kPeftPrefix = "base_model.model.";

// The layer a PEFT tensor name adapts and which matrix it is ("A" / "B"), or nullopt.
std::optional<std::pair<std::string, std::string>> peft_tensor(std::string name,
                                                               const std::string& prefix) {
  if (starts_with(name, kPeftPrefix)) name = name.substr(std::strlen(kPeftPrefix));
  if (starts_with(name, prefix)) name = name.substr(prefix.size());
  for (const char* matrix : {"A", "B"}) {
    const std::string suffix = std::string(".lora_") + matrix + ".weight";
    if (ends_with(name, suffix))
      return std::make_pair(name.substr(0, name.size() - suffix.size()), std::string(matrix));
  }
  return std::nullopt;
}

}  // namespace

void save_adapter_folder(const std::string& dir_name, const Encoder& encoder,
                         const std::string& base_model) {
  const LoraSettings& lora = encoder.lora();
  if (lora.rank < 1) throw input_error(dir_name, "the model has no LoRA adapters to save");
  const fs::path dir(dir_name);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw input_error(dir_name, "cannot create folder: " + ec.message());
  Float32Tensors matrices;
  json targets = json::array();
  for (const auto& [name, adapter] : encoder.linear_layers()) {
    if (!adapter->attached()) continue;
    targets.push_back(name);
    matrices.add(kPeftPrefix + name + ".lora_A.weight", adapter->a);
    matrices.add(kPeftPrefix + name + ".lora_B.weight", adapter->b);
  }
  matrices.write((dir / "adapter_model.safetensors").string());
  std::error_code absolute_ec;
  const fs::path base = fs::absolute(base_model, absolute_ec);
  write_json(dir / "adapter_config.json",
             {{"peft_type", "LORA"},
              {"task_type", "FEATURE_EXTRACTION"},
              {"base_model_name_or_path", absolute_ec ? base_model : base.string()},
              {"r", lora.rank},
              {"lora_alpha", lora.alpha},
              {"lora_dropout", lora.dropout},
              {"target_modules", targets},
              {"bias", "none"},
              {"fan_in_fan_out", false},
              {"use_rslora", false},
              {"use_dora", false},
              {"init_lora_weights", true},
              {"inference_mode", true},
              {"modules_to_save", nullptr}});
}

void load_adapter_folder(const std::string& dir_name, Encoder& encoder) {
  const fs::path dir(dir_name);
  const std::string config_path = (dir / "adapter_config.json").string();
  if (!fs::is_regular_file(config_path))
    throw input_error(dir_name, "not a PEFT adapter folder (no adapter_config.json)");
  const json config = ju::parse(read_file(config_path), config_path);
  if (!config.is_object()) throw input_error(config_path, "must be a JSON object");
  const std::string type = ju::optional<std::string>(config, "peft_type", config_path, "");
  if (type != "LORA")
    throw input_error(config_path + ": peft_type", "'" + type + "': only LORA adapters are read");
  // What PEFT can express that is not W + alpha / r · B A on the listed layers.
  auto refuse_if = [&](const char* key, bool refused, const char* why) {
    if (refused) throw input_error(config_path + ": " + key, why);
  };
  auto flag = [&](const char* key) { return ju::optional<bool>(config, key, config_path, false); };
  auto non_empty = [&](const char* key) {
    return config.contains(key) && !config[key].is_null() && !config[key].empty();
  };
  refuse_if("use_dora", flag("use_dora"), "DoRA adapters are not supported");
  refuse_if("use_rslora", flag("use_rslora"), "rank-stabilized LoRA is not supported");
  refuse_if("fan_in_fan_out", flag("fan_in_fan_out"),
            "transposed (Conv1D) layers do not exist here");
  refuse_if("rank_pattern", non_empty("rank_pattern"), "per-layer ranks are not supported");
  refuse_if("alpha_pattern", non_empty("alpha_pattern"), "per-layer alphas are not supported");
  refuse_if("modules_to_save", non_empty("modules_to_save"),
            "fully trained modules besides the adapters are not supported");
  const std::string bias = ju::optional<std::string>(config, "bias", config_path, "none");
  refuse_if("bias", bias != "none", "trained biases are not supported (only \"none\")");
  LoraSettings settings;
  settings.rank = ju::convert<int64_t>(ju::required(config, "r", config_path), config_path + ": r");
  settings.alpha = ju::optional<double>(config, "lora_alpha", config_path, 8.0);
  settings.dropout = ju::optional<double>(config, "lora_dropout", config_path, 0.0);
  refuse_if("r", settings.rank < 1 || settings.rank > 4096, "must be within [1, 4096]");
  refuse_if("lora_dropout", settings.dropout < 0 || settings.dropout >= 1, "must be within [0, 1)");

  // The tensors: layer -> A, B.
  const std::string weights_path = (dir / "adapter_model.safetensors").string();
  if (!fs::is_regular_file(weights_path))
    throw input_error(dir_name, "no adapter_model.safetensors");
  const SafetensorsFile file(weights_path);
  const std::string prefix = encoder_prefix(encoder.config());
  std::map<std::string, std::map<std::string, const TensorEntry*>> layers;
  for (const TensorEntry& entry : file.header().tensors) {
    const std::string where = weights_path + ": tensor '" + entry.name + "'";
    const auto parsed = peft_tensor(entry.name, prefix);
    if (!parsed)
      throw input_error(where, "not a LoRA matrix (\"...lora_A.weight\" / \"lora_B.weight\")");
    // Layers lmk does not compute (BERT's pooler, which PEFT's "dense" also matches) change
    // nothing lmk computes: skipped, as load_model_folder skips their weights.
    if (ignorable(parsed->first + ".weight")) continue;
    if (encoder.is_head_weight(parsed->first + ".weight"))
      throw input_error(where, "'" + parsed->first +
                                   "' is a layer of the language-model head, which embeddings do "
                                   "not use: lmk adapts the base model's layers only");
    if (!encoder.linear_layers().count(parsed->first))
      throw input_error(where, "the model has no linear layer '" + parsed->first + "'");
    if (!layers[parsed->first].emplace(parsed->second, &entry).second)
      throw input_error(where, "given twice");
  }
  if (layers.empty()) throw input_error(weights_path, "holds no LoRA matrices");
  settings.target_modules.clear();
  for (const auto& [layer, matrices] : layers) {
    for (const char* matrix : {"A", "B"})
      if (!matrices.count(matrix))
        throw input_error(weights_path, "layer '" + layer + "' has no lora_" + matrix + " matrix");
    settings.target_modules.push_back(layer);
  }
  encoder.attach_lora(settings, 0);
  const at::NoGradGuard no_grad;
  for (const auto& [layer, matrices] : layers) {
    const LoraAdapter& adapter = *encoder.linear_layers().at(layer);
    for (const auto& [matrix, entry] : matrices) {
      const at::Tensor& target = matrix == "A" ? adapter.a : adapter.b;
      if (entry->shape != target.sizes().vec()) {
        throw input_error(weights_path + ": tensor '" + entry->name + "'",
                          "shape " + shape_text(entry->shape) +
                              ", the layer and r = " + std::to_string(settings.rank) + " need " +
                              shape_text(target.sizes().vec()));
      }
      at::Tensor(target).copy_(to_float_tensor(file, *entry));
    }
  }
}

}  // namespace lmk
