#include "core/model/config.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/util/error.h"
#include "core/util/json_util.h"

namespace lmk {

using nlohmann::json;
namespace ju = json_util;

const char* architecture_name(Architecture a) {
  switch (a) {
    case Architecture::ModernBert:
      return "modernbert";
    case Architecture::Bert:
      return "bert";
    case Architecture::Gte:
      return "gte";
    case Architecture::Llama:
      return "llama";
    case Architecture::Qwen3:
      return "qwen3";
  }
  return "modernbert";
}

const char* EncoderConfig::model_type() const {
  if (architecture == Architecture::Gte && gte_layout == GteLayout::RemoteCode) return "new";
  return architecture_name(architecture);
}

bool EncoderConfig::is_global_layer(int64_t layer) const {
  if (architecture != Architecture::ModernBert) return true;
  return global_layers.at(static_cast<size_t>(layer));
}

double EncoderConfig::layer_rope_theta(int64_t layer) const {
  if (architecture != Architecture::ModernBert) return rope_theta;
  return is_global_layer(layer) ? global_rope_theta : local_rope_theta;
}

void EncoderConfig::validate(const std::string& where) const {
  auto require = [&](bool ok, const char* field, const std::string& what) {
    if (!ok) throw input_error(ju::member_path(where, field), what);
  };
  require(vocab_size > 0 && vocab_size <= (1 << 24), "vocab_size", "must be in [1, 16777216]");
  require(hidden_size > 0 && hidden_size <= 65536, "hidden_size", "must be in [1, 65536]");
  require(num_heads > 0 && num_heads <= 4096, "num_attention_heads", "must be in [1, 4096]");
  require(explicit_head_dim > 0 || hidden_size % num_heads == 0, "num_attention_heads",
          "must divide hidden_size");
  require(explicit_head_dim >= 0 && explicit_head_dim <= 4096, "head_dim", "must be in [0, 4096]");
  require(num_kv_heads >= 0 && num_heads % kv_heads() == 0, "num_key_value_heads",
          "must divide num_attention_heads");
  require(is_decoder() || ((num_kv_heads == 0 || num_kv_heads == num_heads) &&
                           explicit_head_dim == 0 && !causal),
          "num_key_value_heads", "grouped-query and causal attention are the decoders' only");
  require(head_dim() % 2 == 0 || !uses_rope(), "num_attention_heads",
          "RoPE needs an even head size");
  require(intermediate_size > 0 && intermediate_size <= 1 << 20, "intermediate_size",
          "must be in [1, 1048576]");
  require(num_layers > 0 && num_layers <= 1024, "num_hidden_layers", "must be in [1, 1024]");
  require(norm_eps > 0 && norm_eps < 1, "norm_eps", "must be in (0, 1)");
  require(pad_token_id >= 0 && pad_token_id < vocab_size, "pad_token_id", "must be a token id");
  require(max_position_embeddings > 0, "max_position_embeddings", "must be > 0");
  require(activation == "gelu" || activation == "gelu_new" || activation == "gelu_pytorch_tanh" ||
              activation == "silu" || activation == "relu",
          "hidden_activation", "unsupported activation '" + activation + "'");
  if (architecture == Architecture::ModernBert) {
    require(local_attention >= 0, "local_attention", "must be >= 0");
    require(static_cast<int64_t>(global_layers.size()) == num_layers, "layer_types",
            "needs one entry per layer");
    require(global_rope_theta > 0 && local_rope_theta > 0, "rope_parameters",
            "rope_theta must be > 0");
  }
  if (architecture != Architecture::ModernBert && uses_rope())
    require(rope_theta > 0, "rope_theta", "must be > 0");
  if (architecture == Architecture::Bert || architecture == Architecture::Gte)
    require(type_vocab_size >= 0, "type_vocab_size", "must be >= 0");
}

namespace {

// The RoPE base of a config.json: rope_parameters (transformers >= 5), else rope_theta. Scaled
// RoPE (NTK, YaRN, Llama 3's) is not implemented: refused rather than computed as plain RoPE.
double plain_rope_theta(const json& j, const std::string& where, double fallback) {
  double theta = ju::optional<double>(j, "rope_theta", where, fallback);
  if (j.contains("rope_parameters") && j["rope_parameters"].is_object()) {
    const std::string at = ju::member_path(where, "rope_parameters");
    theta = ju::optional<double>(j["rope_parameters"], "rope_theta", at, theta);
    const auto type = ju::optional<std::string>(j["rope_parameters"], "rope_type", at, "default");
    if (type != "default")
      throw input_error(ju::member_path(at, "rope_type"),
                        "'" + type + "' RoPE scaling is not supported (only 'default')");
  }
  if (j.contains("rope_scaling") && !j["rope_scaling"].is_null())
    throw input_error(ju::member_path(where, "rope_scaling"),
                      "RoPE scaling is not supported; remove it to run at the trained base");
  return theta;
}

// A token id field that config.json may hold as null (Llama's pad_token_id).
int64_t optional_token_id(const json& j, const char* field, const std::string& where,
                          int64_t fallback) {
  if (!j.contains(field) || j[field].is_null()) return fallback;
  return ju::get<int64_t>(j, field, where);
}

// Llama and Qwen3 (transformers' LlamaConfig / Qwen3Config defaults where a field is absent).
void read_decoder(const json& j, const std::string& where, EncoderConfig& c) {
  const bool qwen3 = c.architecture == Architecture::Qwen3;
  c.vocab_size = ju::get<int64_t>(j, "vocab_size", where);
  c.hidden_size = ju::get<int64_t>(j, "hidden_size", where);
  c.intermediate_size = ju::get<int64_t>(j, "intermediate_size", where);
  c.num_layers = ju::get<int64_t>(j, "num_hidden_layers", where);
  c.num_heads = ju::get<int64_t>(j, "num_attention_heads", where);
  c.num_kv_heads = optional_token_id(j, "num_key_value_heads", where, c.num_heads);
  c.explicit_head_dim = optional_token_id(j, "head_dim", where, qwen3 ? 128 : 0);
  c.max_position_embeddings =
      ju::optional<int64_t>(j, "max_position_embeddings", where, qwen3 ? 32768 : 2048);
  c.norm_eps = ju::optional<double>(j, "rms_norm_eps", where, 1e-6);
  c.activation = ju::optional<std::string>(j, "hidden_act", where, "silu");
  c.attention_bias = ju::optional<bool>(j, "attention_bias", where, false);
  c.mlp_bias = !qwen3 && ju::optional<bool>(j, "mlp_bias", where, false);
  c.tie_word_embeddings = ju::optional<bool>(j, "tie_word_embeddings", where, false);
  c.rope_theta = plain_rope_theta(j, where, 10000.0);
  // No pad token (Llama's null): padding positions are masked, any id embeds them.
  c.pad_token_id = optional_token_id(j, "pad_token_id", where, 0);
  c.causal = !ju::optional<bool>(j, "lmk_bidirectional", where, false);
  if (ju::optional<bool>(j, "use_sliding_window", where, false))
    throw input_error(ju::member_path(where, "use_sliding_window"),
                      "sliding-window decoder layers are not supported");
  if (j.contains("layer_types") && !j["layer_types"].is_null()) {
    ju::for_each_element(j, "layer_types", where, [&](const json& t, const std::string& path) {
      const auto type = ju::convert<std::string>(t, path);
      if (type != "full_attention")
        throw input_error(path,
                          "only full_attention decoder layers are supported, got '" + type + "'");
    });
  }
  c.rope_disabled = ju::optional<bool>(j, "lmk_disable_rope", where, false);
}

}  // namespace

EncoderConfig EncoderConfig::from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw input_error(where, "expected a JSON object");
  EncoderConfig c;
  const auto model_type = ju::get<std::string>(j, "model_type", where);
  if (model_type == "modernbert")
    c.architecture = Architecture::ModernBert;
  else if (model_type == "bert")
    c.architecture = Architecture::Bert;
  else if (model_type == "gte" || model_type == "new")
    c.architecture = Architecture::Gte;
  else if (model_type == "llama")
    c.architecture = Architecture::Llama;
  else if (model_type == "qwen3")
    c.architecture = Architecture::Qwen3;
  else
    throw input_error(
        ju::member_path(where, "model_type"),
        "unsupported model_type '" + model_type + "' (modernbert, bert, gte, new, llama, qwen3)");
  if (c.is_decoder()) {
    read_decoder(j, where, c);
    c.validate(where);
    return c;
  }
  c.gte_layout = model_type == "new" ? GteLayout::RemoteCode : GteLayout::Transformers;
  // transformers' GteConfig defaults where its config.json leaves a field out.
  const bool gte_port = model_type == "gte";
  c.vocab_size = ju::get<int64_t>(j, "vocab_size", where);
  c.hidden_size = ju::get<int64_t>(j, "hidden_size", where);
  c.intermediate_size = ju::get<int64_t>(j, "intermediate_size", where);
  c.num_layers = ju::get<int64_t>(j, "num_hidden_layers", where);
  c.num_heads = ju::get<int64_t>(j, "num_attention_heads", where);
  c.max_position_embeddings =
      ju::optional<int64_t>(j, "max_position_embeddings", where, gte_port ? 8192 : 512);
  c.pad_token_id = ju::optional<int64_t>(j, "pad_token_id", where, gte_port ? 1 : 0);
  // norm_eps (ModernBERT) or layer_norm_eps (BERT, GTE).
  c.norm_eps = ju::optional<double>(j, "norm_eps", where,
                                    ju::optional<double>(j, "layer_norm_eps", where, 1e-12));
  c.activation = ju::optional<std::string>(
      j, "hidden_activation", where, ju::optional<std::string>(j, "hidden_act", where, "gelu"));
  if (c.architecture == Architecture::ModernBert) {
    c.norm_eps = ju::optional<double>(j, "norm_eps", where,
                                      ju::optional<double>(j, "layer_norm_eps", where, 1e-5));
    c.norm_bias = ju::optional<bool>(j, "norm_bias", where, false);
    c.attention_bias = ju::optional<bool>(j, "attention_bias", where, false);
    c.mlp_bias = ju::optional<bool>(j, "mlp_bias", where, false);
    c.decoder_bias = ju::optional<bool>(j, "decoder_bias", where, true);
    c.classifier_bias = ju::optional<bool>(j, "classifier_bias", where, false);
    c.classifier_activation =
        ju::optional<std::string>(j, "classifier_activation", where, c.activation);
    c.local_attention = ju::optional<int64_t>(j, "local_attention", where, 128);
    if (j.contains("sliding_window") && !j.contains("local_attention")) {
      c.local_attention = 2 * ju::get<int64_t>(j, "sliding_window", where);
    }
    // Layer pattern: the newer layer_types list, else every n-th layer global.
    if (j.contains("layer_types") && !j["layer_types"].is_null()) {
      ju::for_each_element(j, "layer_types", where, [&](const json& t, const std::string& path) {
        const auto type = ju::convert<std::string>(t, path);
        if (type != "full_attention" && type != "sliding_attention") {
          throw input_error(path,
                            "expected full_attention or sliding_attention, got '" + type + "'");
        }
        c.global_layers.push_back(type == "full_attention");
      });
    } else {
      const auto every = ju::optional<int64_t>(j, "global_attn_every_n_layers", where, 3);
      if (every <= 0)
        throw input_error(ju::member_path(where, "global_attn_every_n_layers"), "must be > 0");
      for (int64_t i = 0; i < std::max<int64_t>(c.num_layers, 0) && i < 1024; ++i)
        c.global_layers.push_back(i % every == 0);
    }
    // RoPE bases: the newer rope_parameters per layer type, else global_ / local_rope_theta.
    c.global_rope_theta = ju::optional<double>(j, "global_rope_theta", where, 160000.0);
    c.local_rope_theta = ju::optional<double>(j, "local_rope_theta", where, 10000.0);
    if (j.contains("rope_parameters") && j["rope_parameters"].is_object()) {
      const json& rope = j["rope_parameters"];
      const std::string at = ju::member_path(where, "rope_parameters");
      if (rope.contains("full_attention")) {
        c.global_rope_theta = ju::optional<double>(rope["full_attention"], "rope_theta",
                                                   at + ".full_attention", c.global_rope_theta);
      }
      if (rope.contains("sliding_attention")) {
        c.local_rope_theta = ju::optional<double>(rope["sliding_attention"], "rope_theta",
                                                  at + ".sliding_attention", c.local_rope_theta);
      }
    }
  } else {
    c.type_vocab_size = ju::optional<int64_t>(j, "type_vocab_size", where, gte_port ? 1 : 2);
  }
  if (c.architecture == Architecture::Gte) {
    // The base: rope_parameters (transformers' port, default 160000), else rope_theta (the
    // remote code, default 10000).
    c.rope_theta = plain_rope_theta(j, where, gte_port ? 160000.0 : 10000.0);
    if (ju::optional<bool>(j, "logn_attention_scale", where, false))
      throw input_error(ju::member_path(where, "logn_attention_scale"),
                        "log-n attention scaling is not supported");
    // transformers' port stores Q / K / V packed, always.
    c.pack_qkv = gte_port || ju::optional<bool>(j, "pack_qkv", where, true);
    const auto position_type =
        ju::optional<std::string>(j, "position_embedding_type", where, "rope");
    if (position_type != "rope")
      throw input_error(ju::member_path(where, "position_embedding_type"),
                        "GTE models here use rope");
  }
  c.rope_disabled = ju::optional<bool>(j, "lmk_disable_rope", where, false);
  if (c.rope_disabled && !c.uses_rope())
    throw input_error(ju::member_path(where, "lmk_disable_rope"),
                      "BERT has absolute positions, no RoPE to disable");
  c.validate(where);
  return c;
}

