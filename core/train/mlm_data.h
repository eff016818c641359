#pragma once

// Inputs for pretraining: documents packed into full-length sequences, and either BERT's
// 80 / 10 / 10 masking at a chosen rate (masked-language modelling, ModernBERT: 30 %) or
// next-token targets (a causal decoder's language modelling).
// Standard library only; seeded, the same on every platform.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lmk {

// Packs documents (content token ids) into sequences of exactly max_length ids:
// [CLS] tokens... [SEP], the documents concatenated in order with sep_id between them, so no
// token is lost or padded except in the last sequence (shorter, never empty). max_length >= 3.
std::vector<std::vector<int32_t>> pack_sequences(const std::vector<std::vector<int32_t>>& documents,
                                                 size_t max_length, int32_t cls_id, int32_t sep_id);

struct MaskingOptions {
  double mask_rate = 0.3;         // share of maskable positions chosen for prediction
  double use_mask_token = 0.8;    // of those: replaced by mask_id
  double use_random_token = 0.1;  // replaced by a random id in [first_random_id, vocab_size)
  int32_t mask_id = 0;
  int32_t vocab_size = 0;
  int32_t first_random_id = 0;      // random replacements avoid the special ids below this
  std::vector<int32_t> never_mask;  // special ids ([CLS], [SEP], [PAD])
};

struct MaskedSequence {
  std::vector<int32_t> input_ids;
  std::vector<int32_t> labels;  // the original id where a prediction is asked, else -100
};

// Each maskable position is chosen with probability mask_rate (as Hugging Face's
// DataCollatorForLanguageModeling does); a chosen one becomes mask_id, a random id, or stays,
// with the given shares. The draws depend only on (seed, position).
MaskedSequence mask_tokens(const std::vector<int32_t>& ids, const MaskingOptions& options,
                           uint64_t seed);

// Next-token prediction: ids unchanged as the input, the label at position t the id at t + 1
// (-100 at the last position, which has no next token).
MaskedSequence next_token_targets(const std::vector<int32_t>& ids);

}  // namespace lmk
