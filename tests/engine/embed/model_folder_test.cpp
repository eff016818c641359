#include "engine/embed/model_folder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <ATen/ATen.h>

#include <nlohmann/json.hpp>

#include "core/model/safetensors.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

EncoderConfig tiny(Architecture architecture) {
  EncoderConfig c = EncoderConfig::preset("tiny", 1005, 0);
  c.architecture = architecture;
  c.num_layers = 2;
  c.global_layers = {true, false};
  c.max_position_embeddings = 64;
  return c;
}

at::Tensor run(Encoder& encoder) {
  at::NoGradGuard no_grad;
  at::manual_seed(1);
  const at::Tensor ids = at::randint(5, 1005, {2, 40}, at::kLong);
  return encoder.forward(ids, at::ones({2, 40}, at::kLong));
}

// Writes tensors (name -> float tensor) as a safetensors file, in the given dtype.
void write_tensors(const std::string& path,
                   const std::vector<std::pair<std::string, at::Tensor>>& named,
                   DType dtype = DType::F32) {
  std::vector<at::Tensor> keep;
  std::vector<TensorToWrite> tensors;
  for (const auto& [name, t] : named) {
    keep.push_back(t.detach()
                       .to(dtype == DType::F16    ? at::kHalf
                           : dtype == DType::BF16 ? at::kBFloat16
                                                  : at::kFloat)
                       .contiguous());
    tensors.push_back(
        {name, dtype, keep.back().sizes().vec(),
         std::string_view(static_cast<const char*>(keep.back().data_ptr()), keep.back().nbytes())});
  }
  write_safetensors(path, tensors);
}

TEST(CheckpointTest, AnExportedLayerPatternReadsBackInBothFieldForms) {
  TempDir dir;
  const std::string tokenizer = dir.write("tokenizer.json", testing::word_level_json(1000).dump());
  for (int64_t layers : {2, 4, 5, 6}) {
    for (int64_t every : {1, 2, 3, 4}) {
      ShapeOverrides shape;
      shape.hidden_size = 32;
      shape.layers = layers;
      shape.global_every = every;
      const Encoder encoder(shaped_config("tiny", shape, 1005, 0), 1);
      const std::string folder =
          (dir.path() / ("m" + std::to_string(layers) + "-" + std::to_string(every))).string();
      save_model_folder(folder, encoder, tokenizer, {});
      const std::string path = folder + "/config.json";
      const nlohmann::json written = nlohmann::json::parse(read_file(path));
      // Old form (transformers 4.48-4.5x, candle, llama.cpp): global_attn_every_n_layers only.
      nlohmann::json old_form = written, new_form = written;
      old_form.erase("layer_types");
      new_form.erase("global_attn_every_n_layers");
      for (const nlohmann::json* form : {&old_form, &new_form}) {
        EXPECT_EQ(EncoderConfig::from_json(*form, path).global_layers,
                  encoder.config().global_layers)
            << layers << " layers, every " << every << ", " << (form == &old_form ? "old" : "new")
            << " form";
      }
    }
  }
}