EncoderConfig EncoderConfig::preset(const std::string& name, int64_t vocab_size,
                                    int64_t pad_token_id) {
  EncoderConfig c;
  c.architecture = Architecture::ModernBert;
  c.vocab_size = vocab_size;
  c.pad_token_id = pad_token_id;
  if (name == "tiny") {
    c.hidden_size = 64, c.intermediate_size = 96, c.num_layers = 4, c.num_heads = 2,
    c.local_attention = 64;
  } else if (name == "small") {
    c.hidden_size = 256, c.intermediate_size = 384, c.num_layers = 7, c.num_heads = 4,
    c.local_attention = 128;
  } else if (name == "base") {
    c.hidden_size = 768, c.intermediate_size = 1152, c.num_layers = 22, c.num_heads = 12,
    c.local_attention = 128;
  } else {
    throw FieldError("preset", "unknown preset '" + name + "' (tiny, small, base)");
  }
  // Every third layer global from layer 0 (ModernBERT's rule); with 7 and 22 layers the last
  // layer is global too, as in ModernBERT-base (22) and -large (28): the pooling tokens' final
  // layer sees the whole input.
  for (int64_t i = 0; i < c.num_layers; ++i) c.global_layers.push_back(i % 3 == 0);
  c.validate("preset " + name);
  return c;
}

