#pragma once

// --device of the model commands (lmk-engine: encode, attention, eval, train, pretrain).

#include <CLI/CLI.hpp>

#include <string>

#include "engine/embed/embed.h"

namespace lmk::cli {

// Adds --device (cpu | cuda | cuda:N). A CUDA device loads the CUDA module as the option is
// parsed, before the command makes any ATen call (prepare_device: ATen caches its first answer
// about CUDA); the command resolves and checks the device itself.
inline CLI::Option* add_device_option(CLI::App* command, std::string& device,
                                      const std::string& description) {
  return command->add_option("--device", device, description)->each([](const std::string& name) {
    prepare_device(name);
  });
}

}  // namespace lmk::cli
