// lmk model init, lmk model merge-lora, lmk inspect, lmk encode.
#include <ATen/ATen.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "app/commands.h"
#include "app/device_option.h"
#include "app/shape_options.h"
#include "core/data/formats.h"
#include "core/data/jsonl.h"
#include "core/eval/document_attention.h"
#include "core/store/recorded_run.h"
#include "core/store/results_store.h"
#include "core/tokenize/tokenizer.h"
#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/json_util.h"
#include "core/util/npy.h"
#include "core/util/progress.h"
#include "engine/embed/embed.h"
#include "engine/embed/model_folder.h"
#include "engine/eval/attention_explorer.h"
#include "engine/eval/attention_profile.h"

namespace lmk::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct InitArgs {
  std::string preset = "small", tokenizer, out, pooling = "lmk";
  uint64_t seed = 0;
  ShapeOverrides shape;
};

int run_init(const InitArgs& args) {
  const auto tokenizer = load_tokenizer(args.tokenizer);
  const EncoderConfig config =
      shaped_config(args.preset, args.shape, static_cast<int64_t>(tokenizer->vocab_size()),
                    tokenizer->special_tokens().pad.value_or(0));
  const Encoder encoder(config, args.seed);
  PoolingSettings pooling;
  pooling.pooling = parse_pooling(args.pooling, "--pooling");
  std::unique_ptr<LatentAttention> latent;
  if (pooling.pooling == Pooling::Latent)
    latent = std::make_unique<LatentAttention>(config.hidden_size, 64, 8, 0, args.seed);
  save_model_folder(args.out, encoder, args.tokenizer, pooling, latent.get());
  int64_t parameters = 0;
  for (const auto& [name, t] : encoder.named_weights()) parameters += t.numel();
  std::cerr << "lmk: wrote a randomly initialized " << (config.is_decoder() ? "decoder" : "encoder")
            << " to " << args.out << ": " << config.describe() << " (the " << args.preset
            << " preset" << (args.shape.reshapes() ? " with the shape options" : "") << "; "
            << parameters << " parameters)\n";
  if (!config.is_global_layer(config.num_layers - 1)) {
    std::cerr << "lmk: note: the last layer (" << config.num_layers - 1
              << ") is local: in it the pooling tokens see only +-" << config.half_window()
              << " positions (--layers N with (N - 1) % --global-every == 0 ends on a global "
                 "layer)\n";
  }
  return 0;
}

struct MergeArgs {
  std::string adapter, base, out;
};

// A PEFT LoRA adapter folder merged into its base model: a plain folder every command reads.
int run_merge_lora(const MergeArgs& args) {
  std::string base = args.base;
  if (base.empty()) {
    const std::string config_path = (fs::path(args.adapter) / "adapter_config.json").string();
    if (!fs::is_regular_file(config_path))
      throw input_error(args.adapter, "not a PEFT adapter folder (no adapter_config.json)");
    base = json_util::optional<std::string>(json_util::parse(read_file(config_path), config_path),
                                            "base_model_name_or_path", config_path, "");
    if (base.empty())
      throw input_error(config_path + ": base_model_name_or_path", "empty: give --base");
    if (!fs::is_directory(base))
      throw input_error(config_path + ": base_model_name_or_path",
                        "'" + base + "' is not a folder here (give --base)");
  }
  LoadedModel model = load_model_folder(base);
  load_adapter_folder(args.adapter, *model.encoder);
  save_model_folder(args.out, *model.encoder, base, model.pooling, model.latent.get());
  const LoraSettings& lora = model.encoder->lora();
  size_t adapted = 0;
  for (const auto& [name, adapter] : model.encoder->linear_layers()) adapted += adapter->attached();
  std::cerr << "lmk: merged the LoRA adapter " << args.adapter << " (r " << lora.rank << ", alpha "
            << lora.alpha << ", " << adapted << " layers) into " << base << "; wrote " << args.out
            << "\n";
  return 0;
}

