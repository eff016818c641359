// lmk eval: retrieval metrics of a model on a dataset folder — overall, per context length and
// per evidence position, and per query — printed, stored in the results database, and written as
// MTEB JSON and (--save-run) TREC run files.

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "app/commands.h"
#include "app/device_option.h"
#include "core/data/dataset_dir.h"
#include "core/data/formats.h"
#include "core/store/export.h"
#include "core/store/recorded_run.h"
#include "core/store/results_store.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/runtime.h"
#include "core/util/text_table.h"
#include "engine/dist/distributed.h"
#include "engine/embed/model_folder.h"
#include "engine/eval/dataset_evaluation.h"

namespace lmk::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct EvalArgs {
  std::string model, dataset, pooling, db, experiment = "default", run_name, mteb_out,
                                           device = "cpu", split, save_run;
  int granularity = 0;
  size_t max_length = 0, query_max_length = 0, batch_size = 16, min_target_length = 0;
  std::string ks = "1,3,5,10,100";
  size_t attention_docs = 3;
  int bins = 20;
};

// The evaluation's options from the command line and the model folder (--pooling, else the
// folder's; normalization is the folder's).
RetrievalOptions eval_options(const EvalArgs& args, const LoadedModel& model,
                              const std::string& device) {
  RetrievalOptions options;
  options.encode.pooling =
      args.pooling.empty() ? model.pooling.pooling : parse_pooling(args.pooling, "--pooling");
  options.encode.granularity = args.granularity;
  options.encode.max_length = args.max_length;
  options.encode.batch_size = args.batch_size;
  options.encode.normalize = model.pooling.normalize;
  options.encode.device = device;
  options.query_max_length = args.query_max_length;
  options.min_target_length = args.min_target_length;
  options.ks.clear();
  for (int64_t k : parse_int_list(args.ks, "--k", 1, "a positive cutoff"))
    options.ks.push_back(static_cast<int>(k));
  return options;
}

// What the run records: the model, the dataset, the lengths, the device as resolved and the
// pooling as the encoding uses it (plan.record()).
json eval_run_config(const EvalArgs& args, const DatasetInfo& dataset, const std::string& split,
                     const std::string& device, const LoadedModel& model, const PoolingPlan& plan,
                     const std::optional<std::string>& revision, int world_size) {
  json config = {{"model", fs::absolute(args.model).lexically_normal().string()},
                 {"dataset", fs::absolute(args.dataset).lexically_normal().string()},
                 {"task", dataset.task},
                 {"split", split},
                 {"max_length", args.max_length},
                 {"query_max_length", args.query_max_length},
                 {"device", device},
                 {"architecture", architecture_name(model.encoder->config().architecture)},
                 {"layers", model.encoder->config().num_layers},
                 {"hidden_size", model.encoder->config().hidden_size},
                 {"main_score", dataset.main_score}};
  if (revision) config["dataset_revision"] = *revision;
  config.update(plan.record());
  if (world_size > 1) config["processes"] = world_size;
  return config;
}

// The files the command line asked for: the MTEB result (--mteb-out) and the TREC ranking and
// judgments (--save-run).
void write_eval_files(const EvalArgs& args, const DatasetInfo& dataset,
                      const DatasetEvaluation& outcome, const std::optional<std::string>& revision,
                      double seconds) {
  if (!args.mteb_out.empty()) {
    const std::string file = (fs::path(args.mteb_out) / (dataset.task + ".json")).string();
    write_mteb_result(
        file, mteb_result(dataset.task, outcome.rows, revision, dataset.main_score, seconds));
    std::cerr << "lmk eval: MTEB result in " << file << "\n";
  }
  if (!args.save_run.empty()) {
    for (const auto& [path, text] : {std::pair{args.save_run, outcome.trec_run},
                                     std::pair{args.save_run + ".qrels", outcome.trec_qrels}}) {
      if (fs::path(path).has_parent_path()) fs::create_directories(fs::path(path).parent_path());
      AtomicFile file(path);
      file.write(text);
      file.commit();
    }
    std::cerr << "lmk eval: the ranking (top " << kTrecRunDepth << ", TREC run format) in "
              << args.save_run << ", the judgments in " << args.save_run << ".qrels\n";
  }
}

