// lmk data passkey | needle | corpus | pairs | manpages | stats: datasets generated here (BEIR
// layout).
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "app/commands.h"
#include "core/data/dataset_dir.h"
#include "core/data/formats.h"
#include "core/data/generators.h"
#include "core/data/manpages.h"
#include "core/store/results_store.h"
#include "core/tokenize/tokenizer.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/progress.h"

namespace lmk::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// dataset.json: what generated the folder and how to score it (read by lmk eval).
void write_dataset_info(const std::string& dir, const json& info) {
  AtomicFile out((fs::path(dir) / "dataset.json").string());
  out.write(info.dump(2) + "\n");
  out.commit();
}

struct SyntheticArgs {
  std::string tokenizer, out, lengths = "256,512,1024,2048,4096,8192,16384,32768", haystack;
  size_t queries = 50, documents = 100;
  uint64_t seed = 42;
};

int run_synthetic(const SyntheticArgs& args, const std::string& task) {
  const auto tokenizer = load_tokenizer(args.tokenizer);
  SyntheticTaskOptions options;
  options.lengths = parse_int_list(args.lengths, "--lengths", 1, "a positive token count");
  options.queries = args.queries;
  options.documents = args.documents;
  options.seed = args.seed;
  std::vector<GeneratedSplit> splits;
  if (task == "passkey") {
    splits = make_passkey_task(*tokenizer, options);
  } else {
    const std::vector<Document> haystack = read_text_folder(args.haystack);
    splits = make_needle_task(*tokenizer, haystack, options);
  }
  json names = json::array();
  for (const auto& split : splits) {
    write_beir((fs::path(args.out) / split.name).string(), "test", split.data);
    names.push_back(split.name);
  }
  write_dataset_info(args.out, {{"task", task},
                                {"protocol", "LongEmbed"},
                                {"main_score", "ndcg_at_1"},
                                {"split", "test"},
                                {"parts", names},
                                {"part_kind", "length"},
                                {"tokenizer", args.tokenizer},
                                {"seed", args.seed},
                                {"queries", args.queries},
                                {"documents", args.documents}});
  std::cerr << "lmk data " << task << ": " << splits.size() << " lengths × " << args.documents
            << " documents, " << args.queries << " queries each, in " << args.out << "\n";
  return 0;
}

struct CorpusArgs {
  std::string source, out, name, split = "train";
  uint64_t seed = 42;
  size_t queries_per_document = 1, negatives = 3, examples_per_document = 8;
};

int run_corpus(const CorpusArgs& args) {
  const std::vector<Document> docs = read_text_folder(args.source);
  CorpusTaskOptions options;
  options.seed = args.seed;
  options.queries_per_document = args.queries_per_document;
  const std::string name =
      args.name.empty() ? fs::path(args.source).lexically_normal().filename().string() : args.name;
  for (const auto& [variant, data] :
       {std::pair<std::string, RetrievalSplit>{"documents", make_corpus_task(docs, options)},
        {"passages", make_passage_task(docs, options)}}) {
    // One corpus, qrels per split (train / dev / test by document).
    std::map<std::string, Qrels> qrels_of_split;
    std::map<std::string, std::string> split_of_query;
    for (const Query& q : data.queries) split_of_query[q.id] = q.extra.value("split", "test");
    for (const auto& [query, docs_of_query] : data.qrels)
      qrels_of_split[split_of_query[query]][query] = docs_of_query;
    const std::string dir = (fs::path(args.out) / variant).string();
    RetrievalSplit part = data;
    for (auto& [split, qrels] : qrels_of_split) {
      part.qrels = std::move(qrels);
      write_beir(dir, split, part);  // the same corpus and queries, this split's qrels
    }
    write_dataset_info(dir, {{"task", name + "-" + variant},
                             {"protocol",
                              "MLDR-style: a sentence drawn at a random position, "
                              "removed from its target"},
                             {"main_score", "ndcg_at_10"},
                             {"split", "test"},
                             {"source", fs::absolute(args.source).string()},
                             {"seed", args.seed}});
    std::cerr << "lmk data corpus: " << variant << ": " << data.corpus.size() << " entries, "
              << data.queries.size() << " queries (train/dev/test by document) in " << dir << "\n";
  }
  // Classification by the label in the file name (a man page's section).
  const auto [train, test] = make_classification_task(docs, args.seed);
  if (train.empty() || test.empty()) {
    std::cerr << "lmk data corpus: no classification task (file names carry no NAME.LABEL "
                 "suffix in both train and test)\n";
    return 0;
  }
  const std::string dir = (fs::path(args.out) / "classification").string();
  fs::create_directories(dir);
  for (const auto& [file, items] :
       {std::pair<const char*, const std::vector<LabelledText>*>{"train.jsonl", &train},
        {"test.jsonl", &test}}) {
    JsonlWriter out((fs::path(dir) / file).string());
    for (const LabelledText& item : *items)
      out.write({{"id", item.id}, {"text", item.text}, {"label", item.label}});
    out.commit();
  }
  write_dataset_info(dir, {{"task", name + "-classification"},
                           {"type", "classification"},
                           {"main_score", "accuracy"},
                           {"label", "the suffix after the last '.' of the file name"},
                           {"seed", args.seed}});
  std::cerr << "lmk data corpus: classification: " << train.size() << " train, " << test.size()
            << " test texts in " << dir << "\n";
  return 0;
}