std::optional<int64_t> EncoderConfig::global_every_n_layers() const {
  if (architecture != Architecture::ModernBert) return std::nullopt;
  for (int64_t n = 1; n <= num_layers; ++n) {
    bool matches = true;
    for (int64_t i = 0; i < num_layers && matches; ++i)
      matches = global_layers[static_cast<size_t>(i)] == (i % n == 0);
    if (matches) return n;
  }
  return std::nullopt;
}

std::string EncoderConfig::layer_pattern() const {
  std::string letters;
  for (int64_t i = 0; i < num_layers; ++i) letters += is_global_layer(i) ? 'G' : 'L';
  return letters;
}

std::string EncoderConfig::legacy_layer_pattern_note() const {
  if (architecture != Architecture::ModernBert || global_every_n_layers()) return "";
  // What a reader of global_attn_every_n_layers alone builds when the field is absent.
  std::string legacy;
  for (int64_t i = 0; i < num_layers; ++i) legacy += i % 3 == 0 ? 'G' : 'L';
  return "the layer pattern " + layer_pattern() +
         " is not 'every k-th layer from layer 0', so config.json states it as layer_types only: "
         "transformers >= 5 reads it, but transformers <= 4.5x and other readers of "
         "global_attn_every_n_layers build " +
         legacy + " (their default) and compute other embeddings";
}

