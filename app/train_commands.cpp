// lmk train (contrastive fine-tuning) and lmk pretrain (MLM) from TOML configs.
#include <iostream>

#include "app/commands.h"
#include "core/train/contrastive.h"
#include "core/train/pretrain.h"

namespace lmk::cli {

namespace {

struct TrainingArgs {
  std::string config;
  bool resume = false, progress_json = false;
};

// Both commands take a config, --resume and --progress-json; run(args) does the work.
Runner add_training_command(CLI::App& app, const char* name, const char* description,
                            std::function<int(const TrainingArgs&)> run) {
  auto args = std::make_shared<TrainingArgs>();
  auto* cmd = app.add_subcommand(name, description);
  cmd->add_option("--config", args->config, "TOML config ([model] [data] [train] [output])")
      ->required();
  cmd->add_flag("--resume", args->resume, "continue from OUTPUT_DIR/checkpoint");
  cmd->add_flag("--progress-json", args->progress_json, "one JSON event per logged step on stdout");
  return [args, run] { return run(*args); };
}

}  // namespace

Runner add_train_command(CLI::App& app) {
  return add_training_command(
      app, "train",
      "Contrastive fine-tuning (InfoNCE, hard negatives, teacher scores) from a TOML config",
      [](const TrainingArgs& args) {
        const ContrastiveConfig config = read_contrastive_config(args.config);
        const TrainSummary summary = train_contrastive(config, args.resume, args.progress_json);
        std::cerr << "lmk train: " << summary.steps << " steps, final loss "
                  << (summary.losses.empty() ? 0.0 : summary.losses.back());
        if (summary.best_dev >= 0) std::cerr << ", best dev nDCG@10 " << summary.best_dev;
        std::cerr << "; models in " << config.out_dir << "/last"
                  << (summary.best_dev >= 0 ? " and /best" : "") << "\n";
        return 0;
      });
}

Runner add_pretrain_command(CLI::App& app) {
  return add_training_command(
      app, "pretrain",
      "Masked-language-model pretraining (30 % masking, packed sequences) from a TOML config",
      [](const TrainingArgs& args) {
        const PretrainConfig config = read_pretrain_config(args.config);
        const PretrainSummary summary = pretrain_mlm(config, args.resume, args.progress_json);
        std::cerr << "lmk pretrain: " << summary.steps << " steps over " << summary.sequences
                  << " packed sequences, final loss "
                  << (summary.losses.empty() ? 0.0 : summary.losses.back()) << "; model in "
                  << config.out_dir << "/last\n";
        return 0;
      });
}

}  // namespace lmk::cli
