// lmk data passkey | needle | cwe | fwe | corpus | code | pairs | manpages | docs | stats: datasets
// generated
// here (BEIR layout).
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "app/commands.h"
#include "core/data/code_task.h"
#include "core/data/dataset_dir.h"
#include "core/data/formats.h"
#include "core/data/generators.h"
#include "core/data/html_text.h"
#include "core/data/manpages.h"
#include "core/data/word_tasks.h"
#include "core/store/results_store.h"
#include "core/tokenize/tokenizer.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/progress.h"

namespace lmk::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// What lmk data generated (dataset.json, written by core/data/dataset_dir.h): the task, how it is
// scored, its seed, and how it was made (`provenance`: protocol, source, ...).
DatasetInfo generated_dataset(const std::string& task, const std::string& main_score, uint64_t seed,
                              json provenance) {
  DatasetInfo info;
  info.task = task;
  info.main_score = main_score;
  info.split = "test";
  info.seed = seed;
  info.info = std::move(provenance);
  return info;
}

// The named parts of a folder of per-length BEIR folders.
std::vector<DatasetPart> length_parts(const std::string& dir,
                                      const std::vector<std::string>& names) {
  std::vector<DatasetPart> parts;
  for (const std::string& name : names) parts.push_back({name, (fs::path(dir) / name).string()});
  return parts;
}

struct SyntheticArgs {
  std::string tokenizer, out, lengths = "256,512,1024,2048,4096,8192,16384,32768", haystack;
  std::string depths;     // "0,0.1,...,1": the length × depth map
  std::string pairs_out;  // training pairs (jsonl) instead of a dataset
  std::string name;       // the dataset's name (dataset.json "task"; default: the command's)
  size_t queries = 50, documents = 100, keys = 1, values = 1, queries_per_document = 1,
         negatives = 1;
  uint64_t seed = 42;
};

// --depths: comma-separated fractions in [0, 1].
std::vector<double> parse_depths(const std::string& text) {
  std::vector<double> depths;
  if (text.empty()) return depths;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    char* end = nullptr;
    const double depth = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !(depth >= 0 && depth <= 1))
      throw input_error("--depths", "'" + item + "' is not a depth in [0, 1]");
    depths.push_back(depth);
  }
  return depths;
}

int run_synthetic(const SyntheticArgs& args, const std::string& task) {
  const auto tokenizer = load_tokenizer(args.tokenizer);
  SyntheticTaskOptions options;
  options.lengths = parse_int_list(args.lengths, "--lengths", 1, "a positive token count");
  options.queries = args.queries;
  options.documents = args.documents;
  options.seed = args.seed;
  options.depths = parse_depths(args.depths);
  options.keys = args.keys;
  options.values = args.values;
  options.queries_per_document = args.queries_per_document;
  std::vector<GeneratedSplit> splits;
  if (task == "passkey") {
    splits = make_passkey_task(*tokenizer, options);
  } else if (task == "cwe") {
    splits = make_common_words_task(*tokenizer, options);
  } else if (task == "fwe") {
    splits = make_frequent_words_task(*tokenizer, options);
  } else {
    const std::vector<Document> haystack = read_text_folder(args.haystack);
    splits = make_needle_task(*tokenizer, haystack, options);
  }
  if (!args.pairs_out.empty()) {
    const std::vector<TrainingExample> examples =
        synthetic_training_pairs(splits, args.negatives, args.seed);
    write_training_examples(args.pairs_out, examples);
    std::cerr << "lmk data " << task << ": " << examples.size() << " training pairs ("
              << args.negatives << " hard negatives each) in " << args.pairs_out << "\n";
    return 0;
  }
  if (args.out.empty()) throw input_error("--out", "required (or --pairs-out)");
  std::vector<std::string> names;
  for (const auto& split : splits) {
    write_beir((fs::path(args.out) / split.name).string(), "test", split.data);
    names.push_back(split.name);
  }
  DatasetInfo info =
      generated_dataset(args.name.empty() ? task : args.name, "ndcg_at_1", args.seed,
                        {{"protocol", task == "cwe" || task == "fwe" ? "RULER" : "LongEmbed"},
                         {"tokenizer", args.tokenizer},
                         {"queries", args.queries},
                         {"documents", args.documents},
                         {"depths", options.depths},
                         {"keys", options.keys},
                         {"values", options.values},
                         {"queries_per_document", options.queries_per_document}});
  info.part_kind = "length";
  info.parts = length_parts(args.out, names);
  write_dataset_info(args.out, info);
  std::cerr << "lmk data " << task << ": " << splits.size() << " lengths × " << args.documents
            << " documents, " << args.queries << " queries each, in " << args.out << "\n";
  return 0;
}

