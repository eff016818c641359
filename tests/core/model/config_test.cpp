#include "core/model/config.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>
#include <string>

#include "core/util/error.h"

namespace lmk {
namespace {

using nlohmann::json;

// answerdotai/ModernBERT-base's config.json (old field names).
const char* kModernBertBase = R"({
  "architectures": ["ModernBertForMaskedLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 50281, "classifier_activation": "gelu", "classifier_bias": false, "classifier_dropout": 0.0,
  "classifier_pooling": "mean", "cls_token_id": 50281, "decoder_bias": true, "deterministic_flash_attn": false,
  "embedding_dropout": 0.0, "eos_token_id": 50282, "global_attn_every_n_layers": 3, "global_rope_theta": 160000.0,
  "gradient_checkpointing": false, "hidden_activation": "gelu", "hidden_size": 768, "initializer_cutoff_factor": 2.0,
  "initializer_range": 0.02, "intermediate_size": 1152, "layer_norm_eps": 1e-05, "local_attention": 128,
  "local_rope_theta": 10000.0, "max_position_embeddings": 8192, "mlp_bias": false, "mlp_dropout": 0.0,
  "model_type": "modernbert", "norm_bias": false, "norm_eps": 1e-05, "num_attention_heads": 12,
  "num_hidden_layers": 22, "pad_token_id": 50283, "position_embedding_type": "absolute", "sep_token_id": 50282,
  "tie_word_embeddings": true, "torch_dtype": "float32", "transformers_version": "4.47.0.dev0", "vocab_size": 50368})";

TEST(EncoderConfigTest, ModernBertOldFields) {
  const auto c = EncoderConfig::from_json(json::parse(kModernBertBase), "config.json");
  EXPECT_EQ(c.architecture, Architecture::ModernBert);
  EXPECT_EQ(c.hidden_size, 768);
  EXPECT_EQ(c.num_layers, 22);
  EXPECT_EQ(c.head_dim(), 64);
  EXPECT_EQ(c.half_window(), 64);
  EXPECT_DOUBLE_EQ(c.norm_eps, 1e-5);
  EXPECT_EQ(c.pad_token_id, 50283);
  // Layers 0, 3, 6, ... are global with theta 160000; the rest local with 10000.
  for (int64_t i = 0; i < 22; ++i) {
    EXPECT_EQ(c.is_global_layer(i), i % 3 == 0) << i;
    EXPECT_DOUBLE_EQ(c.layer_rope_theta(i), i % 3 == 0 ? 160000.0 : 10000.0);
  }
}

TEST(EncoderConfigTest, ModernBertNewFieldsAndRoundTrip) {
  json j = json::parse(kModernBertBase);
  j.erase("global_attn_every_n_layers");
  j.erase("global_rope_theta");
  j.erase("local_rope_theta");
  j["num_hidden_layers"] = 4;
  j["layer_types"] = {"full_attention", "sliding_attention", "full_attention", "sliding_attention"};
  j["rope_parameters"] = {
      {"full_attention", {{"rope_type", "default"}, {"rope_theta", 80000.0}}},
      {"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 5000.0}}}};
  const auto c = EncoderConfig::from_json(j, "config.json");
  EXPECT_EQ(c.global_layers, (std::vector<bool>{true, false, true, false}));
  EXPECT_DOUBLE_EQ(c.layer_rope_theta(0), 80000.0);
  EXPECT_DOUBLE_EQ(c.layer_rope_theta(1), 5000.0);
  const auto again = EncoderConfig::from_json(c.to_json(), "written");
  EXPECT_EQ(again.global_layers, c.global_layers);
  EXPECT_EQ(again.to_json(), c.to_json());
  EXPECT_EQ(c.to_json()["global_attn_every_n_layers"], 2);
}

// The pattern as G / L letters, read from global_layers (not through the class's own helper).
std::string letters(const EncoderConfig& c) {
  std::string out;
  for (bool global : c.global_layers) out += global ? 'G' : 'L';
  return out;
}

// config.json with only one of the two layer-pattern fields, as transformers <= 4.5x (old) and
// >= 5 (new) read it.
json only_old_form(json j) {
  j.erase("layer_types");
  return j;
}
json only_new_form(json j) {
  j.erase("global_attn_every_n_layers");
  return j;
}

TEST(EncoderConfigTest, LayerPatternOfEveryShapeReadsBackInBothForms) {
  for (int64_t layers = 1; layers <= 13; ++layers) {
    for (int64_t every = 1; every <= 5; ++every) {
      ShapeOverrides shape;
      shape.layers = layers;
      shape.global_every = every;
      const EncoderConfig c = shaped_config("tiny", shape, 1000, 0);
      std::string expected;
      for (int64_t i = 0; i < layers; ++i) expected += i % every == 0 ? 'G' : 'L';
      const std::string label = std::to_string(layers) + " layers, every " + std::to_string(every);
      EXPECT_EQ(letters(c), expected) << label << ": ModernBERT's rule, layer 0 global";
      const json written = c.to_json();
      ASSERT_TRUE(written.contains("global_attn_every_n_layers")) << label;
      ASSERT_TRUE(written.contains("layer_types")) << label;
      EXPECT_EQ(letters(EncoderConfig::from_json(only_old_form(written), "old")), expected)
          << label;
      EXPECT_EQ(letters(EncoderConfig::from_json(only_new_form(written), "new")), expected)
          << label;
      EXPECT_EQ(c.legacy_layer_pattern_note(), "") << label;
    }
  }
  // --layers 6 (the independent check's case): GLLGLL in lmk and in every reader.
  ShapeOverrides six;
  six.layers = 6;
  EXPECT_EQ(letters(shaped_config("small", six, 1000, 0)), "GLLGLL");
}

TEST(EncoderConfigTest, APatternTheOldFormCannotSayIsReportedAtExport) {
  json j = json::parse(kModernBertBase);
  j.erase("global_attn_every_n_layers");
  j["num_hidden_layers"] = 6;
  j["layer_types"] = {"sliding_attention", "sliding_attention", "full_attention",
                      "sliding_attention", "sliding_attention", "full_attention"};
  const auto c = EncoderConfig::from_json(j, "config.json");
  EXPECT_EQ(letters(c), "LLGLLG");
  EXPECT_EQ(c.global_every_n_layers(), std::nullopt);
  const json written = c.to_json();
  EXPECT_FALSE(written.contains("global_attn_every_n_layers"))
      << "no value of the old field says LLGLLG";
  EXPECT_EQ(letters(EncoderConfig::from_json(only_new_form(written), "new")), "LLGLLG");
  const std::string note = c.legacy_layer_pattern_note();
  EXPECT_NE(note.find("LLGLLG"), std::string::npos) << note;
  EXPECT_NE(note.find("GLLGLL"), std::string::npos) << "what old readers build: " << note;
  EXPECT_NE(note.find("4.5x"), std::string::npos) << note;
}

TEST(EncoderConfigTest, ShapeOptionsRoundTripThroughConfigJsonForEveryArchitecture) {
  for (const std::string architecture : {"modernbert", "bert", "gte"}) {
    ShapeOverrides shape;
    shape.architecture = architecture;
    shape.hidden_size = 128;
    shape.layers = 5;
    shape.heads = 8;
    shape.intermediate_size = 300;
    if (architecture == "modernbert") {
      shape.local_window = 48;
      shape.global_every = 2;
    }
    if (architecture != "bert") shape.rope_theta = 40000;
    if (architecture != "bert") shape.no_rope = true;
    const EncoderConfig c = shaped_config("small", shape, 1000, 3);
    const EncoderConfig back = EncoderConfig::from_json(c.to_json(), architecture);
    for (const EncoderConfig* config : {&c, &back}) {
      const std::string label = architecture + (config == &c ? " (made)" : " (read back)");
      EXPECT_EQ(architecture_name(config->architecture), architecture) << label;
      EXPECT_EQ(std::string(config->model_type()), architecture)
          << label << ": lmk writes GTE as transformers' own port";
      EXPECT_EQ(config->hidden_size, 128) << label;
      EXPECT_EQ(config->num_layers, 5) << label;
      EXPECT_EQ(config->num_heads, 8) << label;
      EXPECT_EQ(config->intermediate_size, 300) << label << ": --intermediate-size honoured";
      EXPECT_EQ(config->pad_token_id, 3) << label;
      if (architecture == "modernbert") {
        EXPECT_EQ(config->local_attention, 48) << label;
        EXPECT_EQ(letters(*config), "GLGLG") << label;
        EXPECT_DOUBLE_EQ(config->global_rope_theta, 40000) << label;
      }
      if (architecture == "gte") EXPECT_DOUBLE_EQ(config->rope_theta, 40000) << label;
      EXPECT_EQ(config->rope_disabled, architecture != "bert") << label << ": --no-rope kept";
    }
    EXPECT_EQ(back.to_json(), c.to_json()) << architecture;
  }
  // Without --intermediate-size, BERT and GTE take their own 4 x hidden.
  ShapeOverrides bert;
  bert.architecture = "bert";
  bert.hidden_size = 96;
  EXPECT_EQ(shaped_config("tiny", bert, 1000, 0).intermediate_size, 384);
  EXPECT_TRUE(bert.reshapes());
  EXPECT_FALSE(ShapeOverrides{}.reshapes());
}

TEST(EncoderConfigTest, ShapeOptionsOutOfRangeOrForeignToTheArchitectureAreRefused) {
  struct Case {
    ShapeOverrides shape;
    std::string flag;
  };
  std::vector<Case> cases;
  auto add = [&](const std::string& architecture, const std::string& flag,
                 void (*set)(ShapeOverrides&)) {
    ShapeOverrides shape;
    shape.architecture = architecture;
    set(shape);
    cases.push_back({shape, flag});
  };
  add("modernbert", "--hidden-size", [](ShapeOverrides& s) { s.hidden_size = -5; });
  add("modernbert", "--hidden-size", [](ShapeOverrides& s) { s.hidden_size = 0; });
  add("modernbert", "--layers", [](ShapeOverrides& s) { s.layers = 0; });
  add("modernbert", "--heads", [](ShapeOverrides& s) { s.heads = -1; });
  add("modernbert", "--intermediate-size", [](ShapeOverrides& s) { s.intermediate_size = -300; });
  add("modernbert", "--local-window", [](ShapeOverrides& s) { s.local_window = -2; });
  add("modernbert", "--global-every", [](ShapeOverrides& s) { s.global_every = 0; });
  add("modernbert", "--rope-theta", [](ShapeOverrides& s) { s.rope_theta = -1; });
  add("bert", "--intermediate-size", [](ShapeOverrides& s) { s.intermediate_size = 0; });
  add("bert", "--local-window", [](ShapeOverrides& s) { s.local_window = 64; });
  add("bert", "--global-every", [](ShapeOverrides& s) { s.global_every = 2; });
  add("bert", "--rope-theta", [](ShapeOverrides& s) { s.rope_theta = 5e4; });
  add("gte", "--local-window", [](ShapeOverrides& s) { s.local_window = 64; });
  add("gte", "--global-every", [](ShapeOverrides& s) { s.global_every = 2; });
  add("gte", "--rope-theta", [](ShapeOverrides& s) { s.rope_theta = 0; });
  add("bert", "--no-rope", [](ShapeOverrides& s) { s.no_rope = true; });
  add("qwen3", "--local-window", [](ShapeOverrides& s) { s.local_window = 64; });
  add("llama", "--global-every", [](ShapeOverrides& s) { s.global_every = 2; });
  add("qwen3", "--kv-heads", [](ShapeOverrides& s) { s.kv_heads = 0; });
  add("llama", "--kv-heads", [](ShapeOverrides& s) { s.kv_heads = 3; });  // 2 heads
  add("modernbert", "--kv-heads", [](ShapeOverrides& s) { s.kv_heads = 1; });
  add("gte", "--bidirectional", [](ShapeOverrides& s) { s.bidirectional = true; });
  add("t5", "--architecture", [](ShapeOverrides&) {});
  for (const Case& c : cases) {
    try {
      shaped_config("tiny", c.shape, 1000, 0);
      ADD_FAILURE() << c.shape.architecture << " " << c.flag << " accepted";
    } catch (const FieldError& e) {
      // Core names the field of ShapeOverrides (the option's name with '_' for '-'); the CLI
      // names the option (LmkCliTest.ModelInitHonoursEveryShapeOptionOrRefusesIt).
      std::string field = c.flag.substr(2);
      std::replace(field.begin(), field.end(), '-', '_');
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind(field + ": ", 0), 0u) << e.what();
    }
  }
}

// The decoders' config.json as transformers 5 writes it for Qwen3ForCausalLM (a small random
// model's: grouped-query attention, head_dim apart from hidden / heads, the per-head norms'
// family).
constexpr const char* kQwen3 = R"({
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": null, "dtype": "float32", "eos_token_id": null, "head_dim": 24,
  "hidden_act": "silu", "hidden_size": 48, "initializer_range": 0.02, "intermediate_size": 80,
  "layer_types": ["full_attention", "full_attention"], "max_position_embeddings": 32768,
  "max_window_layers": 28, "model_type": "qwen3", "num_attention_heads": 3,
  "num_hidden_layers": 2, "num_key_value_heads": 1, "pad_token_id": null,
  "rms_norm_eps": 1e-06, "rope_parameters": {"rope_theta": 1000000.0, "rope_type": "default"},
  "sliding_window": null, "tie_word_embeddings": true, "use_cache": true,
  "use_sliding_window": false, "vocab_size": 1005})";

