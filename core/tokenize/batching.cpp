#include "core/tokenize/batching.h"

#include <algorithm>
#include <numeric>

#include "core/util/error.h"

namespace lmk {

Batch make_batch(const std::vector<TokenizedText>& texts, const std::vector<size_t>& indices,
                 int32_t pad_id, size_t pad_to_multiple) {
  Batch batch;
  batch.rows = indices.size();
  for (size_t i : indices) {
    if (i >= texts.size())
      throw InputError("make_batch: row " + std::to_string(i) + " out of range");
    batch.length = std::max(batch.length, texts[i].ids.size());
  }
  if (pad_to_multiple > 1)
    batch.length = (batch.length + pad_to_multiple - 1) / pad_to_multiple * pad_to_multiple;
  batch.ids.assign(batch.rows * batch.length, pad_id);
  batch.attention_mask.assign(batch.rows * batch.length, 0);
  batch.token_offsets.assign(batch.rows * batch.length, -1);
  batch.source_rows = indices;
  batch.pool_positions.reserve(batch.rows);
  for (size_t r = 0; r < batch.rows; ++r) {
    const TokenizedText& t = texts[indices[r]];
    const size_t base = r * batch.length;
    std::copy(t.ids.begin(), t.ids.end(), batch.ids.begin() + static_cast<long>(base));
    std::fill_n(batch.attention_mask.begin() + static_cast<long>(base), t.ids.size(), 1);
    std::copy(t.token_offsets.begin(), t.token_offsets.end(),
              batch.token_offsets.begin() + static_cast<long>(base));
    batch.pool_positions.push_back(t.pool_positions);
  }
  return batch;
}

std::vector<std::vector<size_t>> bucket_by_length(const std::vector<size_t>& lengths,
                                                  size_t batch_size, size_t max_tokens,
                                                  double max_waste) {
  if (batch_size == 0) throw input_error("batch_size", "must be > 0");
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return lengths[a] > lengths[b]; });
  std::vector<std::vector<size_t>> batches;
  size_t real = 0;  // the last batch's real positions
  for (size_t i : order) {
    // Sorted longest first, so the first row of a batch sets its padded length.
    bool full = batches.empty() || batches.back().size() >= batch_size;
    if (!full) {
      const size_t padded = (batches.back().size() + 1) * lengths[batches.back().front()];
      full = (max_tokens > 0 && padded > max_tokens) ||
             (max_waste >= 0 && static_cast<double>(padded) >
                                    (1.0 + max_waste) * static_cast<double>(real + lengths[i]));
    }
    if (full) {
      batches.emplace_back();
      real = 0;
    }
    batches.back().push_back(i);
    real += lengths[i];
  }
  return batches;
}

}  // namespace lmk
