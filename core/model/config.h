#pragma once

// One model configuration for the encoders ModernBERT, BERT and GTE (transformers' own port,
// model_type "gte", or the hub's remote code, "new") and the decoder families Llama and Qwen3,
// read from a Hugging Face config.json or built from a preset for from-scratch studies.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lmk {

enum class Architecture { ModernBert, Bert, Gte, Llama, Qwen3 };

// "modernbert" / "bert" / "gte" / "llama" / "qwen3" (config.json's model_type; the encoders' the
// name `--architecture` takes).
const char* architecture_name(Architecture a);

// GTE's two folder layouts of one model, both storing the tensors as the hub's remote code
// named them (qkv_proj, up_gate_proj, attn_ln, mlp_ln, lm_head.norm). Transformers:
// transformers' own port (model_type "gte", tensors under "gte.", rope_parameters; it converts
// the names to GteModel's on load and back on save, and always packs Q / K / V). RemoteCode:
// the hub's trust_remote_code folders (model_type "new", tensors under "new.", rope_theta,
// pack_qkv).
enum class GteLayout { Transformers, RemoteCode };

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
  int64_t local_attention = 128;  // total window; local layers see |i - j| <= local_attention / 2
  // Per layer: full attention (else sliding window). lmk's own models follow ModernBERT's rule
  // (layer i global when i % k == 0); folders with `layer_types` may hold any pattern.
  std::vector<bool> global_layers;
  double global_rope_theta = 160000.0;
  double local_rope_theta = 10000.0;

  // BERT / GTE
  int64_t type_vocab_size = 2;
  double rope_theta = 10000.0;                     // GTE
  GteLayout gte_layout = GteLayout::Transformers;  // the folder a GTE model came from; lmk.s own
                                                   // GTE models are written as transformers'
  bool pack_qkv = true;                            // GTE remote code: one qkv_proj (else q / k / v)

  // Decoders (Llama, Qwen3): RMSNorm (norm_eps), SwiGLU, grouped-query attention, RoPE with
  // rope_theta; Qwen3 normalizes each head's queries and keys. attention_bias / mlp_bias as
  // above (Qwen3 has no MLP bias).
  int64_t num_kv_heads = 0;         // key / value heads (0: num_heads)
  int64_t explicit_head_dim = 0;    // config.json's head_dim (0: hidden_size / num_heads)
  bool tie_word_embeddings = true;  // the LM head is the token embeddings (else lm_head.weight)
  // Causal attention (a decoder's own; each position sees itself and those before it), or
  // bidirectional (LLM2Vec's conversion): lmk's own field "lmk_bidirectional" in config.json.
  bool causal = false;

  // The RoPE ablation (the paper's DISABLE_ROPE): rotation frequencies zeroed, so attention
  // sees no positions at all. lmk's own field "lmk_disable_rope" in config.json; Hugging Face
  // transformers does not know it and would rotate.
  bool rope_disabled = false;

  // config.json's model_type: "modernbert", "bert", "gte" or "new" (a remote-code GTE folder).
  const char* model_type() const;

  // Parses a Hugging Face config.json object (old and new field names); `where` names the file.
  static EncoderConfig from_json(const nlohmann::json& j, const std::string& where);
  // tiny (4 layers, H 64) | small (7 layers, H 256) | base (ModernBERT-base's shape: 22 layers,
  // H 768), ModernBERT architecture.
  static EncoderConfig preset(const std::string& name, int64_t vocab_size, int64_t pad_token_id);
  // The config.json Hugging Face transformers reads for this architecture. For ModernBERT the
  // layer pattern is written in both forms: `layer_types` (transformers >= 5) and, where the
  // pattern has that shape, `global_attn_every_n_layers` (transformers 4.48-4.5x, candle,
  // llama.cpp); see legacy_layer_pattern_note().
  nlohmann::json to_json() const;
  // k when layer i is global exactly when i % k == 0 (what `global_attn_every_n_layers` can
  // say), else nullopt. ModernBERT only.
  std::optional<int64_t> global_every_n_layers() const;
  // "" when config.json states the layer pattern in both forms, else a sentence saying that
  // readers of `global_attn_every_n_layers` only (transformers <= 4.5x) load another pattern.
  std::string legacy_layer_pattern_note() const;
  // The layers as letters, G global and L local ("GLLG").
  std::string layer_pattern() const;
  // One line for logs: "modernbert, 4 layers (GLLG), hidden 128, 4 heads, MLP 256, window 128".
  std::string describe() const;

  int64_t head_dim() const {
    return explicit_head_dim > 0 ? explicit_head_dim : hidden_size / num_heads;
  }
  int64_t kv_heads() const { return num_kv_heads > 0 ? num_kv_heads : num_heads; }
  bool is_decoder() const {
    return architecture == Architecture::Llama || architecture == Architecture::Qwen3;
  }
  bool uses_rope() const { return architecture != Architecture::Bert; }
  // Whether attention rotates queries and keys (RoPE, not ablated).
  bool rotates() const { return uses_rope() && !rope_disabled; }
  // Whether layer i attends to all positions (ModernBERT local layers do not).
  bool is_global_layer(int64_t layer) const;
  // RoPE base of layer i.
  double layer_rope_theta(int64_t layer) const;
  // Largest |i - j| a local layer may attend over (local_attention / 2).
  int64_t half_window() const { return local_attention / 2; }
  // Throws InputError naming `where` when a field is out of range.
  void validate(const std::string& where) const;
};

// The shape options of `lmk model init` (and of the encode benchmark) over a preset. Unset
// options keep the preset's value (BERT and GTE: an MLP of 4 × hidden, as BERT's own shape;
// the decoders 3 × hidden, SiLU, RMSNorm ε 1e-6, tied embeddings, RoPE 10000, causal).
struct ShapeOverrides {
  std::string architecture = "modernbert";  // modernbert | bert | gte | qwen3 | llama
  std::optional<int64_t> hidden_size, layers, heads, intermediate_size;
  std::optional<int64_t> local_window;  // ModernBERT: total window of the local layers
  std::optional<int64_t> global_every;  // ModernBERT: layer i global when i % k == 0
  std::optional<double> rope_theta;     // ModernBERT: the global layers' base; GTE: the base
  bool no_rope = false;                 // ModernBERT / GTE: the RoPE ablation (rope_disabled)
  std::optional<int64_t> kv_heads;      // decoders: key / value heads (default: heads)
  bool bidirectional = false;           // decoders: LLM2Vec's conversion (else causal)

  // Whether any option changes the preset.
  bool reshapes() const {
    return architecture != "modernbert" || hidden_size || layers || heads || intermediate_size ||
           local_window || global_every || rope_theta || no_rope || kv_heads || bidirectional;
  }
};

// The preset's configuration with the overrides applied and validated. A field out of range,
// or one that the architecture does not have (local_window for BERT, rope_theta for BERT's
// absolute positions), is a FieldError naming the field; an unknown preset one naming "preset".
EncoderConfig shaped_config(const std::string& preset, const ShapeOverrides& shape,
                            int64_t vocab_size, int64_t pad_token_id);

}  // namespace lmk