struct CorpusArgs {
  std::string source, out, name, split = "train", lengths, tokenizer, splits = "train,dev,test";
  uint64_t seed = 42;
  size_t queries_per_document = 1, negatives = 3, examples_per_document = 8;
  size_t windows_per_document = 1, max_windows = 0;
  bool stratified = false;
};

// Writes a task whose queries carry their split (extra "split"; none: test) as one BEIR folder:
// one corpus and query file, and qrels per split.
void write_beir_splits(const std::string& dir, const RetrievalSplit& data) {
  std::map<std::string, Qrels> qrels_of_split;
  std::map<std::string, std::string> split_of_query;
  for (const Query& q : data.queries) split_of_query[q.id] = q.extra.value("split", "test");
  for (const auto& [query, docs_of_query] : data.qrels)
    qrels_of_split[split_of_query[query]][query] = docs_of_query;
  RetrievalSplit part = data;
  for (auto& [split, qrels] : qrels_of_split) {
    part.qrels = std::move(qrels);
    write_beir(dir, split, part);  // the same corpus and queries, this split's qrels
  }
}

// write_beir_splits and dataset.json.
void write_split_task(const std::string& dir, const RetrievalSplit& data, const DatasetInfo& info) {
  write_beir_splits(dir, data);
  write_dataset_info(dir, info);
}

// --splits: a comma-separated subset of train, dev, test.
std::vector<std::string> parse_splits(const std::string& text) {
  std::vector<std::string> splits;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    if (item != "train" && item != "dev" && item != "test")
      throw input_error("--splits", "'" + item + "' is not a split (train, dev, test)");
    splits.push_back(item);
  }
  if (splits.empty()) throw input_error("--splits", "no split given");
  return splits;
}

// Long-document retrieval at fixed lengths (--lengths): documents/ with one part per length.
void write_window_task(const CorpusArgs& args, const std::vector<Document>& docs,
                       const std::vector<std::string>& splits, const std::string& name) {
  const auto tokenizer = load_tokenizer(args.tokenizer);
  WindowTaskOptions options;
  options.lengths = parse_int_list(args.lengths, "--lengths", 16, "a length of at least 16 tokens");
  options.seed = args.seed;
  options.queries_per_window = args.queries_per_document;
  options.windows_per_document = args.windows_per_document;
  options.max_windows = args.max_windows;
  options.splits = splits;
  const std::string dir = (fs::path(args.out) / "documents").string();
  std::vector<std::string> parts;
  json counts = json::object();
  for (const WindowPart& part : make_window_task(docs, *tokenizer, options)) {
    const std::string length = std::to_string(part.length);
    std::string summary;
    for (const auto& [split, windows] : part.windows)
      summary += (summary.empty() ? "" : ", ") + split + " " + std::to_string(windows) +
                 " windows / " + std::to_string(part.queries.at(split)) + " queries";
    std::cerr << "lmk data corpus: documents@" << length << ": "
              << part.documents - part.short_documents << " of " << part.documents
              << " documents hold " << length << " tokens (" << part.short_documents
              << " shorter: not in this part); " << (summary.empty() ? "no windows" : summary)
              << "\n";
    counts[length] = {{"documents", part.documents},
                      {"short_documents", part.short_documents},
                      {"windows", part.windows},
                      {"queries", part.queries}};
    if (part.data.queries.empty()) continue;  // no document this long: no part
    write_beir_splits((fs::path(dir) / length).string(), part.data);
    parts.push_back(length);
  }
  if (parts.empty())
    throw input_error(args.source, "no document of the splits asked for holds " + args.lengths +
                                       " tokens: no long-document task");
  DatasetInfo info = generated_dataset(
      name + "-documents", "ndcg_at_10", args.seed,
      {{"protocol",
        "windows of L tokens of documents at least L long, sentences drawn at stratified "
        "positions and removed from their window"},
       {"counts", counts},
       {"tokenizer", args.tokenizer},
       {"queries_per_window", args.queries_per_document},
       {"source", fs::absolute(args.source).string()}});
  info.part_kind = "length";
  info.parts = length_parts(dir, parts);
  write_dataset_info(dir, info);
}

