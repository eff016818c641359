#pragma once

// Encoding texts into embeddings with a model folder's encoder and a pooling: tokenization
// with the pooling's landmark layout, length-bucketed batches, one forward per batch.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/model/checkpoint.h"
#include "core/tokenize/tokenizer.h"

namespace lmk {

struct EncodeOptions {
  Pooling pooling = Pooling::Cls;
  int granularity =
      0;  // landmark / MultiCLS / every-k granularity (0: the model folder's eval setting)
  size_t max_length = 0;  // 0: no truncation
  size_t batch_size = 16;
  size_t max_batch_tokens = 32768;  // padded tokens per batch
  bool normalize = true;
  // "cpu", "cuda" or "cuda:N": where the encoder runs (bf16 autocast on CUDA); pooling and the
  // returned embeddings stay on the CPU in float32.
  std::string device = "cpu";
};

struct Batch;

// A padded batch as tensors: ids and attention mask, [B, L] int64 each (copies).
std::pair<at::Tensor, at::Tensor> batch_tensors(const Batch& batch);

// Parses --device; an InputError names the flag when the value is malformed or when CUDA is
// asked for and this LibTorch build has none.
c10::Device parse_device(const std::string& name);

// The landmark layout a pooling reads: lmk -> fixed:g (or the folder's eval spec), multicls ->
// multicls:g, everything else -> the tokenizer's own template.
LandmarkSpec landmark_spec_for(Pooling pooling, int granularity, const PoolingSettings& folder);

// Encodes texts -> embeddings [N, H] (float32, input order). progress(done) is called after
// every batch with the number of texts encoded so far.
at::Tensor encode_texts(const LoadedModel& model, const Tokenizer& tokenizer,
                        const std::vector<std::string>& texts, const EncodeOptions& options,
                        const std::function<void(size_t)>& progress = {});

}  // namespace lmk