int run_inspect(const std::string& dir) {
  const LoadedModel model = load_model_folder(dir);
  const EncoderConfig& c = model.encoder->config();
  int64_t encoder_parameters = 0, head_parameters = 0;
  for (const auto& [name, t] : model.encoder->named_weights()) {
    (model.encoder->is_head_weight(name) ? head_parameters : encoder_parameters) += t.numel();
  }
  std::cout << "architecture     " << architecture_name(c.architecture)
            << (c.architecture == Architecture::Gte && c.gte_layout == GteLayout::RemoteCode
                    ? " (the hub's remote-code layout, model_type \"new\")"
                    : "")
            << "\n"
            << "layers           " << c.num_layers << " (" << c.layer_pattern()
            << "; G global, L local)\n"
            << "hidden / heads   " << c.hidden_size << " / " << c.num_heads << " (head size "
            << c.head_dim();
  if (c.is_decoder())
    std::cout << ", " << c.kv_heads() << " key/value heads; attention "
              << (c.causal ? "causal" : "bidirectional");
  std::cout << ")\n"
            << "intermediate     " << c.intermediate_size << " (" << c.activation << ")\n"
            << "vocabulary       " << c.vocab_size << "\n"
            << "parameters       " << encoder_parameters << " encoder + " << head_parameters
            << (c.is_decoder() ? " LM head" : " MLM head")
            << (model.latent ? " + latent attention" : "") << "\n";
  if (c.uses_rope()) {
    std::cout << "positions        RoPE, theta " << c.layer_rope_theta(0);
    if (c.architecture == Architecture::ModernBert) {
      std::cout << " global / " << c.local_rope_theta
                << " local; local window |i-j| <= " << c.half_window();
    }
    std::cout << "\n";
  } else {
    std::cout << "positions        absolute, " << c.max_position_embeddings << "\n";
  }
  std::cout << "pooling          " << pooling_name(model.pooling.pooling)
            << (model.pooling.normalize ? ", L2-normalized" : "") << "; landmarks train "
            << model.pooling.landmarks.train.to_string() << ", eval "
            << model.pooling.landmarks.eval.to_string() << "; max length "
            << model.pooling.max_seq_length
            << (model.pooling.truncate_by_default
                    ? " (sentence-transformers' files: inputs cut there unless --max-length)"
                    : "")
            << "\n";
  if (!model.missing_head.empty())
    std::cout << "note             MLM head absent from the checkpoint\n";
  if (!model.unexpected.empty())
    std::cout << "note             " << model.unexpected.size()
              << " unused tensors (first: " << model.unexpected[0] << ")\n";
  return 0;
}

// Reads docs.jsonl (plain or gzip; blank lines skipped): "text" (with "title" in front when
// present) and an id from "_id" / "id" / "doc_id" / "docid" / "query_id", else the record's index.
// Reads docs.jsonl: each line's text (with its title: document_input, as lmk eval reads a
// corpus) and id. Returns how many texts are empty: they are embedded as the empty text, as
// sentence-transformers embeds "", and counted, not refused (one empty line stopped a file).
size_t read_documents(const std::string& path, std::vector<std::string>& texts,
                      std::vector<std::string>& ids) {
  size_t empty = 0;
  for_each_jsonl(path, [&](json& j, const std::string& where) {
    std::string text = document_input(json_util::optional<std::string>(j, "title", where, ""),
                                      json_util::get<std::string>(j, "text", where));
    empty += text.empty();
    std::string id = std::to_string(texts.size());
    for (const char* key : {"_id", "id", "doc_id", "docid", "query_id"}) {
      if (j.contains(key)) {
        id = j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
        break;
      }
    }
    texts.push_back(std::move(text));
    ids.push_back(std::move(id));
    return true;
  });
  if (texts.empty()) throw input_error(path, "no texts");
  return empty;
}

