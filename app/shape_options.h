#pragma once

// The shape options of `lmk model init`, registered on any CLI11 command: lmk itself and the
// encode benchmark (tests/bench/encode_bench.cpp) take the same flags with the same meaning.

#include <CLI/CLI.hpp>

#include "app/option_ranges.h"
#include "core/model/config.h"

namespace lmk::cli {

// Adds --architecture, --hidden-size, --layers, --heads, --intermediate-size, --local-window,
// --global-every, --rope-theta, --no-rope, --kv-heads and --bidirectional to `command`, writing
// into `shape` (which must outlive the parse). Each declares its range (app/option_ranges.h);
// shaped_config() checks what depends on the architecture and the other options (heads dividing the
// hidden size), naming the flag.
inline void add_shape_options(CLI::App& command, ShapeOverrides& shape) {
  command
      .add_option("--architecture", shape.architecture, "modernbert | bert | gte | qwen3 | llama")
      ->capture_default_str();
  auto integer = [&](const char* flag, std::optional<int64_t>& field, const char* help, int64_t min,
                     int64_t max) {
    command
        .add_option_function<int64_t>(
            flag, [&field](const int64_t& value) { field = value; }, help)
        ->check(whole(min, max));
  };
  integer("--hidden-size", shape.hidden_size, "hidden size (default: the preset's)", 1, 65536);
  integer("--layers", shape.layers, "layers (default: the preset's)", 1, 1024);
  integer("--heads", shape.heads, "attention heads (default: the preset's)", 1, 1024);
  integer("--intermediate-size", shape.intermediate_size,
          "MLP size (default: the preset's; BERT / GTE: 4 x hidden)", 1, 1 << 20);
  integer("--local-window", shape.local_window,
          "ModernBERT: total window of the local layers (default: the preset's)", 0, kMaxCount);
  integer("--global-every", shape.global_every,
          "ModernBERT: layer i attends globally when i % K == 0, as ModernBERT's "
          "global_attn_every_n_layers (default 3)",
          1, 1024);
  command
      .add_option_function<double>(
          "--rope-theta", [&shape](const double& value) { shape.rope_theta = value; },
          "RoPE base: ModernBERT's global layers (default 160000), GTE's and the decoders' "
          "(default 10000)")
      ->check(real(0, 1e12, /*open_min=*/true));
  command.add_flag("--no-rope", shape.no_rope,
                   "the RoPE ablation: rotation frequencies zeroed, attention sees no positions "
                   "(config.json lmk_disable_rope)");
  integer("--kv-heads", shape.kv_heads,
          "decoders: key / value heads, dividing --heads (grouped-query attention; default: "
          "--heads)",
          1, 1024);
  command.add_flag("--bidirectional", shape.bidirectional,
                   "decoders: bidirectional attention, LLM2Vec's conversion (config.json "
                   "lmk_bidirectional; transformers runs such a folder causal)");
}

}  // namespace lmk::cli