TEST(CheckpointTest, RoundTripsEveryArchitecture) {
  TempDir dir;
  const std::string tokenizer = dir.write("tokenizer.json", testing::word_level_json(1000).dump());
  // GTE in its three layouts: transformers' port, the remote code packed and unpacked.
  struct Case {
    Architecture architecture;
    GteLayout layout;
    bool pack_qkv;
    std::string name;
  };
  for (const Case& c : {Case{Architecture::ModernBert, GteLayout::Transformers, true, "modernbert"},
                        Case{Architecture::Bert, GteLayout::Transformers, true, "bert"},
                        Case{Architecture::Gte, GteLayout::Transformers, true, "gte"},
                        Case{Architecture::Gte, GteLayout::RemoteCode, true, "new-packed"},
                        Case{Architecture::Gte, GteLayout::RemoteCode, false, "new-split"}}) {
    const Architecture architecture = c.architecture;
    EncoderConfig config = tiny(architecture);
    config.gte_layout = c.layout;
    config.pack_qkv = c.pack_qkv;
    Encoder original(config, 42);
    const std::string folder = (dir.path() / c.name).string();
    PoolingSettings settings;
    settings.pooling = Pooling::Landmark;
    settings.landmarks.eval = LandmarkSpec::parse("fixed:64");
    save_model_folder(folder, original, tokenizer, settings);
    LoadedModel loaded = load_model_folder(folder);
    EXPECT_TRUE(loaded.missing_head.empty());
    EXPECT_TRUE(loaded.unexpected.empty());
    EXPECT_EQ(loaded.pooling.pooling, Pooling::Landmark);
    EXPECT_EQ(loaded.pooling.landmarks.eval.to_string(), "fixed:64");
    EXPECT_TRUE(at::equal(run(*loaded.encoder), run(original))) << c.name;
    EXPECT_EQ(loaded.encoder->config().to_json(), config.to_json()) << c.name << ": layout kept";
    for (const char* file :
         {"config.json", "tokenizer.json", "modules.json", "sentence_bert_config.json",
          "1_Pooling/config.json", "lmk_pooling.json"}) {
      EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(folder) / file)) << file;
    }
    // The tokenizer in the folder loads.
    EXPECT_EQ(load_tokenizer(folder)->vocab_size(), 1005u);
  }
  // HF names: ModernBERT's encoder sits under "model.", its head at the top.
  const SafetensorsFile modern((dir.path() / "modernbert" / "model.safetensors").string());
  EXPECT_NE(modern.find("model.layers.1.attn.Wqkv.weight"), nullptr);
  EXPECT_NE(modern.find("head.dense.weight"), nullptr);
  EXPECT_NE(modern.find("decoder.bias"), nullptr);
}

// A folder sentence-transformers wrote (no lmk_pooling.json) pools as sentence-transformers
// does: its Pooling module's mode, L2 when it has a Normalize module, cut at max_seq_length by
// default; a mode lmk does not compute and a broken modules.json are refused naming the file.
TEST(CheckpointTest, ASentenceTransformersFolderKeepsItsOwnPooling) {
  TempDir dir;
  const std::string tokenizer = dir.write("tokenizer.json", testing::word_level_json(1000).dump());
  const std::string folder = (dir.path() / "st").string();
  Encoder original(tiny(Architecture::Bert), 7);
  save_model_folder(folder, original, tokenizer, PoolingSettings{});
  const std::filesystem::path root(folder);
  std::filesystem::remove(root / "lmk_pooling.json");
  const auto write_text = [&](const std::string& name, const std::string& text) {
    std::ofstream((root / name).string()) << text;
  };
  const auto write = [&](const std::string& name, const nlohmann::json& j) {
    write_text(name, j.dump());
  };
  const nlohmann::json modules = nlohmann::json::array(
      {{{"idx", 0}, {"path", ""}, {"type", "sentence_transformers.models.Transformer"}},
       {{"idx", 1}, {"path", "1_Pooling"}, {"type", "sentence_transformers.models.Pooling"}},
       {{"idx", 2}, {"path", "2_Normalize"}, {"type", "sentence_transformers.models.Normalize"}}});
  write("modules.json", modules);
  write("1_Pooling/config.json",
        {{"pooling_mode_cls_token", false}, {"pooling_mode_mean_tokens", true}});
  write("sentence_bert_config.json", {{"max_seq_length", 256}, {"do_lower_case", false}});
  PoolingSettings settings = load_model_folder(folder).pooling;
  EXPECT_EQ(settings.pooling, Pooling::Mean);
  EXPECT_TRUE(settings.normalize);
  EXPECT_EQ(settings.max_seq_length, 256);
  EXPECT_TRUE(settings.truncate_by_default);

  // No Normalize module: not normalized; CLS mode.
  write("modules.json", nlohmann::json::array({modules[0], modules[1]}));
  write("1_Pooling/config.json", {{"pooling_mode_cls_token", true}});
  settings = load_model_folder(folder).pooling;
  EXPECT_EQ(settings.pooling, Pooling::Cls);
  EXPECT_FALSE(settings.normalize);

  // Max pooling is not computed: refused, naming the file.
  write("1_Pooling/config.json", {{"pooling_mode_max_tokens", true}});
  try {
    load_model_folder(folder);
    FAIL() << "max pooling accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("1_Pooling/config.json"), std::string::npos) << e.what();
  }
  write_text("modules.json", "{\"not\": \"a list\"}");
  EXPECT_THROW(load_model_folder(folder), InputError);

  // A folder with neither lmk's nor sentence-transformers' files: the defaults.
  std::filesystem::remove(root / "modules.json");
  settings = load_model_folder(folder).pooling;
  EXPECT_EQ(settings.pooling, Pooling::Cls);
  EXPECT_TRUE(settings.normalize);
  EXPECT_FALSE(settings.truncate_by_default);
}