// Qwen3's and Llama's fields read as transformers' configs mean them, causal unless lmk's
// "lmk_bidirectional"; what lmk writes reads back the same; model init's decoder shapes.
TEST(EncoderConfigTest, DecodersReadWriteAndShape) {
  const EncoderConfig q = EncoderConfig::from_json(json::parse(kQwen3), "config.json");
  EXPECT_EQ(q.architecture, Architecture::Qwen3);
  EXPECT_TRUE(q.is_decoder());
  EXPECT_EQ(q.head_dim(), 24);
  EXPECT_EQ(q.num_heads, 3);
  EXPECT_EQ(q.kv_heads(), 1);
  EXPECT_DOUBLE_EQ(q.norm_eps, 1e-6);
  EXPECT_DOUBLE_EQ(q.layer_rope_theta(1), 1e6);
  EXPECT_TRUE(q.tie_word_embeddings);
  EXPECT_TRUE(q.causal);
  EXPECT_EQ(q.pad_token_id, 0) << "no pad token: any id (padding is masked)";
  EXPECT_FALSE(q.mlp_bias);
  const EncoderConfig back = EncoderConfig::from_json(q.to_json(), "written");
  EXPECT_EQ(back.to_json(), q.to_json());
  EXPECT_EQ(back.head_dim(), 24);
  EXPECT_EQ(q.to_json().at("architectures")[0], "Qwen3ForCausalLM");
  EXPECT_FALSE(q.to_json().contains("lmk_bidirectional"));

  json llama = json::parse(kQwen3);
  llama["model_type"] = "llama";
  llama.erase("head_dim");  // Llama's default: hidden / heads
  llama["num_key_value_heads"] = 3;
  llama["mlp_bias"] = true;
  llama["tie_word_embeddings"] = false;
  llama["lmk_bidirectional"] = true;
  const EncoderConfig l = EncoderConfig::from_json(llama, "config.json");
  EXPECT_EQ(l.architecture, Architecture::Llama);
  EXPECT_EQ(l.head_dim(), 16);
  EXPECT_EQ(l.kv_heads(), 3);
  EXPECT_TRUE(l.mlp_bias);
  EXPECT_FALSE(l.causal);
  EXPECT_EQ(EncoderConfig::from_json(l.to_json(), "written").to_json(), l.to_json());
  EXPECT_EQ(l.to_json().at("lmk_bidirectional"), true);

  auto refused = [](json j, const std::string& field) {
    try {
      EncoderConfig::from_json(j, "config.json");
      ADD_FAILURE() << field << " accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("config.json." + field + ": ", 0), 0u) << e.what();
    }
  };
  json bad = json::parse(kQwen3);
  bad["use_sliding_window"] = true;
  refused(bad, "use_sliding_window");
  bad = json::parse(kQwen3);
  bad["rope_parameters"]["rope_type"] = "llama3";
  refused(bad, "rope_parameters.rope_type");
  bad = json::parse(kQwen3);
  bad["num_key_value_heads"] = 2;  // 3 heads
  refused(bad, "num_key_value_heads");
  bad = json::parse(kQwen3);
  bad["layer_types"][1] = "sliding_attention";
  refused(bad, "layer_types[1]");

  ShapeOverrides shape;
  shape.architecture = "qwen3";
  shape.heads = 4;
  shape.kv_heads = 2;
  shape.rope_theta = 20000;
  const EncoderConfig made = shaped_config("tiny", shape, 1000, 0);
  EXPECT_EQ(made.architecture, Architecture::Qwen3);
  EXPECT_EQ(made.kv_heads(), 2);
  EXPECT_EQ(made.head_dim(), 16);
  EXPECT_EQ(made.intermediate_size, 3 * 64);
  EXPECT_EQ(made.activation, "silu");
  EXPECT_TRUE(made.causal);
  EXPECT_DOUBLE_EQ(made.rope_theta, 20000);
  EXPECT_EQ(EncoderConfig::from_json(made.to_json(), "w").to_json(), made.to_json());
  shape.bidirectional = true;
  EXPECT_FALSE(shaped_config("tiny", shape, 1000, 0).causal);
}

