#pragma once

// The one text -> embedding stage, used by evaluation, training, attention capture and the
// CLI: the pooling policy (plan_pooling: which landmark layout a pooling reads, its options,
// what a run records), one padded batch through the encoder and the pooling (embed_batch, with
// gradients when training), and whole lists of texts in length-bucketed batches (encode_texts).

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/tokenize/landmark.h"
#include "core/tokenize/tokenizer.h"
#include "engine/embed/model_folder.h"

namespace lmk {

struct EncodeOptions {
  Pooling pooling = Pooling::Cls;
  int granularity =
      0;  // landmark / MultiCLS / every-k granularity (0: the model folder's eval setting)
  size_t max_length = 0;  // 0: no truncation
  size_t batch_size = 16;
  size_t max_batch_tokens = 32768;  // padded tokens per batch
  double max_padding_waste = 0.05;  // padded / real positions − 1 per batch (bucket_by_length)
  bool normalize = true;
  // "cpu", "cuda" or "cuda:N": where the encoder and the pooling run (bf16 autocast on CUDA;
  // pooling in float32 on the device); the returned embeddings are float32 on the CPU.
  std::string device = "cpu";
};

struct Batch;

// A padded batch as tensors: ids and attention mask, [B, L] int64 each (copies).
std::pair<at::Tensor, at::Tensor> batch_tensors(const Batch& batch);

// Parses a device ("cpu", "cuda", "cuda:N"); a FieldError names `where` (the field "device" by
// default, which a command line shows as its --device; an option or key the caller names stays
// as it is) when the value is malformed, when CUDA is asked for and this LibTorch build has
// none, or when cuda:N names a device this machine does not have.
c10::Device parse_device(const std::string& name, const std::string& where = "device");
// What every command does with a device name before any ATen call (a command line's --device:
// at parse time; a config's device: when read): a CUDA device loads the CUDA module, which
// registers CUDA with ATen. ATen caches its first answer about CUDA (at::manual_seed asks), so
// later would be too late. A module that cannot load is left to parse_device to report.
void prepare_device(const std::string& name);

// bf16 autocast of `device`'s ops while it lives, when `enable` (training and encoding enable it
// on CUDA; the CPU stays in fp32), as torch.autocast does it: the nesting counted, and autocast's
// cache of bf16 copies of the weights cleared when the outermost guard ends (a step's optimizer
// update must reach the next step's forward), the previous state and dtype restored.
class BfloatAutocast {
 public:
  explicit BfloatAutocast(bool enable, c10::DeviceType device = c10::kCUDA);
  ~BfloatAutocast();
  BfloatAutocast(const BfloatAutocast&) = delete;
  BfloatAutocast& operator=(const BfloatAutocast&) = delete;

 private:
  bool enabled_ = false, previous_ = false;
  c10::DeviceType device_ = c10::kCUDA;
  c10::ScalarType previous_dtype_ = c10::kBFloat16;
};

// How a pooling turns texts into an embedding: decided once, here, for every caller.
struct PoolingPlan {
  Pooling pooling = Pooling::Cls;
  // The layout of the model input: lmk -> fixed:g (or the folder's eval layout when no g is
  // given), multicls -> multicls:g, every other pooling -> the tokenizer's own template.
  LandmarkSpec landmarks;
  // The layout while training: lmk -> the folder's train layout (variable g drawn per row),
  // every other pooling -> `landmarks`.
  LandmarkSpec train_landmarks;
  PoolingOptions options;  // normalize, every_k, the latent attention module
  // The granularity actually used: lmk with a fixed layout and multicls -> g, mean_every_k ->
  // k; 0 for the poolings without one and for a layout whose g varies (variable, sentence).
  int granularity = 0;

  // Whether the pooling reads its own positions (landmarks, CLS tokens): attention capture
  // queries them; `last` is represented by the input's last token (a decoder's final EOS), every
  // other pooling by position 0.
  bool reads_positions() const;
  // The positions attention capture queries for this pooling in `input` (never empty).
  std::vector<int64_t> query_positions(const TokenizedText& input) const;
  // The settings a run records: pooling, granularity and, for lmk / multicls, the layout.
  nlohmann::json record() const;
};

// The plan for a pooling over a model folder's settings. granularity 0: the folder's eval
// layout (lmk) or kDefaultGranularity (multicls, mean_every_k). InputError: a negative
// granularity (names --granularity), latent pooling without latent weights (names `folder_name`).
PoolingPlan plan_pooling(Pooling pooling, int granularity, const PoolingSettings& folder,
                         const LatentAttention* latent, bool normalize,
                         const std::string& folder_name = "the model folder");
// The plan of encode options over a loaded model (its settings, its latent module).
PoolingPlan plan_pooling(const EncodeOptions& options, const LoadedModel& model);

// The tokens a model reads of an input asked to be cut at `max_length` (0: no limit): at most
// its position table for a model with absolute positions (BERT: 512), whatever was asked;
// models with rotary positions read any length.
size_t input_limit(const EncoderConfig& config, size_t max_length);

// The model inputs of a plan: its landmark layout, cut to options.max_length and to what the
// model can read (input_limit): a BERT input longer than its position table is cut, as
// transformers and sentence-transformers cut it, instead of failing.
LandmarkTokenizer input_tokenizer(const Tokenizer& tokenizer, const PoolingPlan& plan,
                                  const EncodeOptions& options, const EncoderConfig& config);

// One padded batch through the encoder and the pooling (fp32) on `device`: [B, H] float32 on
// the CPU.
// With gradients enabled (training) the result carries them.
at::Tensor embed_batch(const LoadedModel& model, const Batch& batch, const PoolingPlan& plan,
                       const c10::Device& device = c10::Device(c10::kCPU));

// Encodes texts -> embeddings [N, H] (float32, input order) with `plan`, the plan of `options`
// over `model` that the command made once (plan_pooling) and passes down to everything that
// encodes, records or captures attention for it. progress(done) is called after every batch
// with the number of texts encoded so far.
at::Tensor encode_texts(const LoadedModel& model, const Tokenizer& tokenizer,
                        const std::vector<std::string>& texts, const EncodeOptions& options,
                        const PoolingPlan& plan, const std::function<void(size_t)>& progress = {});
// The same with plan_pooling(options, model), for a caller that encodes once.
at::Tensor encode_texts(const LoadedModel& model, const Tokenizer& tokenizer,
                        const std::vector<std::string>& texts, const EncodeOptions& options,
                        const std::function<void(size_t)>& progress = {});

}  // namespace lmk