// Says how many of a file's texts were empty (embedded as the empty text).
void report_empty_texts(const char* command, size_t empty, size_t total) {
  if (empty > 0)
    std::cerr << command << ": " << empty << " of " << total
              << " texts are empty: embedded as the empty text (the tokenizer's template alone, "
                 "as sentence-transformers embeds \"\")\n";
}

struct EncodeArgs {
  std::string model, pooling, input, out, device = "cpu";
  int granularity = 0;
  size_t max_length = 0, batch_size = 16;
  bool no_normalize = false;
  int bins = 20;                           // lmk attention
  std::string layers = "last";             // lmk attention: last | all | comma-separated indices
  bool per_head = false;                   // lmk attention
  std::string db, experiment = "default";  // lmk attention --db
  // lmk attention --explore: one document (--document FILE, --text, or --input with --doc-id)
  std::string explore, document, doc_id, query;
  std::optional<std::string> text;  // given, even empty
};

// --layers: "last" (empty list), "all", or comma-separated layer indices.
std::vector<int64_t> parse_layers(const std::string& text, int64_t num_layers) {
  if (text == "last" || text.empty()) return {};
  if (text == "all") {
    std::vector<int64_t> layers;
    for (int64_t i = 0; i < num_layers; ++i) layers.push_back(i);
    return layers;
  }
  return parse_int_list(text, "--layers", 0, "a layer index (use last, all or 0,3,6)");
}

// The encode options the command line asks for, with the model folder's settings as defaults.
EncodeOptions encode_options(const EncodeArgs& args, const LoadedModel& model) {
  EncodeOptions options;
  options.pooling =
      args.pooling.empty() ? model.pooling.pooling : parse_pooling(args.pooling, "--pooling");
  options.granularity = args.granularity;
  options.max_length = args.max_length;
  // A sentence-transformers folder truncates at its max_seq_length, as sentence-transformers
  // does, unless --max-length says otherwise.
  if (options.max_length == 0 && model.pooling.truncate_by_default)
    options.max_length = static_cast<size_t>(model.pooling.max_seq_length);
  options.batch_size = args.batch_size;
  options.normalize = !args.no_normalize && model.pooling.normalize;
  options.device = args.device;
  return options;
}

int run_encode(const EncodeArgs& args) {
  const LoadedModel model = load_model_folder(args.model);
  const auto tokenizer = load_tokenizer(args.model);
  const EncodeOptions options = encode_options(args, model);
  std::vector<std::string> texts, ids;
  const size_t empty = read_documents(args.input, texts, ids);
  report_empty_texts("lmk encode", empty, texts.size());
  Progress progress("lmk encode", texts.size(), "texts");
  const at::Tensor embeddings =
      encode_texts(model, *tokenizer, texts, options, [&](size_t done) { progress.update(done); });
  progress.finish();
  const at::Tensor contiguous = embeddings.contiguous();
  write_npy_float32(args.out, contiguous.data_ptr<float>(), contiguous.size(0), contiguous.size(1));
  const std::string ids_path = fs::path(args.out).replace_extension(".ids.txt").string();
  std::string id_lines;
  for (const auto& id : ids) id_lines += id + "\n";
  AtomicFile ids_file(ids_path);
  ids_file.write(id_lines);
  ids_file.commit();
  std::cerr << "lmk: wrote " << texts.size() << " x " << embeddings.size(1) << " embeddings ("
            << pooling_name(options.pooling) << ") to " << args.out << " and their ids to "
            << ids_path << "\n";
  return 0;
}

