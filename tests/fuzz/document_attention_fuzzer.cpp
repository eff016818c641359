// libFuzzer target for the attention explorer's file (lmk attention --explore, read by the
// workbench): any bytes either parse into data whose arrays have the sizes the header claims
// and whose spans and positions lie inside the text and the input, or are rejected with an
// InputError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/eval/document_attention.h"
#include "core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  try {
    const lmk::DocumentAttention d = lmk::parse_document_attention(file, "fuzz.lmkattn");
    const auto L = static_cast<size_t>(d.length());
    if (d.spans.size() != L || d.global_layers.size() != static_cast<size_t>(d.layers) ||
        d.profiles.size() != static_cast<size_t>(d.layers * (1 + d.heads)) * L)
      std::abort();
    for (const auto& [begin, end] : d.spans)
      if (begin > end || end > d.text.size()) std::abort();
    for (int64_t p : d.pooling_positions)
      if (p < 0 || static_cast<size_t>(p) >= L) std::abort();
    for (const auto& [layer, rows] : d.rows)
      if (layer < 0 || layer >= d.layers || rows.size() != d.pooling_positions.size() * L)
        std::abort();
    if (!d.query_similarity.empty() && d.query_similarity.size() != d.pooling_positions.size())
      std::abort();
    volatile float sink = d.sink_share(d.layers - 1, -1);  // reads inside the profiles
    (void)sink;
  } catch (const lmk::InputError&) {
  }
  return 0;
}
