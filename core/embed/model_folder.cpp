#include "core/embed/model_folder.h"

#include <ATen/ATen.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
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
        std::string expected, found;
        for (auto d : it->second.sizes())
          expected += (expected.empty() ? "" : ", ") + std::to_string(d);
        for (auto d : entry.shape) found += (found.empty() ? "" : ", ") + std::to_string(d);
        throw input_error(file->path() + ": tensor '" + entry.name + "'",
                          "shape [" + found + "], the config needs [" + expected + "]");
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
  std::vector<at::Tensor> keep;
  std::vector<TensorToWrite> tensors;
  auto add = [&](const std::string& name, const at::Tensor& t) {
    keep.push_back(t.detach().to(at::kCPU, at::kFloat).contiguous());  // from any device
    const at::Tensor& c = keep.back();
    tensors.push_back({name, DType::F32, c.sizes().vec(),
                       std::string_view(static_cast<const char*>(c.data_ptr()),
                                        static_cast<size_t>(c.numel()) * sizeof(float))});
  };
  const std::string prefix = encoder_prefix(config);
  for (const auto& [name, t] : encoder.named_weights())
    add(encoder.is_head_weight(name) ? name : prefix + name, t);
  if (latent) {
    for (const auto& [name, t] : latent->named_weights()) add(name, t);
  }
  write_safetensors((dir / "model.safetensors").string(), tensors, {{"format", "pt"}});
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

}  // namespace lmk
