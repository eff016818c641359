// lmk eval: retrieval metrics of a model on a dataset folder — overall, per context length and
// per evidence position, and per query — printed, stored in the results database, and written as
// MTEB JSON and (--save-run) TREC run files.

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "app/commands.h"
#include "core/data/dataset_dir.h"
#include "core/data/formats.h"
#include "core/dist/distributed.h"
#include "core/embed/model_folder.h"
#include "core/eval/attention_profile.h"
#include "core/eval/classify.h"
#include "core/eval/retrieval.h"
#include "core/store/results_store.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/json_util.h"
#include "core/util/runtime.h"

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

// Documents per query in a saved TREC run.
constexpr size_t kTrecRunDepth = 100;

// A run name as a TREC run tag (the last column: no spaces).
std::string trec_tag(const std::string& name) {
  std::string tag = name;
  for (char& c : tag)
    if (std::isspace(static_cast<unsigned char>(c))) c = '_';
  return tag.empty() ? "lmk" : tag;
}

std::string format_value(double v) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(4) << v;
  return out.str();
}

// What an evaluation produced: rows for the store (means and per query), MTEB scores by split,
// stage timings, and with --save-run the ranking and judgments in TREC form.
struct EvalOutcome {
  std::vector<EvalResult> rows;
  std::vector<QueryResult> queries;
  std::string trec_run, trec_qrels;
  json mteb_scores = json::object();
  std::vector<std::pair<std::string, double>> timings;
  std::string timing_text;
};

// A TREC run file's lines for one part's rankings (qid Q0 docid rank score tag), the best first
// in trec_eval's order; a part's queries are named PART/QID so the parts of a dataset stay apart.
std::string trec_run_lines(const RunResults& run, const std::string& part, size_t depth,
                           const std::string& tag) {
  std::string lines;
  for (const auto& [query_id, ranking] : run) {
    std::vector<ScoredDoc> sorted = ranking;
    sort_ranking(sorted);
    const std::string qid = part.empty() ? query_id : part + "/" + query_id;
    for (size_t rank = 0; rank < std::min(depth, sorted.size()); ++rank) {
      char score[32];
      std::snprintf(score, sizeof score, "%.9g", static_cast<double>(sorted[rank].score));
      lines += qid + " Q0 " + sorted[rank].doc_id + " " + std::to_string(rank + 1) + " " + score +
               " " + tag + "\n";
    }
  }
  return lines;
}

// The judgments in TREC qrels form (qid 0 docid relevance), queries named as trec_run_lines does.
std::string trec_qrels_lines(const Qrels& qrels, const std::string& part) {
  std::string lines;
  for (const auto& [query_id, judged] : qrels) {
    const std::string qid = part.empty() ? query_id : part + "/" + query_id;
    for (const auto& [doc_id, relevance] : judged)
      lines += qid + " 0 " + doc_id + " " + std::to_string(relevance) + "\n";
  }
  return lines;
}

