// lmk: the Landmark Workbench command line. Thin: parses options, calls lmkcore, prints.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <map>

#include "app/commands.h"
#include "core/util/error.h"
#include "core/util/runtime.h"

int main(int argc, char** argv) {
  CLI::App app{"lmk - Landmark Workbench: landmark pooling studies for text embeddings"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "lmk 0.1.0");
  int threads = 0;
  app.add_option("--threads", threads, "LibTorch threads (default: $LMK_THREADS or all cores)");

  std::map<CLI::App*, lmk::cli::Runner> runners;
  auto add = [&](lmk::cli::Runner (*adder)(CLI::App&)) {
    const size_t before = app.get_subcommands({}).size();
    lmk::cli::Runner runner = adder(app);
    runners[app.get_subcommands({})[before]] = std::move(runner);
  };
  add(lmk::cli::add_tokenize_command);
  add(lmk::cli::add_tokenizer_train_command);
  add(lmk::cli::add_model_command);
  add(lmk::cli::add_inspect_command);
  add(lmk::cli::add_encode_command);
  add(lmk::cli::add_attention_command);
  add(lmk::cli::add_data_command);
  add(lmk::cli::add_eval_command);
  add(lmk::cli::add_train_command);
  add(lmk::cli::add_pretrain_command);
  add(lmk::cli::add_results_command);
  add(lmk::cli::add_compare_command);
  add(lmk::cli::add_export_command);
  add(lmk::cli::add_study_command);
  add(lmk::cli::add_submit_command);
  add(lmk::cli::add_jobs_command);
  add(lmk::cli::add_cancel_command);
  add(lmk::cli::add_logs_command);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  // Commands that run the model get the thread and memory settings measured fastest here.
  for (const char* heavy :
       {"encode", "attention", "inspect", "model", "eval", "train", "pretrain"}) {
    if (app.got_subcommand(heavy)) {
      lmk::prefer_passive_waiting(argv);
      lmk::configure_memory();
    }
  }
  const std::string warning = lmk::slow_blas_warning(lmk::detect_blas());
  if (!warning.empty()) std::cerr << "lmk: " << warning << "\n";
  try {
    lmk::configure_threads(threads);
    for (auto& [sub, run] : runners) {
      if (sub->parsed()) return run();
    }
    return 2;
  } catch (const lmk::Stopped& e) {
    std::cerr << "lmk: " << e.what() << "\n";
    return lmk::kExitStopped;
  } catch (const lmk::InputError& e) {
    std::cerr << "lmk: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "lmk: internal error: " << e.what() << "\n";
    return 1;
  }
}
