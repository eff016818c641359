#pragma once

// One encoder configuration for ModernBERT, BERT and GTE ("new"), read from a Hugging Face
// config.json or built from a preset for from-scratch studies.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace lmk {

enum class Architecture { ModernBert, Bert, Gte };

// "modernbert" / "bert" / "new".
const char* architecture_name(Architecture a);

struct EncoderConfig {
  Architecture architecture = Architecture::ModernBert;
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t max_position_embeddings = 8192;  // BERT: size of the position table
  double norm_eps = 1e-5;
  std::string activation = "gelu";  // gelu (erf), gelu_new / gelu_pytorch_tanh (tanh), silu, relu
  int64_t pad_token_id = 0;

  // ModernBERT
  bool norm_bias = false, attention_bias = false, mlp_bias = false, decoder_bias = true;
  bool classifier_bias = false;
  std::string classifier_activation = "gelu";
  int64_t local_attention = 128;    // total window; local layers see |i - j| <= local_attention / 2
  std::vector<bool> global_layers;  // per layer: full attention (else sliding window)
  double global_rope_theta = 160000.0;
  double local_rope_theta = 10000.0;

  // BERT / GTE
  int64_t type_vocab_size = 2;
  double rope_theta = 10000.0;  // GTE
  bool pack_qkv = true;         // GTE: one qkv_proj (else q/k/v)

  // Parses a Hugging Face config.json object (old and new field names); `where` names the file.
  static EncoderConfig from_json(const nlohmann::json& j, const std::string& where);
  // tiny (4 layers, H 64) | small (7 layers, H 256) | base (ModernBERT-base's shape: 22 layers,
  // H 768), ModernBERT architecture.
  static EncoderConfig preset(const std::string& name, int64_t vocab_size, int64_t pad_token_id);
  // The config.json Hugging Face transformers reads for this architecture.
  nlohmann::json to_json() const;

  int64_t head_dim() const { return hidden_size / num_heads; }
  bool uses_rope() const { return architecture != Architecture::Bert; }
  // Whether layer i attends to all positions (ModernBERT local layers do not).
  bool is_global_layer(int64_t layer) const;
  // RoPE base of layer i.
  double layer_rope_theta(int64_t layer) const;
  // Largest |i - j| a local layer may attend over (local_attention / 2).
  int64_t half_window() const { return local_attention / 2; }
  // Throws InputError naming `where` when a field is out of range.
  void validate(const std::string& where) const;
};

}  // namespace lmk