EvalOutcome evaluate_retrieval_dataset(const EvalArgs& args, const DatasetInfo& dataset,
                                       const std::string& split, const LoadedModel& model,
                                       const Tokenizer& tokenizer, const RetrievalOptions& options,
                                       int granularity, ResultsStore* store, int64_t run_id,
                                       const std::string& run_tag) {
  EvalOutcome outcome;
  std::vector<EvalResult>& rows = outcome.rows;
  json& mteb_scores = outcome.mteb_scores;
  // metric -> (sum of the part's mean x its queries, queries): the dataset's score is the mean
  // over all its queries, pooled over its parts (core/eval/store_comparison.h).
  std::map<std::string, std::pair<double, size_t>> overall;
  RetrievalTiming total;
  size_t short_targets = 0;
  std::cout << "dataset " << dataset.task << " (" << dataset.parts.size() << " part"
            << (dataset.parts.size() == 1 ? "" : "s") << "), split " << split << ", pooling "
            << pooling_name(options.encode.pooling)
            << (granularity > 0 ? " g=" + std::to_string(granularity) : "") << "\n";
  std::map<std::string, std::map<std::string, std::pair<double, size_t>>> by_position;
  for (const DatasetPart& part : dataset.parts) {
    RetrievalSplit data = read_beir(part.path, split);
    if (!args.save_run.empty()) outcome.trec_qrels += trec_qrels_lines(data.qrels, part.name);
    // The documents whose attention profile is stored, taken before the corpus moves on.
    std::vector<std::string> profile_texts;
    for (size_t d = 0; d < std::min(store ? args.attention_docs : 0, data.corpus.size()); ++d) {
      const Document& doc = data.corpus[d];
      profile_texts.push_back(doc.title.empty() ? doc.text : doc.title + " " + doc.text);
    }
    const SplitEvaluation result = evaluate_retrieval(model, tokenizer, std::move(data), options);
    short_targets += result.short_targets;
    if (result.metrics.per_query.empty()) {
      std::cout << "  "
                << (part.name.empty() ? std::string("all") : dataset.part_kind + " " + part.name)
                << ": left out, every target shorter than " << options.min_target_length
                << " tokens (" << result.short_targets << " queries)\n";
      continue;
    }
    for (const auto& [query_id, metrics] : result.metrics.per_query) {
      const QueryFacts& facts = result.facts.at(query_id);
      outcome.queries.push_back({dataset.task, split, part.name, query_id, facts.evidence_position,
                                 facts.target_length, metrics});
    }
    if (!args.save_run.empty())
      outcome.trec_run += trec_run_lines(result.run, part.name, options.run_depth, run_tag);
    total.encode_documents += result.timing.encode_documents;
    total.encode_queries += result.timing.encode_queries;
    total.search += result.timing.search;
    total.metrics += result.timing.metrics;
    const std::string group_kind = part.name.empty()           ? "all"
                                   : dataset.part_kind.empty() ? "part"
                                                               : dataset.part_kind;
    json entry = {{"hf_subset", "default"}, {"languages", {"eng-Latn"}}};
    for (const auto& [metric, value] : result.metrics.overall.values) {
      rows.push_back({dataset.task, split, metric, value, group_kind, part.name});
      auto& [sum, count] = overall[metric];
      sum += value * static_cast<double>(result.metrics.per_query.size());
      count += result.metrics.per_query.size();
      entry[metric] = value;
    }
    // A metric of the part's overall means (0 when the cutoffs asked for leave it out).
    auto overall_value = [&](const std::string& metric) {
      const auto found = result.metrics.overall.values.find(metric);
      return found == result.metrics.overall.values.end() ? 0.0 : found->second;
    };
    entry["main_score"] = overall_value(dataset.main_score);
    mteb_scores[part.name.empty() ? split : split + "_" + part.name] = json::array({entry});
    for (const auto& [bucket, means] : result.metrics.groups) {
      for (const auto& [metric, value] : means.values) {
        // Pooled over the parts, weighted by queries.
        auto& [sum, count] = by_position[bucket][metric];
        sum += value * static_cast<double>(means.queries);
        count += means.queries;
        if (!part.name.empty()) {
          rows.push_back({dataset.task, split, metric, value, "position@" + part.name, bucket});
        }
      }
    }
    std::cout << "  "
              << (part.name.empty() ? std::string("all") : dataset.part_kind + " " + part.name)
              << ": " << result.documents << " documents, " << result.queries << " queries"
              << (result.short_targets > 0
                      ? " (" + std::to_string(result.short_targets) +
                            " left out: target shorter than " +
                            std::to_string(options.min_target_length) + " tokens)"
                      : std::string())
              << ", " << dataset.main_score << " "
              << format_value(entry["main_score"].get<double>()) << ", ndcg_at_10 "
              << format_value(overall_value("ndcg_at_10")) << ", recall_at_10 "
              << format_value(overall_value("recall_at_10")) << "\n";
    if (!profile_texts.empty()) {
      // Where the pooling tokens look, on the first documents of the part.
      const std::vector<std::string>& texts = profile_texts;
      std::vector<double> mean(static_cast<size_t>(args.bins), 0.0);
      for (const AttentionProfile& profile :
           attention_profiles(model, tokenizer, texts, options.encode)) {
        const auto binned = profile.binned(args.bins);
        for (size_t b = 0; b < binned.size(); ++b)
          mean[b] += binned[b] / static_cast<double>(texts.size());
      }
      std::vector<AttentionProfileRow> profile_rows;
      for (int b = 0; b < args.bins; ++b) {
        profile_rows.push_back(
            {dataset.task, part.name.empty() ? "all" : part.name,
             model.encoder->config().num_layers - 1, -1, b, static_cast<double>(b) / args.bins,
             static_cast<double>(b + 1) / args.bins, mean[static_cast<size_t>(b)]});
      }
      store->add_attention_profile(run_id, profile_rows);
    }
  }
  if (overall.empty())
    throw InputError("lmk eval: every query's target is shorter than " +
                     std::to_string(options.min_target_length) + " tokens (" +
                     std::to_string(short_targets) + " queries): nothing to score");
  // The dataset's score: the mean over all its queries, pooled over the parts (not the mean of
  // the parts' means, which weighs a part of 8 queries as one of 31); a dataset of one unnamed
  // part has it already.
  std::map<std::string, double> overall_means;
  size_t overall_queries = 0;
  const bool one_unnamed_part = dataset.parts.size() == 1 && dataset.parts[0].name.empty();
  for (const auto& [metric, sum_count] : overall) {
    overall_means[metric] = sum_count.first / static_cast<double>(sum_count.second);
    overall_queries = std::max(overall_queries, sum_count.second);
    if (!one_unnamed_part)
      rows.push_back({dataset.task, split, metric, overall_means[metric], "all", ""});
  }
  std::cout << "  overall (all " << overall_queries << " queries";
  if (!one_unnamed_part)
    std::cout << ", pooled over the " << (dataset.part_kind.empty() ? "" : dataset.part_kind + " ")
              << "parts";
  std::cout << "): " << dataset.main_score << " " << format_value(overall_means[dataset.main_score])
            << "\n  by evidence position (" << dataset.main_score << ", queries):\n";
  for (const auto& [bucket, metrics] : by_position) {
    for (const auto& [metric, sum_count] : metrics) {
      const double mean =
          sum_count.second ? sum_count.first / static_cast<double>(sum_count.second) : 0.0;
      rows.push_back({dataset.task, split, metric, mean, "position", bucket});
      if (metric == dataset.main_score)
        std::cout << "    " << bucket << "  " << format_value(mean) << "  (" << sum_count.second
                  << ")\n";
    }
  }
  outcome.timings = {{"queries_short_target", static_cast<double>(short_targets)},
                     {"encode_documents_seconds", total.encode_documents},
                     {"encode_queries_seconds", total.encode_queries},
                     {"search_seconds", total.search},
                     {"metrics_seconds", total.metrics}};
  outcome.timing_text = "encode documents " + format_value(total.encode_documents) + ", queries " +
                        format_value(total.encode_queries) + ", search " +
                        format_value(total.search) + ", metrics " + format_value(total.metrics);
  return outcome;
}