// lmk attention --explore: one document's attention for the workbench's explorer.
int run_explore(const EncodeArgs& args) {
  const int sources = !args.document.empty() + args.text.has_value() +
                      (!args.input.empty() || !args.doc_id.empty());
  if (sources != 1)
    throw input_error("--explore",
                      "needs one document: --document FILE, --text TEXT, or --input "
                      "docs.jsonl with --doc-id ID");
  if (!args.db.empty())
    throw input_error("--db", "stores profiles of many documents, not --explore");
  std::string text = args.text.value_or("");
  if (!args.document.empty()) text = read_file(args.document);
  if (!args.input.empty() || !args.doc_id.empty()) {
    if (args.input.empty()) throw input_error("--doc-id", "needs --input docs.jsonl");
    if (args.doc_id.empty()) throw input_error("--input", "with --explore needs --doc-id ID");
    std::vector<std::string> texts, ids;
    read_documents(args.input, texts, ids);
    const auto found = std::find(ids.begin(), ids.end(), args.doc_id);
    if (found == ids.end())
      throw input_error(args.input, "no document with id '" + args.doc_id + "'");
    text = texts[static_cast<size_t>(found - ids.begin())];
  }
  if (text.empty())
    throw input_error(args.document.empty() ? "--text" : args.document, "empty text");
  require_valid_utf8(text, args.document.empty() ? "--text" : args.document);
  const LoadedModel model = load_model_folder(args.model);
  const auto tokenizer = load_tokenizer(args.model);
  EncodeOptions options = encode_options(args, model);
  const EncoderConfig& config = model.encoder->config();
  // A model with a position table reads at most that many tokens: cut there, and say so.
  options.max_length = input_limit(config, options.max_length);
  ExplorerOptions explorer;
  explorer.query = args.query;
  explorer.model_name = fs::absolute(args.model).lexically_normal().string();
  explorer.row_layers = parse_layers(args.layers, config.num_layers);
  Progress progress("lmk attention", static_cast<uint64_t>(config.num_layers), "layers");
  explorer.on_layer = [&](int64_t done) { progress.update(static_cast<uint64_t>(done)); };
  const DocumentAttention d = explore_attention(model, *tokenizer, text, options, explorer);
  progress.finish();
  if (d.truncated)
    std::cerr << "lmk attention: the document has " << d.content_tokens << " tokens; truncated to "
              << d.length() << " model inputs (--max-length " << options.max_length << ")\n";
  write_document_attention(args.explore, d);
  std::cerr << "lmk attention: " << d.length() << " tokens, " << d.pooling_positions.size() << " "
            << d.pooling << " pooling tokens, " << d.layers << " layers x " << d.heads
            << " heads -> " << args.explore << "\n";
  return 0;
}