TEST(CheckpointTest, ToleratesHfNamingAndReportsWhatItSkips) {
  TempDir dir;
  Encoder original(tiny(Architecture::Bert), 3);
  const std::string folder = dir.path().string() + "/bert";
  std::filesystem::create_directories(folder);
  AtomicFile config(folder + "/config.json");
  config.write(original.config().to_json().dump());
  config.commit();
  // Old TF-era names (gamma / beta), the "bert." prefix, a pooler, a tied decoder, no MLM head.
  std::vector<std::pair<std::string, at::Tensor>> named;
  for (const auto& [name, t] : original.named_weights()) {
    if (original.is_head_weight(name)) continue;
    std::string n = "bert." + name;
    if (n.find("LayerNorm.weight") != std::string::npos) n.replace(n.size() - 6, 6, "gamma");
    if (n.find("LayerNorm.bias") != std::string::npos) n.replace(n.size() - 4, 4, "beta");
    named.emplace_back(n, t);
  }
  named.emplace_back("bert.pooler.dense.weight", at::zeros({64, 64}));
  named.emplace_back("cls.predictions.decoder.weight", at::zeros({1005, 64}));
  named.emplace_back("something.else", at::zeros({2}));
  write_tensors(folder + "/model.safetensors", named);
  LoadedModel loaded = load_model_folder(folder);
  EXPECT_TRUE(at::equal(run(*loaded.encoder), run(original)));
  EXPECT_EQ(loaded.unexpected, (std::vector<std::string>{"something.else"}));
  EXPECT_EQ(loaded.missing_head.size(), 5u) << "MLM head absent: kept random, reported";
  EXPECT_TRUE(at::equal(loaded.encoder->weight("cls.predictions.bias"), at::zeros({1005})));
  EXPECT_TRUE(at::equal(loaded.encoder->weight("cls.predictions.transform.LayerNorm.weight"),
                        at::ones({64})));
  EXPECT_FALSE(at::isnan(loaded.encoder->weight("cls.predictions.transform.dense.weight"))
                   .any()
                   .item<bool>());
}

