#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace lmk::cli {

// Each command registers its subcommand and returns what runs it (its exit code).
using Runner = std::function<int()>;

// lmk tokenize
Runner add_tokenize_command(CLI::App& app);
// lmk tokenizer-train
Runner add_tokenizer_train_command(CLI::App& app);
// lmk model init
Runner add_model_command(CLI::App& app);
// lmk inspect
Runner add_inspect_command(CLI::App& app);
// lmk encode
Runner add_encode_command(CLI::App& app);
// lmk attention
Runner add_attention_command(CLI::App& app);

}  // namespace lmk::cli