// The evaluation's results in the store, under its run (which is then FINISHED).
void store_eval_outcome(ResultsStore& store, RecordedRun& recorded, const EvalArgs& args,
                        const DatasetEvaluation& outcome, double seconds) {
  const int64_t run_id = recorded.id();
  if (!outcome.attention.empty()) store.add_attention_profile(run_id, outcome.attention);
  store.add_eval_results(run_id, outcome.rows);
  store.add_query_results(run_id, outcome.queries);
  if (!args.save_run.empty()) {
    store.add_artifact(run_id, "trec-run", fs::absolute(args.save_run).string());
    store.add_artifact(run_id, "trec-qrels", fs::absolute(args.save_run + ".qrels").string());
  }
  std::vector<std::pair<std::string, double>> timings = outcome.timings;
  timings.emplace_back("evaluation_time", seconds);
  store.log_metrics(run_id, 0, timings);
  recorded.finish();
  std::cerr << "lmk eval: run " << run_id << " stored in " << args.db << "\n";
}

int run_eval(const EvalArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  // A job system may have created the run already (checked before any work).
  const std::optional<int64_t> adopted_run = run_id_from_environment();
  if (adopted_run && args.db.empty())
    throw InputError("LMK_RUN_ID is set but the command has no results store (--db)");
  const DatasetInfo dataset = read_dataset_info(args.dataset);
  const std::string split = args.split.empty() ? dataset.split : args.split;
  // Under a launcher (torchrun, srun) the processes share the encoding (RetrievalOptions::dist):
  // each takes its GPU (plain cuda: cuda:LOCAL_RANK), rank 0 alone prints, records and writes.
  const DistributedEnv env = read_distributed_env();
  if (env.world_size > 1 && dataset.type == "classification")
    throw input_error(args.dataset,
                      "a classification evaluation runs in one process, not under a launcher "
                      "(WORLD_SIZE / SLURM_NTASKS " +
                          std::to_string(env.world_size) + ")");
  // Resolved once (cuda: cuda:LOCAL_RANK under a launcher) and recorded as resolved.
  const std::string device = process_device(args.device, "--device", env).str();
  const LoadedModel model = load_model_folder(args.model);
  const auto tokenizer = load_tokenizer(args.model);
  RetrievalOptions options = eval_options(args, model, device);
  // What the run records is what the encoding uses (one policy: plan_pooling).
  const PoolingPlan plan = plan_pooling(options.encode, model);
  const int granularity = plan.granularity;
  const std::optional<std::string> revision = dataset_revision(dataset);
  const json config =
      eval_run_config(args, dataset, split, device, model, plan, revision, env.world_size);

  const std::string default_name = fs::path(args.model).lexically_normal().filename().string() +
                                   "-" + pooling_name(options.encode.pooling) +
                                   (granularity > 0 ? "-g" + std::to_string(granularity) : "") +
                                   "-" + dataset.task;
  if (!args.save_run.empty() && dataset.type == "classification")
    throw input_error("--save-run", "a classification dataset has no ranking to save");
  // The processes meet here, each with its model loaded and its options checked.
  const DistributedContext dist = DistributedContext::join(env, c10::Device(device).is_cuda());
  options.dist = &dist;
  if (dist.is_main() && dist.is_distributed())
    std::cerr << "lmk eval: " << dist.world_size()
              << " processes share the encoding (each its share of the texts, on " << device
              << " in rank 0)\n";
  if (!dist.is_main()) {
    options.show_progress = false;
    std::cout.setstate(std::ios::failbit);  // the results are rank 0's to print
  }
  // The run is recorded first, so a failure is stored as FAILED with its message (rank 0's
  // store, files and run; the others record nothing).
  std::optional<ResultsStore> store;
  std::optional<RecordedRun> recorded;
  if (dist.is_main() && !args.db.empty()) {
    store.emplace(args.db);
    RunStart start;
    start.fresh.kind = "eval";
    start.fresh.name = args.run_name.empty() ? default_name : args.run_name;
    start.fresh.config = config;
    start.experiment = args.experiment;
    start.device = device;
    start.adopted = adopted_run;
    recorded.emplace(*store, start);
  }
  try {
    DatasetEvaluationOptions evaluation;
    evaluation.retrieval = options;
    evaluation.split = split;
    evaluation.attention_docs = store ? args.attention_docs : 0;
    evaluation.attention_bins = args.bins;
    evaluation.ranking_depth = args.save_run.empty() ? 0 : kTrecRunDepth;
    evaluation.run_tag = trec_tag(args.run_name.empty() ? default_name : args.run_name);
    const DatasetEvaluation outcome =
        evaluate_dataset(model, *tokenizer, dataset, evaluation, plan, std::cout);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "time: " << format_metric(seconds) << " s (" << outcome.timing_text << ")\n";
    if (!dist.is_main()) return 0;
    write_eval_files(args, dataset, outcome, revision, seconds);
    if (store) store_eval_outcome(*store, *recorded, args, outcome, seconds);
  } catch (const std::exception& e) {
    if (recorded) recorded->fail(e.what());
    throw;
  }
  return 0;
}

}  // namespace

