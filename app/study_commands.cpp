// lmk study CONFIG [--profile micro|quick|full] [--db FILE] [--dry-run]: the paper's question
// on this machine — tokenizer, pretraining, fine-tuning of every pooling, evaluation at growing
// lengths — as one command whose finished steps are reused when it runs again.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "app/commands.h"
#include "core/jobs/study.h"
#include "core/store/results_store.h"
#include "core/util/error.h"
#include "core/util/file.h"

namespace lmk::cli {

namespace {

struct StudyArgs {
  std::string config, profile = kDefaultStudyProfile, db, dir;
  bool dry_run = false, table_only = false;
};

std::string shell_words(const std::vector<std::string>& args) {
  std::string out;
  for (const std::string& a : args) {
    const bool plain = !a.empty() && a.find_first_of(" \t\"'$\\*?;&|<>()") == std::string::npos;
    out += (out.empty() ? "" : " ") + (plain ? a : shell_quote(a));
  }
  return out;
}

int run_study_command(const StudyArgs& args) {
  // A dry run plans inputs of your own that are not here.
  MissingInputs missing;
  const StudyPlan plan = plan_study(read_study_grid(args.config, args.profile, args.db, args.dir,
                                                    args.dry_run ? &missing : nullptr));
  const StudyConfig& config = plan.config;
  std::cerr << "lmk study: " << config.name << ", profile " << config.profile << ": "
            << (plan.cells.size() > 1 ? std::to_string(plan.cells.size()) + " sweep cells, " : "")
            << plan.steps.size() << " steps in " << config.dir << ", results in " << config.db
            << " (experiment " << plan.experiment << ")\n";
  if (args.dry_run) {
    if (!missing.empty()) std::cerr << "lmk study: " << missing_inputs_line(missing) << "\n";
    for (const StudyStep& step : plan.steps) {
      std::cout << (step_done(plan, step) ? "reuse " : "run   ") << step.id << ": lmk "
                << shell_words(step.args) << "\n";
    }
    return 0;
  }
  if (!args.table_only) {
    const std::string binary = std::filesystem::read_symlink("/proc/self/exe").string();
    // On a terminal the running step's latest line is rewritten in place every second;
    // otherwise it is printed every 30 s.
    const bool tty = ::isatty(2);
    bool pending = false;  // a transient line is on screen
    const StudyRunSummary summary =
        run_study(plan, binary, terminal_report(pending), tty ? 1.0 : 30.0);
    if (pending) std::cerr << "\r\033[K";
    std::cerr << "lmk study: " << summary.ran << " steps run, " << summary.reused << " reused, in "
              << static_cast<int64_t>(summary.seconds) << " s\n";
  }
  const ResultsStore store(config.db, ResultsStore::OpenMode::Existing);
  std::cout << "\n" << study_table(plan, store);
  return 0;
}

}  // namespace

Runner add_study_command(CLI::App& app) {
  auto args = std::make_shared<StudyArgs>();
  auto* cmd = app.add_subcommand(
      "study", "Run a study (pretrain, fine-tune every pooling, evaluate at growing lengths)");
  cmd->add_option("CONFIG", args->config, "study config (TOML)")->required();
  cmd->add_option("--profile", args->profile, "micro | quick | full")->capture_default_str();
  cmd->add_option("--db", args->db,
                  "results database (default: the config's, else DIR/results.db)");
  cmd->add_option("--dir", args->dir, "study folder (default: the config's)");
  cmd->add_flag("--dry-run", args->dry_run, "print the steps (run or reuse) and stop");
  cmd->add_flag("--table", args->table_only, "print the comparison table from the store only");
  return [args] { return run_study_command(*args); };
}

}  // namespace lmk::cli
