#pragma once

// Core names the field of its options struct that holds a bad value (FieldError,
// core/util/error.h); a command line says which of its options fed that field. One rule for
// lmk's commands and the benchmarks' own command lines: the option is "--" and the field with
// '_' as '-' (hidden_size: --hidden-size) when the command that ran has it; else the message
// keeps the field's name.

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>

#include "core/util/error.h"

namespace lmk::cli {

// The message of a FieldError as the command line `app` (parsed) says it.
inline std::string command_line_message(const CLI::App& app, const FieldError& error) {
  const CLI::App* command = &app;  // the innermost subcommand that was parsed
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : command->get_subcommands()) {
      if (sub->parsed()) {
        command = sub;
        deeper = true;
        break;
      }
    }
  }
  std::string option = "--" + error.field();
  std::replace(option.begin(), option.end(), '_', '-');
  return (command->get_option_no_throw(option) ? option : error.field()) + ": " + error.message();
}

}  // namespace lmk::cli
