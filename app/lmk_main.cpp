// lmk: the Landmark Workbench command line. Thin: parses options, calls the core, prints.
//
// The commands that need no LibTorch (tokenizers, data, the store, studies and jobs) run here,
// in a process that maps neither LibTorch nor any CUDA library and starts in milliseconds; the
// commands that run the model are handed to lmk-engine beside this binary (exec: the same
// process, its arguments and environment; docs/ARCHITECTURE.md).
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "app/commands.h"

namespace {

// Replaces this process by lmk-engine with the same arguments; returns only on failure.
int run_engine(char** argv) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string engine = (exe.parent_path() / "lmk-engine").string();
  ::execv(engine.c_str(), argv);
  std::cerr << "lmk: error: cannot start " << engine << " (" << std::strerror(errno)
            << "), which runs the commands that use the model: it is built and installed "
               "beside lmk\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lmk::cli;
  const bool version_only = argc == 2 && std::string(argv[1]) == "--version";
  if (!version_only && !runs_without_libtorch(subcommand_of(argc, argv))) return run_engine(argv);
  std::vector<CommandAdder> commands;
  for (const Command& command : commands_without_libtorch()) commands.push_back(command.add);
  return run_commands(argc, argv, commands, nullptr);
}
