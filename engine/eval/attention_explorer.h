#pragma once

// One document's attention for the workbench's explorer (lmk attention --explore): in one
// forward pass, the attention of the pooling tokens to every position for every layer and head
// (averaged over the pooling tokens), each pooling token's own row for the chosen layers
// (averaged over heads), and with a query the similarity of the query's embedding to the final
// hidden state at each pooling token. Computed the way the encoder attends (only the pooling
// rows, never the L x L matrix).

#include <functional>
#include <string>
#include <vector>

#include "core/eval/document_attention.h"
#include "engine/embed/embed.h"

namespace lmk {

struct ExplorerOptions {
  std::vector<int64_t> row_layers;  // layers whose per-token rows are kept; empty: the final
  std::string query;                // "": none
  std::string model_name;           // recorded in the result
  // Called after each layer of the forward pass (progress), with the layers done so far.
  std::function<void(int64_t done)> on_layer;
};

// The text is one model input (truncated to options.max_length when it is set, and then marked
// truncated). InputError: an empty text, a layer out of range.
DocumentAttention explore_attention(const LoadedModel& model, const Tokenizer& tokenizer,
                                    const std::string& text, const EncodeOptions& options,
                                    const ExplorerOptions& explorer = {});

}  // namespace lmk