int run_attention(const EncodeArgs& args) {
  if (!args.explore.empty()) return run_explore(args);
  if (args.input.empty()) throw input_error("--input", "required (docs.jsonl)");
  const LoadedModel model = load_model_folder(args.model);
  const auto tokenizer = load_tokenizer(args.model);
  const EncodeOptions options = encode_options(args, model);
  if (args.bins <= 0) throw input_error("--bins", "must be > 0");
  std::vector<std::string> texts, ids;
  report_empty_texts("lmk attention", read_documents(args.input, texts, ids), texts.size());
  AttentionProfileOptions profile_options;
  profile_options.per_head = args.per_head;
  profile_options.layers = parse_layers(args.layers, model.encoder->config().num_layers);
  const auto profiles = attention_profiles(model, *tokenizer, texts, options, profile_options);
  std::string csv = "doc_id,length,layer,head,bin,start,end,weight\n";
  for (const auto& p : profiles) {
    const auto binned = p.binned(args.bins);
    const std::string head = p.head < 0 ? "mean" : std::to_string(p.head);
    for (int b = 0; b < args.bins; ++b) {
      csv += ids[p.document] + "," + std::to_string(p.length) + "," + std::to_string(p.layer) +
             "," + head + "," + std::to_string(b) + "," + std::to_string(b * p.length / args.bins) +
             "," + std::to_string((b + 1) * p.length / args.bins) + "," +
             std::to_string(binned[static_cast<size_t>(b)]) + "\n";
    }
  }
  if (!args.db.empty()) {
    // The mean over the documents per (layer, head), bins as fractions of each length: a run
    // of kind "attention", the rows the workbench's heatmap reads.
    std::map<std::pair<int64_t, int64_t>, std::vector<double>> mean;
    std::map<std::pair<int64_t, int64_t>, size_t> documents;
    for (const auto& p : profiles) {
      auto& bins = mean[{p.layer, p.head}];
      bins.resize(static_cast<size_t>(args.bins), 0.0);
      const auto binned = p.binned(args.bins);
      for (size_t b = 0; b < binned.size(); ++b) bins[b] += binned[b];
      ++documents[{p.layer, p.head}];
    }
    std::vector<AttentionProfileRow> rows;
    const std::string dataset = fs::path(args.input).stem().string();
    for (const auto& [key, bins] : mean) {
      for (int b = 0; b < args.bins; ++b) {
        rows.push_back({dataset, "all", key.first, key.second, b,
                        static_cast<double>(b) / args.bins, static_cast<double>(b + 1) / args.bins,
                        bins[static_cast<size_t>(b)] / static_cast<double>(documents[key])});
      }
    }
    ResultsStore store(args.db);
    RunStart start;
    start.fresh.kind = "attention";
    start.fresh.name = fs::path(args.model).lexically_normal().filename().string() + "-" +
                       pooling_name(options.pooling) + "-" + dataset;
    start.fresh.config = {{"model", fs::absolute(args.model).lexically_normal().string()},
                          {"input", fs::absolute(args.input).lexically_normal().string()},
                          {"layers", args.layers},
                          {"per_head", args.per_head},
                          {"max_length", args.max_length}};
    start.fresh.config.update(plan_pooling(options, model).record());
    start.experiment = args.experiment;
    start.device = args.device;
    RecordedRun run(store, start);
    store.add_attention_profile(run.id(), rows);
    run.finish();
    std::cerr << "lmk: attention profiles stored as run " << run.id() << " in " << args.db << "\n";
  }
  if (args.out.empty() || args.out == "-") {
    if (args.db.empty()) std::fwrite(csv.data(), 1, csv.size(), stdout);
  } else {
    AtomicFile out(args.out);
    out.write(csv);
    out.commit();
    std::cerr << "lmk: wrote the attention (layers: " << args.layers << ") of "
              << pooling_name(options.pooling) << " pooling tokens for " << profiles.size()
              << " documents in " << args.bins << " bins to " << args.out << "\n";
  }
  return 0;
}

}  // namespace

Runner add_model_command(CLI::App& app) {
  auto* model = app.add_subcommand("model", "Create model folders");
  model->require_subcommand(1);
  auto args = std::make_shared<InitArgs>();
  auto* init =
      model->add_subcommand("init", "Write a randomly initialized model as a Hugging Face folder");
  init->add_option("--preset", args->preset, "tiny | small | base (ModernBERT-base shape)")
      ->capture_default_str();
  init->add_option("--tokenizer", args->tokenizer, "tokenizer.json, .model or folder")->required();
  init->add_option("--out", args->out, "output folder")->required();
  init->add_option("--pooling", args->pooling, "pooling recorded in the folder")
      ->capture_default_str();
  init->add_option("--seed", args->seed, "initialization seed")->check(seed_range());
  add_shape_options(*init, args->shape);
  auto merge_args = std::make_shared<MergeArgs>();
  auto* merge = model->add_subcommand(
      "merge-lora", "Merge a PEFT LoRA adapter folder into its base model, as a new folder");
  merge->add_option("--adapter", merge_args->adapter, "adapter folder (adapter_config.json)")
      ->required();
  merge->add_option("--base", merge_args->base,
                    "base model folder (default: the adapter's base_model_name_or_path)");
  merge->add_option("--out", merge_args->out, "output folder")->required();
  return [args, merge_args, merge] {
    return merge->parsed() ? run_merge_lora(*merge_args) : run_init(*args);
  };
}