// Reads a classification split: jsonl lines with "text" and "label" (string or number).
LabelledTexts read_labelled(const std::string& path) {
  LabelledTexts out;
  std::set<std::string> seen;
  for_each_jsonl(path, [&](json& line, const std::string& where) {
    out.texts.push_back(json_util::get<std::string>(line, "text", where));
    const json& label = json_util::required(line, "label", where);
    out.labels.push_back(label.is_string() ? label.get<std::string>() : label.dump());
    const auto id = line.find("id");
    out.ids.push_back(id == line.end()  ? std::to_string(out.texts.size())
                      : id->is_string() ? id->get<std::string>()
                                        : id->dump());
    if (!seen.insert(out.ids.back()).second)
      throw input_error(where, "id " + out.ids.back() + " appears twice");
    return true;
  });
  if (out.texts.empty()) throw input_error(path, "no texts");
  return out;
}

EvalOutcome evaluate_classification_dataset(const EvalArgs& args, const DatasetInfo& dataset,
                                            const LoadedModel& model, const Tokenizer& tokenizer,
                                            const RetrievalOptions& options) {
  const LabelledTexts train = read_labelled((fs::path(args.dataset) / "train.jsonl").string());
  const LabelledTexts test = read_labelled((fs::path(args.dataset) / "test.jsonl").string());
  const ClassificationEvaluation result =
      evaluate_classification(model, tokenizer, train, test, options.encode);
  EvalOutcome outcome;
  outcome.rows = {{dataset.task, "test", "accuracy", result.report.accuracy, "all", ""},
                  {dataset.task, "test", "f1", result.report.macro_f1, "all", ""}};
  for (const auto& [label, f1] : result.report.f1_per_class)
    outcome.rows.push_back(
        {dataset.task, "test", "f1", f1, "label", result.labels[static_cast<size_t>(label)]});
  // Accuracy is the mean of one 0 / 1 per test text: those are its per-query results (macro-F1
  // is not a mean over texts and has none).
  for (size_t i = 0; i < result.truth.size(); ++i)
    outcome.queries.push_back({dataset.task,
                               "test",
                               "",
                               test.ids[i],
                               std::nullopt,
                               std::nullopt,
                               {{"accuracy", result.truth[i] == result.predicted[i] ? 1.0 : 0.0}}});
  outcome.mteb_scores["test"] =
      json::array({{{"hf_subset", "default"},
                    {"languages", {"eng-Latn"}},
                    {"main_score",
                     dataset.main_score == "f1" ? result.report.macro_f1 : result.report.accuracy},
                    {"accuracy", result.report.accuracy},
                    {"f1", result.report.macro_f1}}});
  outcome.timings = {{"encode_seconds", result.encode_seconds},
                     {"fit_seconds", result.fit_seconds}};
  outcome.timing_text =
      "encode " + format_value(result.encode_seconds) + ", fit " + format_value(result.fit_seconds);
  std::cout << "classification " << dataset.task << ": " << result.train << " train, "
            << result.test << " test texts, " << result.labels.size() << " labels: accuracy "
            << format_value(result.report.accuracy) << ", macro-F1 "
            << format_value(result.report.macro_f1) << "\n";
  return outcome;
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
  RetrievalOptions options;
  options.encode.pooling =
      args.pooling.empty() ? model.pooling.pooling : parse_pooling(args.pooling);
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
  if (!args.save_run.empty()) options.run_depth = kTrecRunDepth;
  // What the run records is what the encoding uses (one policy: plan_pooling).
  const PoolingPlan plan = plan_pooling(options.encode, model);
  const int granularity = plan.granularity;
  json config = {{"model", fs::absolute(args.model).lexically_normal().string()},
                 {"dataset", fs::absolute(args.dataset).lexically_normal().string()},
                 {"task", dataset.task},
                 {"split", split},
                 {"max_length", args.max_length},
                 {"query_max_length", args.query_max_length},
                 {"device", device},
                 {"architecture", architecture_name(model.encoder->config().architecture)},
                 {"layers", model.encoder->config().num_layers},
                 {"hidden_size", model.encoder->config().hidden_size}};
  config.update(plan.record());
  if (env.world_size > 1) config["processes"] = env.world_size;

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
  // The run is recorded first, so a failure is stored as FAILED with its message.
  std::optional<ResultsStore> store;
  int64_t run_id = 0;
  if (!dist.is_main()) {
    // Rank 0's store, files and run.
  } else if (adopted_run) {
    store.emplace(args.db);
    adopt_run(*store, *adopted_run, "eval", config);
    run_id = *adopted_run;
  } else if (!args.db.empty()) {
    store.emplace(args.db);
    NewRun run;
    run.kind = "eval";
    run.name = args.run_name.empty() ? default_name : args.run_name;
    run.config = config;
    run_id = store->create_run(store->get_or_create_experiment(args.experiment), run);
  }
  if (store) {
    store->set_run_info(run_id, host_name(), device, code_revision());
    store->set_run_status(run_id, RunStatus::Running);
  }
  try {
    const EvalOutcome outcome =
        dataset.type == "classification"
            ? evaluate_classification_dataset(args, dataset, model, *tokenizer, options)
            : evaluate_retrieval_dataset(
                  args, dataset, split, model, *tokenizer, options, granularity,
                  store ? &*store : nullptr, run_id,
                  trec_tag(args.run_name.empty() ? default_name : args.run_name));
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "time: " << format_value(seconds) << " s (" << outcome.timing_text << ")\n";
    if (!dist.is_main()) return 0;
    if (!args.mteb_out.empty()) {
      fs::create_directories(args.mteb_out);
      const json result = {
          {"dataset_revision", dataset.info.value("seed", json()).is_null()
                                   ? json()
                                   : json("lmk-seed-" + dataset.info["seed"].dump())},
          {"task_name", dataset.task},
          {"mteb_version", "2.0.0"},
          {"scores", outcome.mteb_scores},
          {"evaluation_time", seconds},
          {"kg_co2_emissions", nullptr}};
      const std::string file = (fs::path(args.mteb_out) / (dataset.task + ".json")).string();
      AtomicFile out(file);
      out.write(result.dump(2) + "\n");
      out.commit();
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
    if (store) {
      store->add_eval_results(run_id, outcome.rows);
      store->add_query_results(run_id, outcome.queries);
      if (!args.save_run.empty()) {
        store->add_artifact(run_id, "trec-run", fs::absolute(args.save_run).string());
        store->add_artifact(run_id, "trec-qrels", fs::absolute(args.save_run + ".qrels").string());
      }
      std::vector<std::pair<std::string, double>> timings = outcome.timings;
      timings.emplace_back("evaluation_time", seconds);
      store->log_metrics(run_id, 0, timings);
      store->set_run_status(run_id, RunStatus::Finished);
      std::cerr << "lmk eval: run " << run_id << " stored in " << args.db << "\n";
    }
  } catch (const std::exception& e) {
    if (store) store->set_run_status(run_id, RunStatus::Failed, e.what());
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
  cmd->add_option("--device", args->device, "cpu | cuda | cuda:N")->capture_default_str();
  return [args] { return run_eval(*args); };
}

}  // namespace lmk::cli