int run_pairs(const CorpusArgs& args) {
  const std::vector<Document> docs = read_text_folder(args.source);
  PairsOptions options;
  options.seed = args.seed;
  options.negatives = args.negatives;
  options.split = args.split;
  options.examples_per_document = args.examples_per_document;
  const std::vector<TrainingExample> examples = make_training_pairs(docs, options);
  write_training_examples(args.out, examples);
  std::cerr << "lmk data pairs: " << examples.size() << " examples from the " << args.split
            << " documents of " << args.source << " in " << args.out << "\n";
  return 0;
}

struct ManPagesArgs {
  std::string out, sections = "2,5,7";
  size_t limit = 0;
};

int run_manpages(const ManPagesArgs& args) {
  ManPagesOptions options;
  options.sections.clear();
  for (int64_t s : parse_int_list(args.sections, "--sections", 1, "a man section number"))
    options.sections.push_back(static_cast<int>(s));
  options.limit = args.limit;
  options.threads = std::max(1u, std::thread::hardware_concurrency());
  const size_t files = render_manpages(args.out, options);
  std::cerr << "lmk data manpages: " << files << " pages in " << args.out << "\n";
  return 0;
}

struct StatsArgs {
  std::string dataset, tokenizer, db, name;
  bool json_out = false;
};

int run_stats(const StatsArgs& args) {
  const auto tokenizer = load_tokenizer(args.tokenizer);
  // The texts: the corpus of a BEIR folder (or of each part), else a folder of .txt files.
  std::vector<std::string> texts;
  const auto parts = dataset_parts(args.dataset);
  if (!parts.empty()) {
    for (const auto& part : parts) {
      for_each_beir_document(part.path, [&](Document&& d) {
        texts.push_back(std::move(d.text));
        return true;
      });
    }
  } else {
    for (Document& d : read_text_folder(args.dataset)) texts.push_back(std::move(d.text));
  }
  std::vector<int64_t> lengths;
  Progress progress("tokenizing", texts.size(), "texts");
  for (const std::string& text : texts) {
    lengths.push_back(static_cast<int64_t>(tokenizer->encode(text).ids.size()));
    progress.update(lengths.size());
  }
  progress.finish();
  const LengthStats stats = length_stats(lengths);
  const std::string name =
      args.name.empty() ? fs::path(args.dataset).lexically_normal().filename().string() : args.name;
  std::cout << name << ": " << stats.texts << " texts, tokens: mean "
            << static_cast<int64_t>(stats.mean) << ", min " << stats.min << ", max " << stats.max
            << "\n";
  for (const auto& [p, value] : stats.percentiles) std::cout << "  p" << p << " " << value << "\n";
  std::cout << "bin (tokens)        texts\n";
  for (size_t b = 0; b < stats.counts.size(); ++b) {
    if (stats.counts[b] == 0) continue;
    const std::string hi = b + 2 == stats.edges.size() ? "inf" : std::to_string(stats.edges[b + 1]);
    std::string label = "[" + std::to_string(stats.edges[b]) + ", " + hi + ")";
    label.resize(std::max<size_t>(label.size(), 18), ' ');
    std::cout << label << " " << stats.counts[b] << "\n";
  }
  if (!args.db.empty()) {
    ResultsStore store(args.db);
    LengthHistogram histogram;
    histogram.dataset = name;
    histogram.tokenizer = args.tokenizer;
    for (size_t b = 0; b < stats.counts.size(); ++b)
      histogram.bins.push_back({stats.edges[b], stats.edges[b + 1], stats.counts[b]});
    for (const auto& [p, value] : stats.percentiles)
      histogram.percentiles.emplace_back(p, static_cast<double>(value));
    store.add_length_histogram(histogram);
    std::cerr << "lmk data stats: histogram of " << name << " stored in " << args.db << "\n";
  }
  return 0;
}

}  // namespace

