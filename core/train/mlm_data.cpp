#include "core/train/mlm_data.h"

#include <algorithm>

#include "core/util/error.h"
#include "core/util/random.h"

namespace lmk {

namespace {}  // namespace

std::vector<std::vector<int32_t>> pack_sequences(const std::vector<std::vector<int32_t>>& documents,
                                                 size_t max_length, int32_t cls_id,
                                                 int32_t sep_id) {
  if (max_length < 3) throw InputError("pack_sequences: max_length must be >= 3");
  const size_t content = max_length - 2;
  std::vector<std::vector<int32_t>> sequences;
  std::vector<int32_t> current;
  auto flush = [&] {
    if (current.empty()) return;
    std::vector<int32_t> sequence;
    sequence.reserve(current.size() + 2);
    sequence.push_back(cls_id);
    sequence.insert(sequence.end(), current.begin(), current.end());
    sequence.push_back(sep_id);
    sequences.push_back(std::move(sequence));
    current.clear();
  };
  bool first = true;
  for (const auto& document : documents) {
    if (document.empty()) continue;
    if (!first) {
      current.push_back(sep_id);
      if (current.size() == content) flush();
    }
    first = false;
    for (int32_t id : document) {
      current.push_back(id);
      if (current.size() == content) flush();
    }
  }
  flush();
  return sequences;
}

MaskedSequence mask_tokens(const std::vector<int32_t>& ids, const MaskingOptions& options,
                           uint64_t seed) {
  if (options.vocab_size <= options.first_random_id)
    throw InputError("mask_tokens: vocab_size must exceed first_random_id");
  MaskedSequence out{ids, std::vector<int32_t>(ids.size(), -100)};
  const uint64_t base = splitmix64(seed);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (std::find(options.never_mask.begin(), options.never_mask.end(), ids[i]) !=
        options.never_mask.end())
      continue;
    // Three independent draws per position: chosen?, how replaced, which random id.
    const uint64_t a = splitmix64(base ^ (i * 0xD1B54A32D192ED03ULL));
    const uint64_t b = splitmix64(a), c = splitmix64(b);
    if (unit_interval(a) >= options.mask_rate) continue;
    out.labels[i] = ids[i];
    const double how = unit_interval(b);
    if (how < options.use_mask_token) {
      out.input_ids[i] = options.mask_id;
    } else if (how < options.use_mask_token + options.use_random_token) {
      const auto span = static_cast<uint64_t>(options.vocab_size - options.first_random_id);
      out.input_ids[i] = options.first_random_id + static_cast<int32_t>(c % span);
    }
  }
  return out;
}

MaskedSequence next_token_targets(const std::vector<int32_t>& ids) {
  MaskedSequence out;
  out.input_ids = ids;
  out.labels.assign(ids.size(), -100);
  for (size_t t = 0; t + 1 < ids.size(); ++t) out.labels[t] = ids[t + 1];
  return out;
}

}  // namespace lmk