std::string EncoderConfig::describe() const {
  std::ostringstream text;
  text << architecture_name(architecture) << ", " << num_layers << " layers";
  if (architecture == Architecture::ModernBert) text << " (" << layer_pattern() << ")";
  text << ", hidden " << hidden_size << ", " << num_heads << " heads";
  if (is_decoder()) {
    text << " (" << kv_heads() << " key/value) of " << head_dim();
  }
  text << ", MLP " << intermediate_size;
  if (is_decoder())
    text << ", RoPE " << rope_theta << ", " << (causal ? "causal" : "bidirectional");
  else if (architecture == Architecture::ModernBert)
    text << ", window " << local_attention << ", RoPE " << global_rope_theta << " / "
         << local_rope_theta;
  else if (architecture == Architecture::Gte)
    text << ", RoPE " << rope_theta;
  else
    text << ", " << max_position_embeddings << " positions";
  if (rope_disabled) text << ", RoPE disabled";
  return text.str();
}

EncoderConfig shaped_config(const std::string& preset, const ShapeOverrides& shape,
                            int64_t vocab_size, int64_t pad_token_id) {
  EncoderConfig c = EncoderConfig::preset(preset, vocab_size, pad_token_id);
  auto positive = [](const std::optional<int64_t>& value, const char* name, int64_t& field) {
    if (!value) return;
    if (*value <= 0) throw FieldError(name, "must be > 0, got " + std::to_string(*value));
    field = *value;
  };
  auto refuse = [&](bool given, const char* name, const std::string& why) {
    if (given)
      throw FieldError(name,
                       "does not apply to architecture " + shape.architecture + " (" + why + ")");
  };
  positive(shape.hidden_size, "hidden_size", c.hidden_size);
  positive(shape.layers, "layers", c.num_layers);
  positive(shape.heads, "heads", c.num_heads);
  if (c.hidden_size % c.num_heads != 0)
    throw FieldError("heads", std::to_string(c.num_heads) +
                                  " heads do not divide the hidden size " +
                                  std::to_string(c.hidden_size));
  if (shape.architecture == "modernbert") {
    positive(shape.intermediate_size, "intermediate_size", c.intermediate_size);
    if (shape.local_window) {
      if (*shape.local_window < 0)
        throw FieldError("local_window",
                         "must be >= 0, got " + std::to_string(*shape.local_window));
      c.local_attention = *shape.local_window;
    }
    if (shape.rope_theta) {
      if (!(*shape.rope_theta > 0)) throw FieldError("rope_theta", "must be > 0");
      c.global_rope_theta = *shape.rope_theta;
    }
    int64_t every = 3;
    positive(shape.global_every, "global_every", every);
    // ModernBERT's rule, which every reader of config.json (global_attn_every_n_layers or
    // layer_types) builds alike.
    c.global_layers.clear();
    for (int64_t i = 0; i < c.num_layers; ++i) c.global_layers.push_back(i % every == 0);
  } else if (shape.architecture == "bert" || shape.architecture == "gte") {
    const bool bert = shape.architecture == "bert";
    refuse(shape.local_window.has_value(), "local_window", "every layer attends globally");
    refuse(shape.global_every.has_value(), "global_every", "every layer attends globally");
    refuse(bert && shape.rope_theta.has_value(), "rope_theta", "BERT has absolute positions");
    c.architecture = bert ? Architecture::Bert : Architecture::Gte;
    // BERT's and GTE's own shape: an MLP of 4 × hidden, unless asked for another.
    c.intermediate_size = 4 * c.hidden_size;
    positive(shape.intermediate_size, "intermediate_size", c.intermediate_size);
    if (bert) c.max_position_embeddings = 8192;
    if (!bert) {
      c.type_vocab_size = 0;
      if (shape.rope_theta) {
        if (!(*shape.rope_theta > 0)) throw FieldError("rope_theta", "must be > 0");
        c.rope_theta = *shape.rope_theta;
      }
    }
  } else if (shape.architecture == "qwen3" || shape.architecture == "llama") {
    refuse(shape.local_window.has_value(), "local_window", "every layer attends globally");
    refuse(shape.global_every.has_value(), "global_every", "every layer attends globally");
    c.architecture = shape.architecture == "qwen3" ? Architecture::Qwen3 : Architecture::Llama;
    c.activation = "silu";
    c.norm_eps = 1e-6;
    c.intermediate_size = 3 * c.hidden_size;  // about Llama's and Qwen3's MLP width
    positive(shape.intermediate_size, "intermediate_size", c.intermediate_size);
    c.max_position_embeddings = 32768;
    c.tie_word_embeddings = true;  // as the small Qwen3 models
    c.num_kv_heads = c.num_heads;
    positive(shape.kv_heads, "kv_heads", c.num_kv_heads);
    if (c.num_heads % c.num_kv_heads != 0)
      throw FieldError("kv_heads", std::to_string(c.num_kv_heads) +
                                       " key / value heads do not divide the " +
                                       std::to_string(c.num_heads) + " attention heads");
    if (shape.rope_theta) {
      if (!(*shape.rope_theta > 0)) throw FieldError("rope_theta", "must be > 0");
      c.rope_theta = *shape.rope_theta;
    }
    c.causal = !shape.bidirectional;
  } else {
    throw FieldError("architecture", "must be modernbert, bert, gte, qwen3 or llama, got '" +
                                         shape.architecture + "'");
  }
  const bool decoder = c.is_decoder();
  refuse(!decoder && shape.kv_heads.has_value(), "kv_heads",
         "grouped-query attention is the decoders'");
  refuse(!decoder && shape.bidirectional, "bidirectional", "an encoder is bidirectional");
  if (shape.no_rope) {
    refuse(shape.architecture == "bert", "no_rope", "BERT has absolute positions, no RoPE");
    c.rope_disabled = true;
  }
  if (c.uses_rope() && c.head_dim() % 2 != 0)
    throw FieldError("heads", "RoPE needs an even head size (hidden size / heads = " +
                                  std::to_string(c.head_dim()) + ")");
  c.validate("lmk model init");
  return c;
}