TEST(CheckpointTest, ShardsAndHalfPrecision) {
  TempDir dir;
  Encoder original(tiny(Architecture::ModernBert), 9);
  const std::string folder = dir.path().string();
  AtomicFile config(folder + "/config.json");
  config.write(original.config().to_json().dump());
  config.commit();
  std::vector<std::pair<std::string, at::Tensor>> first, second;
  nlohmann::json index = {{"metadata", nlohmann::json::object()},
                          {"weight_map", nlohmann::json::object()}};
  for (const auto& [name, t] : original.named_weights()) {
    const std::string full = original.is_head_weight(name) ? name : "model." + name;
    const bool in_first = first.size() <= second.size();
    (in_first ? first : second).emplace_back(full, t);
    index["weight_map"][full] =
        in_first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  write_tensors(folder + "/model-00001-of-00002.safetensors", first, DType::BF16);
  write_tensors(folder + "/model-00002-of-00002.safetensors", second, DType::F16);
  AtomicFile index_file(folder + "/model.safetensors.index.json");
  index_file.write(index.dump());
  index_file.commit();
  LoadedModel loaded = load_model_folder(folder);
  for (const auto& [name, t] : original.named_weights()) {
    EXPECT_TRUE(at::allclose(loaded.encoder->weight(name), t, 1e-2, 1e-3)) << name;
  }
}

TEST(CheckpointTest, MissingAndMisshapenTensorsAreNamed) {
  TempDir dir;
  EncoderConfig remote_code = tiny(Architecture::Gte);
  remote_code.gte_layout = GteLayout::RemoteCode;
  Encoder original(remote_code, 1);
  const std::string tokenizer = dir.write("tokenizer.json", testing::word_level_json(1000).dump());
  const std::string folder = (dir.path() / "m").string();
  save_model_folder(folder, original, tokenizer, {});
  // Drop one encoder tensor.
  std::vector<std::pair<std::string, at::Tensor>> named;
  for (const auto& [name, t] : original.named_weights()) {
    if (name != "encoder.layer.1.mlp.down_proj.weight")
      named.emplace_back(original.is_head_weight(name) ? name : "new." + name, t);
  }
  write_tensors(folder + "/model.safetensors", named);
  try {
    load_model_folder(folder);
    ADD_FAILURE() << "loaded without a tensor";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("encoder.layer.1.mlp.down_proj.weight"), std::string::npos)
        << e.what();
  }
  named.emplace_back("new.encoder.layer.1.mlp.down_proj.weight", at::zeros({3, 3}));
  write_tensors(folder + "/model.safetensors", named);
  try {
    load_model_folder(folder);
    ADD_FAILURE() << "loaded a wrong shape";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("shape [3, 3]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_model_folder((dir.path() / "nothing").string()), InputError);
}

TEST(CheckpointTest, LatentAttentionIsSavedWithTheModel) {
  TempDir dir;
  Encoder encoder(tiny(Architecture::ModernBert), 2);
  LatentAttention latent(64, 16, 4, 128, 5);
  PoolingSettings settings;
  settings.pooling = Pooling::Latent;
  const std::string folder = (dir.path() / "latent").string();
  save_model_folder(folder, encoder,
                    dir.write("tokenizer.json", testing::word_level_json(1000).dump()), settings,
                    &latent);
  LoadedModel loaded = load_model_folder(folder);
  ASSERT_NE(loaded.latent, nullptr);
  EXPECT_EQ(loaded.latent->latents(), 16);
  EXPECT_EQ(loaded.latent->heads(), 4);
  for (const auto& [name, t] : latent.named_weights())
    EXPECT_TRUE(at::equal(loaded.latent->named_weights().at(name), t)) << name;
}

// A Qwen3 decoder with trained-looking adapters on its attention projections.
std::unique_ptr<Encoder> adapted_decoder() {
  EncoderConfig c = tiny(Architecture::Qwen3);
  c.causal = true;
  auto encoder = std::make_unique<Encoder>(c, 3);
  LoraSettings s;
  s.rank = 2;
  s.alpha = 5;
  s.dropout = 0.1;
  s.target_modules = {"q_proj", "o_proj"};
  encoder->attach_lora(s, 4);
  const at::NoGradGuard no_grad;
  for (const auto& [name, adapter] : encoder->linear_layers())
    if (adapter->attached()) adapter->b.normal_(0, 0.1);
  return encoder;
}

TEST(AdapterFolderTest, RoundTripsAndMergesIntoTheSavedFolder) {
  TempDir dir;
  const std::string tokenizer = dir.write("tokenizer.json", testing::word_level_json(1000).dump());
  auto trained = adapted_decoder();
  save_adapter_folder(dir.path() / "adapter", *trained, (dir.path() / "base").string());
  const nlohmann::json config =
      nlohmann::json::parse(read_file((dir.path() / "adapter" / "adapter_config.json").string()));
  EXPECT_EQ(config["peft_type"], "LORA");
  EXPECT_EQ(config["r"], 2);
  EXPECT_EQ(config["lora_alpha"], 5.0);
  EXPECT_EQ(config["target_modules"].size(), 4u) << config.dump();
  EXPECT_EQ(config["base_model_name_or_path"], (dir.path() / "base").string());
  const SafetensorsFile file((dir.path() / "adapter" / "adapter_model.safetensors").string());
  EXPECT_NE(file.find("base_model.model.layers.1.self_attn.o_proj.lora_B.weight"), nullptr);
  EXPECT_EQ(file.header().tensors.size(), 8u);

  // Onto a fresh copy of the base: the same adapters, the same outputs.
  EncoderConfig c = tiny(Architecture::Qwen3);
  c.causal = true;
  Encoder fresh(c, 3);
  load_adapter_folder((dir.path() / "adapter").string(), fresh);
  EXPECT_EQ(fresh.lora().rank, 2);
  EXPECT_DOUBLE_EQ(fresh.lora().dropout, 0.1);
  EXPECT_TRUE(at::equal(run(fresh), run(*trained)));
  // save_model_folder merges: the saved folder alone computes the same.
  save_model_folder((dir.path() / "merged").string(), *trained, tokenizer, PoolingSettings{});
  LoadedModel merged = load_model_folder((dir.path() / "merged").string());
  EXPECT_EQ(merged.encoder->lora().rank, 0);
  EXPECT_TRUE(at::allclose(run(*merged.encoder), run(*trained), 1e-4, 1e-5));
  Encoder base(c, 3);
  EXPECT_FALSE(at::allclose(run(*merged.encoder), run(base), 1e-3, 1e-3)) << "the adapters count";
}

TEST(AdapterFolderTest, WhatLmkDoesNotComputeIsAnErrorNamingTheFieldOrTensor) {
  TempDir dir;
  auto trained = adapted_decoder();
  const fs::path good = dir.path() / "adapter";
  save_adapter_folder(good, *trained, "base");
  EncoderConfig c = tiny(Architecture::Qwen3);
  c.causal = true;
  auto expect_error = [&](const fs::path& folder, const std::string& named) {
    Encoder fresh(c, 3);
    try {
      load_adapter_folder(folder.string(), fresh);
      ADD_FAILURE() << "accepted " << folder << ", expected an error naming " << named;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
  };
  // Config fields.
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, nlohmann::json>>{{"use_dora", true},
                                                           {"use_rslora", true},
                                                           {"fan_in_fan_out", true},
                                                           {"rank_pattern", {{"q_proj", 4}}},
                                                           {"bias", "all"},
                                                           {"modules_to_save", {"score"}},
                                                           {"peft_type", "IA3"},
                                                           {"r", 0}}) {
    const fs::path copy = dir.path() / ("bad-" + key);
    fs::create_directories(copy);
    fs::copy_file(good / "adapter_model.safetensors", copy / "adapter_model.safetensors");
    nlohmann::json config =
        nlohmann::json::parse(read_file((good / "adapter_config.json").string()));
    config[key] = value;
    std::ofstream(copy / "adapter_config.json") << config.dump();
    expect_error(copy, "adapter_config.json: " + key);
  }
  // Tensors.
  const at::Tensor a = at::zeros({2, 64}), b = at::zeros({64, 2});
  auto with_tensors = [&](const std::string& name,
                          const std::vector<std::pair<std::string, at::Tensor>>& named) {
    const fs::path copy = dir.path() / name;
    fs::create_directories(copy);
    fs::copy_file(good / "adapter_config.json", copy / "adapter_config.json");
    write_tensors((copy / "adapter_model.safetensors").string(), named);
    return copy;
  };
  const std::string q = "base_model.model.layers.0.self_attn.q_proj";
  expect_error(with_tensors("no-b", {{q + ".lora_A.weight", a}}), "has no lora_B");
  expect_error(with_tensors("shape", {{q + ".lora_A.weight", at::zeros({3, 64})},
                                      {q + ".lora_B.weight", b}}),
               "lora_A.weight': shape [3, 64], the layer and r = 2 need [2, 64]");
  expect_error(with_tensors("unknown", {{"base_model.model.layers.0.mlp.w9.lora_A.weight", a},
                                        {"base_model.model.layers.0.mlp.w9.lora_B.weight", b}}),
               "no linear layer 'layers.0.mlp.w9'");
  expect_error(with_tensors("other", {{q + ".weight", a}}), "not a LoRA matrix");
  expect_error(dir.path() / "missing", "no adapter_config.json");
  // The class prefix PEFT writes for Qwen3ForCausalLM is read as the base class's.
  Encoder fresh(c, 3);
  load_adapter_folder(
      with_tensors("prefixed",
                   {{"base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight", a},
                    {"base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight", b}})
          .string(),
      fresh);
  EXPECT_TRUE(fresh.linear_layers().at("layers.0.self_attn.q_proj")->attached());
  EXPECT_FALSE(fresh.linear_layers().at("layers.0.self_attn.o_proj")->attached());
}

}  // namespace
}  // namespace lmk
