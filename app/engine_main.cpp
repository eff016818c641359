// lmk-engine: every lmk command, the ones that run the model (LibTorch) among them. `lmk`
// starts it for those (app/lmk_main.cpp); it runs the others too when started directly.
#include <CLI/CLI.hpp>

#include <iostream>

#include "app/commands.h"
#include "core/util/runtime.h"
#include "engine/util/torch_runtime.h"

int main(int argc, char** argv) {
  using namespace lmk::cli;
  const std::vector<CommandAdder> commands = {add_tokenize_command, add_tokenizer_train_command,
                                              add_model_command,    add_inspect_command,
                                              add_encode_command,   add_attention_command,
                                              add_data_command,     add_eval_command,
                                              add_train_command,    add_pretrain_command,
                                              add_results_command,  add_compare_command,
                                              add_export_command,   add_study_command,
                                              add_submit_command,   add_jobs_command,
                                              add_cancel_command,   add_logs_command};
  // Commands that run the model get the thread and memory settings measured fastest here.
  return run_commands(argc, argv, commands, [](CLI::App& chosen, int threads) {
    if (!runs_without_libtorch(chosen.get_name())) lmk::configure_memory();
    const lmk::BlasInfo blas = lmk::detect_blas();
    const std::string warning = lmk::slow_blas_warning(blas, lmk::other_blas_libraries());
    if (!warning.empty()) std::cerr << "lmk: " << warning << "\n";
    lmk::configure_threads(threads);
  });
}