Runner add_data_command(CLI::App& app) {
  auto* data = app.add_subcommand("data", "Generate datasets (BEIR layout) and length statistics");
  data->require_subcommand(1);
  auto chosen = std::make_shared<std::function<int()>>();
  for (const std::string task : {"passkey", "needle"}) {
    auto args = std::make_shared<SyntheticArgs>();
    auto* cmd = data->add_subcommand(
        task, task == "passkey"
                  ? "LongEmbed passkey retrieval (filler + pass key at a random position)"
                  : "Needle retrieval: a fact in natural text at a random position");
    cmd->add_option("--tokenizer", args->tokenizer, "tokenizer that measures lengths")->required();
    cmd->add_option("--out", args->out, "output folder (one BEIR folder per length)")->required();
    cmd->add_option("--lengths", args->lengths, "context lengths in tokens")->capture_default_str();
    cmd->add_option("--queries", args->queries, "queries per length")->capture_default_str();
    cmd->add_option("--documents", args->documents, "candidate documents per length")
        ->capture_default_str();
    cmd->add_option("--seed", args->seed, "random seed")->capture_default_str();
    if (task == "needle")
      cmd->add_option("--haystack", args->haystack, "folder of .txt files (natural text)")
          ->required();
    cmd->callback(
        [chosen, args, task] { *chosen = [args, task] { return run_synthetic(*args, task); }; });
  }
  {
    auto args = std::make_shared<CorpusArgs>();
    auto* cmd = data->add_subcommand(
        "corpus", "Long-document retrieval from a folder of .txt files (documents/ and passages/)");
    cmd->add_option("--source", args->source, "folder of .txt files")->required();
    cmd->add_option("--out", args->out, "output folder")->required();
    cmd->add_option("--seed", args->seed, "random seed (queries and splits)")
        ->capture_default_str();
    cmd->add_option("--queries-per-document", args->queries_per_document)->capture_default_str();
    cmd->add_option(
        "--name", args->name,
        "datasets NAME-documents and NAME-passages (default: the source folder's name)");
    cmd->callback([chosen, args] { *chosen = [args] { return run_corpus(*args); }; });
  }
  {
    auto args = std::make_shared<CorpusArgs>();
    auto* cmd =
        data->add_subcommand("pairs", "Training pairs (FlagEmbedding jsonl) from .txt files");
    cmd->add_option("--source", args->source, "folder of .txt files")->required();
    cmd->add_option("--out", args->out, "output .jsonl")->required();
    cmd->add_option("--seed", args->seed, "random seed (same as lmk data corpus for its splits)")
        ->capture_default_str();
    cmd->add_option("--split", args->split, "documents of this split only")->capture_default_str();
    cmd->add_option("--negatives", args->negatives, "hard negatives per example")
        ->capture_default_str();
    cmd->add_option("--examples-per-document", args->examples_per_document)->capture_default_str();
    cmd->callback([chosen, args] { *chosen = [args] { return run_pairs(*args); }; });
  }
  {
    auto args = std::make_shared<ManPagesArgs>();
    auto* cmd = data->add_subcommand(
        "manpages", "The built-in corpus: the installed Linux man pages rendered to .txt files");
    cmd->add_option("--out", args->out, "output folder")->required();
    cmd->add_option("--sections", args->sections, "man sections")->capture_default_str();
    cmd->add_option("--limit", args->limit, "this many pages, spread over the list (0: all)")
        ->capture_default_str();
    cmd->callback([chosen, args] { *chosen = [args] { return run_manpages(*args); }; });
  }
  {
    auto args = std::make_shared<StatsArgs>();
    auto* cmd =
        data->add_subcommand("stats", "Token-length distribution of a dataset (paper Fig. 2)");
    cmd->add_option("DIR", args->dataset, "BEIR folder, folder of parts, or folder of .txt")
        ->required();
    cmd->add_option("--tokenizer", args->tokenizer, "tokenizer")->required();
    cmd->add_option("--db", args->db, "store the histogram in this results database");
    cmd->add_option("--name", args->name, "dataset name (default: the folder's)");
    cmd->callback([chosen, args] { *chosen = [args] { return run_stats(*args); }; });
  }
  return [chosen] { return (*chosen)(); };
}

}  // namespace lmk::cli
