// lmk train: contrastive fine-tuning from a TOML config (core/train/contrastive.h).
#include <iostream>

#include "app/commands.h"
#include "core/train/contrastive.h"

namespace lmk::cli {

Runner add_train_command(CLI::App& app) {
  struct Args {
    std::string config;
    bool resume = false, progress_json = false;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "train",
      "Contrastive fine-tuning (InfoNCE, hard negatives, teacher scores) from a TOML config");
  cmd->add_option("--config", args->config, "TOML config ([model] [data] [train] [output])")
      ->required();
  cmd->add_flag("--resume", args->resume, "continue from OUTPUT_DIR/checkpoint");
  cmd->add_flag("--progress-json", args->progress_json, "one JSON event per logged step on stdout");
  return [args] {
    const ContrastiveConfig config = read_contrastive_config(args->config);
    const TrainSummary summary = train_contrastive(config, args->resume, args->progress_json);
    std::cerr << "lmk train: " << summary.steps << " steps, final loss "
              << (summary.losses.empty() ? 0.0 : summary.losses.back());
    if (summary.best_dev >= 0) std::cerr << ", best dev nDCG@10 " << summary.best_dev;
    std::cerr << "; models in " << config.out_dir << "/last"
              << (summary.best_dev >= 0 ? " and /best" : "") << "\n";
    return 0;
  };
}

}  // namespace lmk::cli
