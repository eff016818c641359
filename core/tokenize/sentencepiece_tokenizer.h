#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/tokenize/tokenizer.h"

namespace lmk {

// Loads a sentencepiece .model (unigram or BPE). Special tokens: [CLS] / [SEP] / [MASK] /
// [PAD] when the model has them (models trained by train_sentencepiece do), else <s> / </s>.
std::unique_ptr<Tokenizer> load_sentencepiece_tokenizer(const std::string& path);

struct SentencePieceTrainOptions {
  std::vector<std::string> inputs;  // text files, one sentence or paragraph per line
  std::string output_model;         // FILE.model (FILE.vocab is written beside it)
  int vocab_size = 8000;
  std::string model_type = "unigram";  // unigram | bpe
  double character_coverage = 0.9995;
  size_t max_sentences = 2000000;  // input lines sampled for training
  int threads = 0;                 // 0: all cores
};

// Trains a sentencepiece model whose special tokens suit encoders: <pad>=0, <unk>=1, [CLS]=2,
// [SEP]=3, [MASK]=4, with byte fallback so no text is ever <unk>. Throws InputError.
void train_sentencepiece(const SentencePieceTrainOptions& options);

}  // namespace lmk