Runner add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval", "Retrieval metrics of a model on a dataset folder");
  cmd->add_option("--model", args->model, "model folder")->required();
  cmd->add_option("--dataset", args->dataset, "BEIR folder, or folder of per-length BEIR folders")
      ->required();
  cmd->add_option("--pooling", args->pooling, "pooling (default: the folder's)");
  cmd->add_option("--granularity", args->granularity, "landmark / MultiCLS granularity")
      ->check(whole(1, 1000000));
  cmd->add_option("--split", args->split, "qrels split (default: dataset.json's, else test)");
  cmd->add_option("--max-length", args->max_length, "truncate documents to N tokens (0: no limit)")
      ->check(whole(0));
  cmd->add_option("--query-max-length", args->query_max_length,
                  "truncate queries (0: as documents)")
      ->check(whole(0));
  cmd->add_option("--min-target-length", args->min_target_length,
                  "leave out (and count) queries whose target has fewer tokens, e.g. the length "
                  "tested (0: none)")
      ->check(whole(0));
  cmd->add_option("--batch-size", args->batch_size, "texts per batch")
      ->capture_default_str()
      ->check(whole(1, 1000000));
  cmd->add_option("--k", args->ks, "metric cutoffs")->capture_default_str();
  cmd->add_option("--db", args->db,
                  "results database (SQLite) to record the run in (with $LMK_RUN_ID: into that "
                  "existing eval run)");
  cmd->add_option("--experiment", args->experiment, "experiment name in the database")
      ->capture_default_str();
  cmd->add_option("--run-name", args->run_name, "run name (default: model-pooling-dataset)");
  cmd->add_option("--mteb-out", args->mteb_out, "folder for MTEB v2 result JSON");
  cmd->add_option("--save-run", args->save_run,
                  "write the ranking (top 100 per query) to this TREC run file, and the "
                  "judgments beside it (FILE.qrels), for trec_eval, ranx or pytrec_eval");
  cmd->add_option("--attention-docs", args->attention_docs,
                  "documents per part whose attention profile is stored (with --db; 0: none)")
      ->capture_default_str()
      ->check(whole(0, 1000000));
  cmd->add_option("--bins", args->bins, "attention profile bins")
      ->capture_default_str()
      ->check(whole(1, 1000000));
  add_device_option(cmd, args->device, "cpu | cuda | cuda:N")->capture_default_str();
  return [args] { return run_eval(*args); };
}

}  // namespace lmk::cli