Runner add_inspect_command(CLI::App& app) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("inspect", "Describe a model folder");
  cmd->add_option("DIR", *dir, "model folder")->required();
  return [dir] { return run_inspect(*dir); };
}

Runner add_attention_command(CLI::App& app) {
  auto args = std::make_shared<EncodeArgs>();
  auto* cmd = app.add_subcommand(
      "attention",
      "Attention of the pooling tokens over positions (final layer by default), binned (CSV)");
  cmd->add_option("--model", args->model, "model folder")->required();
  cmd->add_option("--pooling", args->pooling,
                  "cls (queries: position 0) | lmk (the landmarks) | multicls (the CLS tokens)");
  cmd->add_option("--granularity", args->granularity, "landmark / MultiCLS granularity")
      ->check(whole(1, 1000000));
  cmd->add_option("--input", args->input, "docs.jsonl (required without --explore)");
  cmd->add_option("--bins", args->bins, "position bins per document")
      ->capture_default_str()
      ->check(whole(1, 1000000));
  cmd->add_option("--layers", args->layers,
                  "last | all | comma-separated layer indices (--explore: the layers whose "
                  "per-token rows are kept; every layer's profiles are)")
      ->capture_default_str();
  cmd->add_option("--explore", args->explore,
                  "write one document's attention for the workbench's explorer to this file: "
                  "every layer and head, each pooling token's row, the tokens and their text");
  cmd->add_option("--document", args->document, "--explore: this file is the document");
  cmd->add_option("--text", args->text, "--explore: this text is the document");
  cmd->add_option("--doc-id", args->doc_id, "--explore: the document of --input with this id");
  cmd->add_option("--query", args->query,
                  "--explore: a query; its similarity to each pooling token's final state");
  cmd->add_flag("--per-head", args->per_head, "one profile per head besides the mean");
  cmd->add_option("--db", args->db,
                  "store the mean over the documents in this results database (no CSV on stdout)");
  cmd->add_option("--experiment", args->experiment, "experiment name in the database")
      ->capture_default_str();
  add_device_option(cmd, args->device, "cpu | cuda | cuda:N (bf16 autocast on CUDA)")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "CSV file (default: stdout)");
  cmd->add_option("--max-length", args->max_length,
                  "truncate inputs to N tokens (0: no limit; a sentence-transformers folder: its "
                  "max_seq_length)")
      ->check(whole(0));
  return [args] { return run_attention(*args); };
}

Runner add_encode_command(CLI::App& app) {
  auto args = std::make_shared<EncodeArgs>();
  auto* cmd =
      app.add_subcommand("encode", "Embed texts (jsonl with \"text\") into a .npy float32 [N, H]");
  cmd->add_option("--model", args->model, "model folder")->required();
  cmd->add_option(
      "--pooling", args->pooling,
      "cls | mean | lmk | multicls | latent | last | mean_every_k (default: the folder's)");
  cmd->add_option("--granularity", args->granularity, "landmark / MultiCLS / every-k granularity")
      ->check(whole(1, 1000000));
  cmd->add_option("--input", args->input, "docs.jsonl")->required();
  cmd->add_option("--out", args->out, "emb.npy (ids go to emb.ids.txt)")->required();
  cmd->add_option("--max-length", args->max_length,
                  "truncate inputs to N tokens (0: no limit; a sentence-transformers folder: its "
                  "max_seq_length)")
      ->check(whole(0));
  cmd->add_option("--batch-size", args->batch_size, "texts per batch")
      ->capture_default_str()
      ->check(whole(1, 1000000));
  add_device_option(cmd, args->device, "cpu | cuda | cuda:N (bf16 autocast on CUDA)")
      ->capture_default_str();
  cmd->add_flag("--no-normalize", args->no_normalize, "do not L2-normalize");
  return [args] { return run_encode(*args); };
}

}  // namespace lmk::cli
