#pragma once

// Hugging Face model folders in and out: config.json + model.safetensors (or shards through
// model.safetensors.index.json) + tokenizer files + sentence-transformers files + the pooling
// and landmark settings (lmk_pooling.json), so another tool can reproduce the embedding.

#include <memory>
#include <string>
#include <vector>

#include "core/tokenize/landmark.h"
#include "engine/model/encoder.h"
#include "engine/pool/latent_attention.h"
#include "engine/pool/pooling.h"

namespace lmk {

// How a model folder's embeddings are made.
// Read from lmk_pooling.json; a folder without one that sentence-transformers wrote
// (modules.json) gets its own: the Pooling module's mode, normalized when it has a Normalize
// module, truncated at sentence_bert_config.json's max_seq_length as sentence-transformers
// truncates; any other folder, the defaults.
struct PoolingSettings {
  Pooling pooling = Pooling::Cls;
  LandmarkSettings landmarks;
  bool normalize = true;
  int64_t max_seq_length = 512;
  // Whether inputs are cut at max_seq_length unless --max-length says otherwise: a
  // sentence-transformers folder's own behaviour. lmk's folders keep every token (long inputs
  // are what they are for).
  bool truncate_by_default = false;
};

struct LoadedModel {
  std::unique_ptr<Encoder> encoder;
  std::unique_ptr<LatentAttention> latent;  // when the folder has latent attention weights
  PoolingSettings pooling;                  // lmk_pooling.json, or sentence-transformers' files
  std::vector<std::string> missing_head;    // MLM head tensors the checkpoint lacks (kept random)
  std::vector<std::string> unexpected;      // tensors that were not used
};

// Loads a model folder. Tolerates the "model." / "bert." / "new." prefixes, tied decoders,
// BERT's gamma/beta names and absent MLM heads; any missing encoder tensor or wrong shape is
// an InputError naming the file and tensor.
LoadedModel load_model_folder(const std::string& dir);

// Writes a model folder (creating dir); tokenizer_path is a tokenizer.json, a .model or a
// folder holding them. Files are written atomically.
void save_model_folder(const std::string& dir, const Encoder& encoder,
                       const std::string& tokenizer_path, const PoolingSettings& pooling,
                       const LatentAttention* latent = nullptr);

// LoRA adapters as a PEFT adapter folder: adapter_config.json (peft_type LORA, r, lora_alpha,
// lora_dropout, the adapted layers' full names as target_modules, base_model_name_or_path) and
// adapter_model.safetensors ("base_model.model.<layer>.lora_A.weight" / "lora_B.weight", F32),
// as PEFT saves an adapter on the base model class (transformers' AutoModel: Qwen3Model,
// BertModel, ...): PeftModel.from_pretrained(AutoModel.from_pretrained(base), dir) loads it.
// An InputError when encoder has no adapters attached.
void save_adapter_folder(const std::string& dir, const Encoder& encoder,
                         const std::string& base_model);

// Reads a PEFT LoRA adapter folder onto encoder (which has none yet): attaches adapters to the
// layers the file holds tensors for, with the config's r, lora_alpha and lora_dropout, and
// loads them. Tensor names may carry "base_model.model." and the class prefix ("model.",
// "bert.", ...), as PEFT writes them for AutoModel or the *For... classes. What PEFT can hold
// that lmk does not compute (DoRA, rsLoRA, per-layer ranks, bias training, modules_to_save,
// fan_in_fan_out), an unknown layer, a missing A or B and a wrong shape are InputErrors naming
// the file and field or tensor.
void load_adapter_folder(const std::string& dir, Encoder& encoder);

}  // namespace lmk
