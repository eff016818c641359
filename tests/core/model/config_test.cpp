#include "core/model/config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
  EXPECT_DOUBLE_EQ(gte.layer_rope_theta(3), 500000.0);
  EXPECT_EQ(EncoderConfig::from_json(gte.to_json(), "again").to_json(), gte.to_json());
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