TEST(EncoderConfigTest, BertAndGte) {
  const auto bert = EncoderConfig::from_json(json::parse(R"({
    "model_type": "bert", "vocab_size": 30522, "hidden_size": 768, "intermediate_size": 3072,
    "num_hidden_layers": 12, "num_attention_heads": 12, "max_position_embeddings": 512,
    "hidden_act": "gelu", "layer_norm_eps": 1e-12, "type_vocab_size": 2, "pad_token_id": 0})"),
                                             "bert");
  EXPECT_EQ(bert.architecture, Architecture::Bert);
  EXPECT_DOUBLE_EQ(bert.norm_eps, 1e-12);
  EXPECT_TRUE(bert.is_global_layer(5));
  EXPECT_FALSE(bert.uses_rope());
  const auto gte = EncoderConfig::from_json(json::parse(R"({
    "model_type": "new", "vocab_size": 30528, "hidden_size": 768, "intermediate_size": 3072,
    "num_hidden_layers": 12, "num_attention_heads": 12, "max_position_embeddings": 8192,
    "hidden_act": "gelu", "layer_norm_eps": 1e-12, "type_vocab_size": 0, "rope_theta": 500000,
    "position_embedding_type": "rope", "pack_qkv": true})"),
                                            "gte");
  EXPECT_EQ(gte.architecture, Architecture::Gte);
  EXPECT_EQ(gte.gte_layout, GteLayout::RemoteCode);
  EXPECT_DOUBLE_EQ(gte.layer_rope_theta(3), 500000.0);
  EXPECT_EQ(EncoderConfig::from_json(gte.to_json(), "again").to_json(), gte.to_json());
  EXPECT_EQ(gte.to_json()["model_type"], "new") << "a remote-code folder is written back as one";
  // transformers' own port: rope_parameters, and GteConfig's defaults for what it leaves out.
  const auto port = EncoderConfig::from_json(json::parse(R"({
    "model_type": "gte", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 96,
    "num_hidden_layers": 2, "num_attention_heads": 4,
    "rope_parameters": {"rope_type": "default", "rope_theta": 20000.0}})"),
                                             "gte");
  EXPECT_EQ(port.gte_layout, GteLayout::Transformers);
  EXPECT_DOUBLE_EQ(port.rope_theta, 20000.0);
  EXPECT_EQ(port.pad_token_id, 1);
  EXPECT_EQ(port.type_vocab_size, 1);
  EXPECT_EQ(port.max_position_embeddings, 8192);
  EXPECT_DOUBLE_EQ(EncoderConfig::from_json(json::parse(R"({"model_type": "gte",
    "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
    "num_attention_heads": 4})"),
                                            "gte")
                       .rope_theta,
                   160000.0)
      << "GteConfig.default_theta";
  // Scaled RoPE is refused, not run as plain RoPE.
  for (const char* scaled :
       {R"({"rope_parameters": {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 2.0}})",
        R"({"model_type": "new", "rope_scaling": {"type": "ntk", "factor": 2.0}})",
        R"({"model_type": "new", "logn_attention_scale": true})"}) {
    json j = port.to_json();
    j.merge_patch(json::parse(scaled));
    try {
      EncoderConfig::from_json(j, "config.json");
      ADD_FAILURE() << scaled << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("config.json."), std::string::npos) << e.what();
    }
  }
}

