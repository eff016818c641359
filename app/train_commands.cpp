// lmk train (contrastive fine-tuning) and lmk pretrain (MLM) from TOML configs.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "app/commands.h"
#include "app/device_option.h"
#include "core/model/config.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/json_util.h"
#include "core/util/runtime.h"
#include "engine/train/contrastive.h"
#include "engine/train/loop.h"
#include "engine/train/pretrain.h"

namespace lmk::cli {

namespace {

struct TrainingArgs {
  std::string config, device;  // device: "" keeps [train] device
  bool resume = false, overwrite = false, auto_resume = false, progress_json = false;
};

// A second run on an output folder that holds one is refused unless it resumes it or replaces
// it (--overwrite removes what the folder holds first; only the first process does that).
// --auto-resume becomes --resume when the folder has a checkpoint, else --overwrite. Returns
// whether the run resumes.
bool check_output_folder(const std::string& out_dir, TrainingArgs args) {
  namespace fs = std::filesystem;
  if (args.resume && args.overwrite)
    throw InputError("--resume and --overwrite exclude each other");
  if (args.auto_resume) {
    try {
      find_checkpoint(out_dir);
      args.resume = true;
    } catch (const InputError&) {
      args.overwrite = true;  // nothing to continue: start afresh
    }
  }
  std::error_code ec;
  if (args.resume || !fs::is_directory(out_dir, ec) || fs::is_empty(out_dir, ec))
    return args.resume;
  if (!args.overwrite)
    throw input_error(out_dir,
                      "the output folder holds an earlier run (--resume continues it, "
                      "--overwrite replaces it)");
  if (read_distributed_env().rank != 0) return false;  // the launcher's variables (bad: exit 2)
  for (const auto& entry : fs::directory_iterator(out_dir)) fs::remove_all(entry.path());
  return false;
}

// The training device: --device over [train] device, checked before any work (exit 2).
c10::Device device_of(TrainingSettings& settings, const TrainingArgs& args) {
  if (!args.device.empty()) settings.device = args.device;
  return process_device(settings.device, args.device.empty() ? "[train] device" : "--device");
}

// Says so when the model folder written to `dir` cannot state its layer pattern in the form
// transformers <= 4.5x reads (a model started from a folder whose layer_types has no
// every-k-th shape).
void note_layer_pattern(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  const std::string note = EncoderConfig::from_json(json_util::parse(read_file(path), path), path)
                               .legacy_layer_pattern_note();
  if (!note.empty()) std::cerr << "lmk: note: " << dir << ": " << note << "\n";
}

constexpr const char* kTrainingFooter =
    "Exit codes: 0 done; 2 bad input (config, data, LMK_RUN_ID); 75 stopped by SIGTERM, SIGINT "
    "or SIGUSR1 after saving a checkpoint (the run is KILLED in the store; continue with "
    "--resume or --auto-resume); 130 a second SIGINT; 1 anything else.\n"
    "Environment: LMK_RUN_ID=ID records into that existing run of [output] db (made by a job "
    "system) instead of a new one; LMK_PROGRESS_JSON=1 adds JSON progress events (stderr) and "
    "step events (stdout).\n";

// Both commands take a config, --resume, --auto-resume, --overwrite and --progress-json, and
// stop gracefully on SIGTERM, SIGINT and SIGUSR1; run(args) does the work.
Runner add_training_command(CLI::App& app, const char* name, const char* description,
                            std::function<int(const TrainingArgs&)> run) {
  auto args = std::make_shared<TrainingArgs>();
  auto* cmd = app.add_subcommand(name, description);
  cmd->footer(kTrainingFooter);
  cmd->add_option("--config", args->config, "TOML config ([model] [data] [train] [output])")
      ->required();
  auto* resume = cmd->add_flag("--resume", args->resume, "continue from OUTPUT_DIR/checkpoint");
  auto* overwrite = cmd->add_flag("--overwrite", args->overwrite, "replace what OUTPUT_DIR holds");
  cmd->add_flag("--auto-resume", args->auto_resume,
                "continue from OUTPUT_DIR/checkpoint when there is one, else start afresh (as "
                "--overwrite); for requeued and re-run jobs")
      ->excludes(resume)
      ->excludes(overwrite);
  cmd->add_flag("--progress-json", args->progress_json, "one JSON event per logged step on stdout");
  add_device_option(cmd, args->device,
                    "cpu | cuda | cuda:N, over [train] device (default cpu); under torchrun / "
                    "srun cuda is cuda:LOCAL_RANK (NCCL binds it; another cuda:N is refused); "
                    "bf16 autocast on CUDA");
  return [args, run] {
    install_stop_signals();
    return run(*args);
  };
}

}  // namespace

Runner add_train_command(CLI::App& app) {
  return add_training_command(
      app, "train",
      "Contrastive fine-tuning (InfoNCE, hard negatives, teacher scores) from a TOML config",
      [](const TrainingArgs& args) {
        ContrastiveConfig config = read_contrastive_config(args.config);
        const bool cuda = device_of(config, args).is_cuda();
        const bool resume = check_output_folder(config.out_dir, args);
        // Data parallel when a launcher started several processes (engine/dist/distributed.h):
        // they meet here, after every one has checked the output folder.
        const DistributedContext dist = DistributedContext::from_environment(cuda);
        const TrainSummary summary = train_contrastive(config, resume, args.progress_json, dist);
        if (!dist.is_main()) return 0;  // rank 0 reports
        note_layer_pattern(config.out_dir + "/last");
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
        PretrainConfig config = read_pretrain_config(args.config);
        const bool cuda = device_of(config, args).is_cuda();
        const bool resume = check_output_folder(config.out_dir, args);
        const DistributedContext dist = DistributedContext::from_environment(cuda);
        const PretrainSummary summary = pretrain_mlm(config, resume, args.progress_json, dist);
        if (!dist.is_main()) return 0;
        note_layer_pattern(config.out_dir + "/last");
        std::cerr << "lmk pretrain: " << summary.steps << " steps over " << summary.sequences
                  << " packed sequences, final loss "
                  << (summary.losses.empty() ? 0.0 : summary.losses.back()) << "; model in "
                  << config.out_dir << "/last\n";
        return 0;
      });
}

}  // namespace lmk::cli
