#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tokenize/landmark.h"

namespace lmk {

// A padded batch of model inputs: everything pooling and analysis need, so no later stage
// re-tokenizes. Row-major [rows, length]; padding has mask 0, id pad_id, token offset -1.
struct Batch {
  size_t rows = 0;
  size_t length = 0;
  std::vector<int32_t> ids;                          // [rows * length]
  std::vector<uint8_t> attention_mask;               // [rows * length]
  std::vector<int32_t> token_offsets;                // [rows * length]
  std::vector<std::vector<int32_t>> pool_positions;  // per row
  std::vector<size_t> source_rows;                   // index of each row in the input list
};

// Pads the texts picked by `indices` into one batch (length = the longest; with
// pad_to_multiple > 1 rounded up to a multiple of it).
Batch make_batch(const std::vector<TokenizedText>& texts, const std::vector<size_t>& indices,
                 int32_t pad_id, size_t pad_to_multiple = 1);

// Groups row indices into batches of texts of similar length so little padding is wasted:
// sorted by length, cut into batches of at most `batch_size` rows and `max_tokens` padded
// tokens (0: no token limit), and, with max_waste >= 0, of at most that padding waste (padded
// positions / real positions − 1: a row that would push its batch past it starts the next one).
// Deterministic; returns batches longest first.
std::vector<std::vector<size_t>> bucket_by_length(const std::vector<size_t>& lengths,
                                                  size_t batch_size, size_t max_tokens = 0,
                                                  double max_waste = -1);

}  // namespace lmk