json EncoderConfig::to_json() const {
  json j;
  j["model_type"] = model_type();
  j["vocab_size"] = vocab_size;
  j["hidden_size"] = hidden_size;
  j["intermediate_size"] = intermediate_size;
  j["num_hidden_layers"] = num_layers;
  j["num_attention_heads"] = num_heads;
  j["max_position_embeddings"] = max_position_embeddings;
  j["pad_token_id"] = pad_token_id;
  if (rope_disabled) j["lmk_disable_rope"] = true;
  switch (architecture) {
    case Architecture::Llama:
    case Architecture::Qwen3:
      j["architectures"] = {architecture == Architecture::Qwen3 ? "Qwen3ForCausalLM"
                                                                : "LlamaForCausalLM"};
      j["hidden_act"] = activation;
      j["rms_norm_eps"] = norm_eps;
      j["num_key_value_heads"] = kv_heads();
      j["head_dim"] = head_dim();
      j["attention_bias"] = attention_bias;
      if (architecture == Architecture::Llama) j["mlp_bias"] = mlp_bias;
      j["tie_word_embeddings"] = tie_word_embeddings;
      j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", rope_theta}};
      if (!causal) j["lmk_bidirectional"] = true;
      return j;
    case Architecture::ModernBert: {
      j["architectures"] = {"ModernBertForMaskedLM"};
      j["hidden_activation"] = activation;
      j["norm_eps"] = norm_eps;
      j["norm_bias"] = norm_bias;
      j["attention_bias"] = attention_bias;
      j["mlp_bias"] = mlp_bias;
      j["decoder_bias"] = decoder_bias;
      j["classifier_bias"] = classifier_bias;
      j["classifier_activation"] = classifier_activation;
      j["local_attention"] = local_attention;
      j["global_rope_theta"] = global_rope_theta;
      j["local_rope_theta"] = local_rope_theta;
      // Both forms: old readers use global_attn_every_n_layers, new ones layer_types (where the
      // old form cannot say the pattern, legacy_layer_pattern_note() tells the user).
      std::vector<std::string> types;
      for (bool g : global_layers) types.push_back(g ? "full_attention" : "sliding_attention");
      j["layer_types"] = types;
      if (const auto every = global_every_n_layers()) j["global_attn_every_n_layers"] = *every;
      j["tie_word_embeddings"] = true;
      return j;
    }
    case Architecture::Bert:
      j["architectures"] = {"BertForMaskedLM"};
      j["position_embedding_type"] = "absolute";
      break;
    case Architecture::Gte:
      if (gte_layout == GteLayout::RemoteCode) {
        j["architectures"] = {"NewForMaskedLM"};
        j["position_embedding_type"] = "rope";
        j["rope_theta"] = rope_theta;
        j["pack_qkv"] = pack_qkv;
      } else {
        j["architectures"] = {"GteForMaskedLM"};
        j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", rope_theta}};
        j["tie_word_embeddings"] = true;
      }
      break;
  }
  // BERT and GTE name these alike.
  j["hidden_act"] = activation;
  j["layer_norm_eps"] = norm_eps;
  j["type_vocab_size"] = type_vocab_size;
  return j;
}

}  // namespace lmk