TEST(EncoderConfigTest, PresetsAndErrors) {
  const auto base = EncoderConfig::preset("base", 50368, 50283);
  EXPECT_EQ(base.hidden_size, 768);
  EXPECT_EQ(base.num_layers, 22);
  for (const char* name : {"tiny", "small", "base"}) {
    const auto preset = EncoderConfig::preset(name, 1000, 0);
    EXPECT_TRUE(preset.is_global_layer(preset.num_layers - 1))
        << name << ": the last layer is global";
    EXPECT_TRUE(preset.is_global_layer(0)) << name;
  }
  EXPECT_THROW(EncoderConfig::preset("huge", 1000, 0), InputError);
  struct Case {
    const char* field;
    json value;
  } cases[] = {{"num_attention_heads", 7},      {"hidden_size", -1},
               {"model_type", "gpt2"},          {"vocab_size", "many"},
               {"hidden_activation", "swish2"}, {"pad_token_id", 999999},
               {"layer_types", json::array()},  {"num_hidden_layers", 5000000000LL}};
  for (const auto& c : cases) {
    json j = json::parse(kModernBertBase);
    j[c.field] = c.value;
    try {
      EncoderConfig::from_json(j, "config.json");
      ADD_FAILURE() << c.field << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("config.json"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace lmk