int run_corpus(const CorpusArgs& args) {
  if (args.lengths.empty() != args.tokenizer.empty())
    throw input_error(args.lengths.empty() ? "--tokenizer" : "--lengths",
                      "--lengths and --tokenizer go together (windows of L tokens)");
  const std::vector<std::string> splits = parse_splits(args.splits);
  std::vector<Document> docs;
  for (Document& doc : read_text_folder(args.source)) {
    if (std::find(splits.begin(), splits.end(), split_of_document(doc.id, args.seed)) !=
        splits.end())
      docs.push_back(std::move(doc));
  }
  if (docs.empty())
    throw input_error(args.source, "no document falls in the splits " + args.splits);
  CorpusTaskOptions options;
  options.seed = args.seed;
  options.queries_per_document = args.queries_per_document;
  options.stratified = args.stratified;
  const std::string name =
      args.name.empty() ? fs::path(args.source).lexically_normal().filename().string() : args.name;
  std::vector<std::pair<std::string, RetrievalSplit>> tasks;
  if (args.lengths.empty())
    tasks.emplace_back("documents", make_corpus_task(docs, options));
  else
    write_window_task(args, docs, splits, name);
  tasks.emplace_back("passages", make_passage_task(docs, options));
  for (const auto& [variant, data] : tasks) {
    // One corpus, qrels per split (train / dev / test by document).
    const std::string dir = (fs::path(args.out) / variant).string();
    write_split_task(
        dir, data,
        generated_dataset(
            name + "-" + variant, "ndcg_at_10", args.seed,
            {{"protocol",
              "MLDR-style: a sentence drawn at a random position, removed from its target"},
             {"source", fs::absolute(args.source).string()}}));
    std::cerr << "lmk data corpus: " << variant << ": " << data.corpus.size() << " entries, "
              << data.queries.size() << " queries (train/dev/test by document) in " << dir << "\n";
  }
  // Classification by the label in the file name (a man page's section).
  const auto [train, test] = make_classification_task(docs, args.seed);
  if (train.empty() || test.empty()) {
    std::cerr << "lmk data corpus: no classification task (it needs documents whose file name "
                 "carries a NAME.LABEL suffix in train and in dev or test)\n";
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
  DatasetInfo info =
      generated_dataset(name + "-classification", "accuracy", args.seed,
                        {{"label", "the suffix after the last '.' of the file name"}});
  info.type = "classification";
  info.split.clear();
  write_dataset_info(dir, info);
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

struct CodeArgs {
  std::string source = "/usr/lib/python3.11", out, name = "python-code", splits = "train,dev,test";
  uint64_t seed = 42;
  size_t limit_files = 0;
};

int run_code(const CodeArgs& args) {
  const std::vector<PythonFunction> functions =
      read_python_functions(args.source, args.limit_files);
  CodeTaskOptions options;
  options.seed = args.seed;
  options.splits = parse_splits(args.splits);
  const RetrievalSplit task = make_code_task(functions, options);
  write_split_task(args.out, task,
                   generated_dataset(args.name, "ndcg_at_10", args.seed,
                                     {{"protocol",
                                       "CodeSearchNet-style: a function's docstring (first "
                                       "paragraph) retrieves the function's source without it, "
                                       "among every function"},
                                      {"source", fs::absolute(args.source).string()}}));
  std::cerr << "lmk data code: " << functions.size() << " functions, " << task.corpus.size()
            << " in the corpus, " << task.queries.size() << " queries (train/dev/test by file) in "
            << args.out << "\n";
  return 0;
}

struct DocsArgs {
  std::string source, out;
  size_t limit = 0, min_bytes = 200;
};

int run_docs(const DocsArgs& args) {
  HtmlRenderOptions options;
  options.limit = args.limit;
  options.min_bytes = args.min_bytes;
  const HtmlRenderReport report =
      render_html_docs(html_docs_source(args.source, "--source"), args.out, options);
  std::cerr << "lmk data docs: " << args.source << ": " << report.rendered << " of " << report.pages
            << " pages rendered (" << report.short_pages << " shorter than " << args.min_bytes
            << " bytes, " << report.rejected << " the HTML parser rejected), "
            << report.bytes / 1000000.0 << " MB of text in " << args.out << "\n";
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

// lmk data passkey | needle | cwe | fwe
void add_synthetic_commands(CLI::App* data, const std::shared_ptr<std::function<int()>>& chosen) {
  for (const std::string task : {"passkey", "needle", "cwe", "fwe"}) {
    auto args = std::make_shared<SyntheticArgs>();
    const std::map<std::string, std::string> about = {
        {"passkey", "LongEmbed passkey retrieval (filler + pass key at a random position)"},
        {"needle", "Needle retrieval: a fact in natural text at a random position"},
        {"cwe",
         "RULER common-words extraction as retrieval: the list whose five most common "
         "words the query names"},
        {"fwe",
         "RULER frequent-words extraction as retrieval: the Zipf text whose three most "
         "frequent words the query names"}};
    auto* cmd = data->add_subcommand(task, about.at(task));
    cmd->add_option("--tokenizer", args->tokenizer, "tokenizer that measures lengths")->required();
    cmd->add_option("--out", args->out, "output folder (one BEIR folder per length)");
    cmd->add_option("--pairs-out", args->pairs_out,
                    "write training pairs (FlagEmbedding jsonl: query, its document, other "
                    "documents as negatives) instead of a dataset; use another --seed than the "
                    "evaluation's")
        ->excludes("--out");
    cmd->add_option("--negatives", args->negatives, "with --pairs-out: hard negatives per pair")
        ->capture_default_str()
        ->check(whole(0, 1000000));
    cmd->add_option("--lengths", args->lengths, "context lengths in tokens")->capture_default_str();
    cmd->add_option(
           "--name", args->name,
           "the dataset's name, which its evaluations are stored under (default: " + task + ")")
        ->excludes("--pairs-out");
    cmd->add_option("--queries", args->queries, "queries per length")
        ->capture_default_str()
        ->check(whole(1));
    cmd->add_option("--documents", args->documents, "candidate documents per length")
        ->capture_default_str()
        ->check(whole(1));
    cmd->add_option("--seed", args->seed, "random seed")
        ->capture_default_str()
        ->check(seed_range());
    if (task != "fwe")
      cmd->add_option("--depths", args->depths,
                      "needle depths of the queries' documents, e.g. 0,0.1,0.2,...,1 (a length x "
                      "depth map; default: uniformly random; cwe: the centre of the band of its "
                      "common words)");
    if (task == "needle")
      cmd->add_option("--keys", args->keys,
                      "facts per document, the query asking for one (RULER's multi-key needle)")
          ->capture_default_str()
          ->check(whole(1, 1000000));
    if (task == "needle")
      cmd->add_option("--values", args->values,
                      "values of the asked fact, each stated once, the first at the needle's "
                      "depth (RULER's multi-value needle)")
          ->capture_default_str()
          ->check(whole(1, 8));
    if (task == "needle")
      cmd->add_option("--queries-per-document", args->queries_per_document,
                      "queries per target document, query m asking for key m, with its own "
                      "evidence position (RULER's multi-query needle; at most --keys)")
          ->capture_default_str()
          ->check(whole(1, 1000000));
    if (task == "needle")
      cmd->add_option("--haystack", args->haystack, "folder of .txt files (natural text)")
          ->required();
    cmd->callback(
        [chosen, args, task] { *chosen = [args, task] { return run_synthetic(*args, task); }; });
  }
}

// lmk data corpus
void add_corpus_command(CLI::App* data, const std::shared_ptr<std::function<int()>>& chosen) {
  auto args = std::make_shared<CorpusArgs>();
  auto* cmd = data->add_subcommand(
      "corpus", "Long-document retrieval from a folder of .txt files (documents/ and passages/)");
  cmd->add_option("--source", args->source, "folder of .txt files")->required();
  cmd->add_option("--out", args->out, "output folder")->required();
  cmd->add_option("--seed", args->seed, "random seed (queries and splits)")
      ->capture_default_str()
      ->check(seed_range());
  cmd->add_option("--queries-per-document", args->queries_per_document,
                  "queries drawn from each document (with --lengths: from each window)")
      ->capture_default_str()
      ->check(whole(1, 1000000));
  cmd->add_flag("--stratified", args->stratified,
                "query q of a document's k from [q/k, (q+1)/k) of its text (evidence spread "
                "evenly over the positions)");
  cmd->add_option("--name", args->name,
                  "datasets NAME-documents and NAME-passages (default: the source folder's name)");
  cmd->add_option("--lengths", args->lengths,
                  "documents/ as windows of these token lengths, one part each, every target at "
                  "least that long (with --tokenizer; queries stratified over the window)");
  cmd->add_option("--tokenizer", args->tokenizer, "tokenizer that measures --lengths");
  cmd->add_option("--windows-per-document", args->windows_per_document,
                  "with --lengths: consecutive windows cut from a long document")
      ->capture_default_str()
      ->check(whole(1, 1000000));
  cmd->add_option("--max-windows", args->max_windows,
                  "with --lengths: at most this many windows per split and length, a seeded "
                  "choice (0: all)")
      ->capture_default_str()
      ->check(whole(0));
  cmd->add_option("--splits", args->splits,
                  "only documents of these splits (e.g. dev,test for an evaluation-only corpus)")
      ->capture_default_str();
  cmd->callback([chosen, args] { *chosen = [args] { return run_corpus(*args); }; });
}

// lmk data pairs
void add_pairs_command(CLI::App* data, const std::shared_ptr<std::function<int()>>& chosen) {
  auto args = std::make_shared<CorpusArgs>();
  auto* cmd = data->add_subcommand("pairs", "Training pairs (FlagEmbedding jsonl) from .txt files");
  cmd->add_option("--source", args->source, "folder of .txt files")->required();
  cmd->add_option("--out", args->out, "output .jsonl")->required();
  cmd->add_option("--seed", args->seed, "random seed (same as lmk data corpus for its splits)")
      ->capture_default_str()
      ->check(seed_range());
  cmd->add_option("--split", args->split, "documents of this split only")->capture_default_str();
  cmd->add_option("--negatives", args->negatives, "hard negatives per example")
      ->capture_default_str()
      ->check(whole(0, 1000000));
  cmd->add_option("--examples-per-document", args->examples_per_document)
      ->capture_default_str()
      ->check(whole(1, 1000000));
  cmd->callback([chosen, args] { *chosen = [args] { return run_pairs(*args); }; });
}

// lmk data manpages
void add_manpages_command(CLI::App* data, const std::shared_ptr<std::function<int()>>& chosen) {
  auto args = std::make_shared<ManPagesArgs>();
  auto* cmd = data->add_subcommand(
      "manpages", "The built-in corpus: the installed Linux man pages rendered to .txt files");
  cmd->add_option("--out", args->out, "output folder")->required();
  cmd->add_option("--sections", args->sections, "man sections")->capture_default_str();
  cmd->add_option("--limit", args->limit, "this many pages, spread over the list (0: all)")
      ->capture_default_str()
      ->check(whole(0));
  cmd->callback([chosen, args] { *chosen = [args] { return run_manpages(*args); }; });
}

// lmk data code
void add_code_command(CLI::App* data, const std::shared_ptr<std::function<int()>>& chosen) {
  auto args = std::make_shared<CodeArgs>();
  auto* cmd = data->add_subcommand(
      "code",
      "Code retrieval from Python sources: docstring (first paragraph) -> the function's source "
      "without it, among every function");
  cmd->add_option("--source", args->source, "folder of .py files")->capture_default_str();
  cmd->add_option("--out", args->out, "output folder (BEIR)")->required();
  cmd->add_option("--name", args->name, "dataset name")->capture_default_str();
  cmd->add_option("--seed", args->seed, "split seed (train / dev / test by file)")
      ->capture_default_str()
      ->check(seed_range());
  cmd->add_option("--splits", args->splits,
                  "only the functions of files in these splits (e.g. dev,test: an "
                  "evaluation-only corpus)")
      ->capture_default_str();
  cmd->add_option("--limit-files", args->limit_files,
                  "this many files, spread over the sorted list (0: all)")
      ->capture_default_str()
      ->check(whole(0));
  cmd->callback([chosen, args] { *chosen = [args] { return run_code(*args); }; });
}

// lmk data docs
void add_docs_command(CLI::App* data, const std::shared_ptr<std::function<int()>>& chosen) {
  auto args = std::make_shared<DocsArgs>();
  auto* cmd = data->add_subcommand(
      "docs",
      "A documentation corpus Debian ships as HTML, rendered to .txt files: python-docs "
      "(python3.11-doc), kernel-docs (linux-doc-6.1)");
  cmd->add_option("--source", args->source, "python-docs | kernel-docs")->required();
  cmd->add_option("--out", args->out, "output folder")->required();
  cmd->add_option("--limit", args->limit, "this many pages, spread over the list (0: all)")
      ->capture_default_str()
      ->check(whole(0));
  cmd->add_option("--min-bytes", args->min_bytes, "skip pages with less text than this")
      ->capture_default_str()
      ->check(whole(0));
  cmd->callback([chosen, args] { *chosen = [args] { return run_docs(*args); }; });
}

// lmk data stats
void add_stats_command(CLI::App* data, const std::shared_ptr<std::function<int()>>& chosen) {
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

}  // namespace

Runner add_data_command(CLI::App& app) {
  auto* data = app.add_subcommand("data", "Generate datasets (BEIR layout) and length statistics");
  data->require_subcommand(1);
  auto chosen = std::make_shared<std::function<int()>>();
  add_synthetic_commands(data, chosen);
  add_corpus_command(data, chosen);
  add_pairs_command(data, chosen);
  add_manpages_command(data, chosen);
  add_code_command(data, chosen);
  add_docs_command(data, chosen);
  add_stats_command(data, chosen);
  return [chosen] { return (*chosen)(); };
}

}  // namespace lmk::cli
