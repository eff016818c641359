#pragma once

// One document's attention as the workbench's attention explorer shows it, and its file
// (`lmk attention --explore OUT`): what the pooling tokens (the CLS, or every landmark) attend
// to, token by token. engine/eval/attention_explorer.h computes it (LibTorch); this unit holds the
// data and reads / writes the file without LibTorch, so the workbench and the fuzzer use it.
//
// File layout (little-endian): the 8 bytes "LMKATTN1", a uint64 header size N, N bytes of JSON
// header, then the float16 arrays the header names by offset (in values, from the end of the
// header) and shape. Everything a reader takes from the file is checked against its size: a
// damaged or foreign file is an InputError naming it, never a read out of bounds.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lmk {

struct DocumentAttention {
  std::string model;    // the model folder
  std::string pooling;  // pooling name (pooling_name)
  int granularity = 0;  // as PoolingPlan::granularity
  int64_t layers = 0, heads = 0;
  std::vector<bool> global_layers;  // per layer: global attention (else a local window)
  std::string text;                 // the document
  // Per model input position (special and landmark tokens included): the vocabulary entry and
  // its byte range in `text` (begin == end for inserted tokens).
  std::vector<std::string> tokens;
  std::vector<std::pair<uint32_t, uint32_t>> spans;
  // The pooling tokens: the landmark (or MultiCLS) positions, else {0} (the CLS).
  std::vector<int64_t> pooling_positions;
  int64_t content_tokens = 0;  // the text's tokens before truncation
  bool truncated = false;      // the input was cut to the maximum length
  // [layers][1 + heads][length]: the attention of the pooling tokens to every position,
  // averaged over them; index 0 is the mean over heads, 1 + h head h.
  std::vector<float> profiles;
  // Per row layer: [pooling tokens][length], each pooling token's own attention averaged over
  // heads.
  std::map<int64_t, std::vector<float>> rows;
  // With a query: cos(query embedding, final hidden state) at each pooling token, and with the
  // document's pooled embedding; empty / NaN without one.
  std::string query;
  std::vector<float> query_similarity;
  float pooled_similarity = 0;

  int64_t length() const { return static_cast<int64_t>(tokens.size()); }
  // The profile of (layer, head); head -1 is the mean over heads.
  const float* profile(int64_t layer, int64_t head) const {
    return profiles.data() + (layer * (1 + heads) + (head + 1)) * length();
  }
  // The attention sink's share: the profile's weight on position 0.
  float sink_share(int64_t layer, int64_t head) const { return profile(layer, head)[0]; }
};

// Writes the file atomically (float16 arrays: about 2 bytes per value).
void write_document_attention(const std::string& path, const DocumentAttention& data);
// Reads a file; InputError naming `path` when it is not one or is damaged.
DocumentAttention read_document_attention(const std::string& path);
// The same from bytes in memory, errors naming `name`.
DocumentAttention parse_document_attention(std::string_view bytes, const std::string& name);

}  // namespace lmk
