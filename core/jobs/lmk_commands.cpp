#include "core/jobs/lmk_commands.h"

#include <type_traits>

#include "core/util/settings.h"
#include "core/util/toml_config.h"

namespace lmk {

namespace {

using Args = std::vector<std::string>;

std::string text(int64_t value) {
  return std::to_string(value);
}

std::string joined(const std::vector<int64_t>& values) {
  std::string out;
  for (int64_t v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

// Numbers as the TOML files have them: the shortest text that reads back (toml_number).
std::string joined(const std::vector<double>& values) {
  std::string out;
  for (double v : values) out += (out.empty() ? "" : ",") + toml_number(v);
  return out;
}

void add(Args& args, const char* flag, const std::string& value) {
  args.insert(args.end(), {flag, value});
}

const char* const kWrittenBy = "# written by lmk study (its folder is this step's inputs)\n";

}  // namespace

Args RenderCorpusRequest::to_argv() const {
  Args args = {"data"};
  if (source == "manpages") {
    args.push_back("manpages");
  } else {
    args.push_back("docs");
    add(args, "--source", source);
  }
  add(args, "--out", out);
  add(args, "--limit", text(limit));
  return args;
}

Args TokenizerTrainRequest::to_argv() const {
  Args args = {"tokenizer-train"};
  for (const std::string& input : inputs) add(args, "--input", input);
  add(args, "--vocab-size", text(vocab_size));
  add(args, "--out", out);
  return args;
}

Args CorpusDataRequest::to_argv() const {
  Args args = {"data", "corpus"};
  add(args, "--source", source);
  add(args, "--out", out);
  add(args, "--seed", text(seed));
  add(args, "--name", name);
  add(args, "--splits", splits);
  if (stratified) args.push_back("--stratified");
  add(args, "--queries-per-document", text(queries_per_document));
  if (!lengths.empty()) {
    add(args, "--lengths", joined(lengths));
    add(args, "--tokenizer", tokenizer);
    add(args, "--windows-per-document", text(windows_per_document));
    add(args, "--max-windows", text(max_windows));
  }
  return args;
}

Args PairsRequest::to_argv() const {
  Args args = {"data", "pairs"};
  add(args, "--source", source);
  add(args, "--out", out);
  add(args, "--seed", text(seed));
  add(args, "--negatives", text(negatives));
  add(args, "--examples-per-document", text(examples_per_document));
  return args;
}

Args StatsRequest::to_argv() const {
  Args args = {"data", "stats", folder};
  add(args, "--tokenizer", tokenizer);
  add(args, "--db", db);
  add(args, "--name", name);
  return args;
}

Args CodeDataRequest::to_argv() const {
  Args args = {"data", "code"};
  add(args, "--out", out);
  add(args, "--seed", text(seed));
  add(args, "--splits", splits);
  return args;
}

Args SyntheticDataRequest::to_argv() const {
  Args args = {"data", task};
  add(args, "--tokenizer", tokenizer);
  if (!pairs_out.empty())
    add(args, "--pairs-out", pairs_out);
  else
    add(args, "--out", out);
  add(args, "--lengths", joined(lengths));
  add(args, "--queries", text(queries));
  add(args, "--documents", text(documents));
  if (negatives > 0) add(args, "--negatives", text(negatives));
  add(args, "--seed", text(seed));
  if (!depths.empty()) add(args, "--depths", joined(depths));
  if (!haystack.empty()) add(args, "--haystack", haystack);
  if (keys > 0) add(args, "--keys", text(keys));
  if (values > 0) add(args, "--values", text(values));
  if (queries_per_document > 0) add(args, "--queries-per-document", text(queries_per_document));
  if (!name.empty()) add(args, "--name", name);
  return args;
}

Args ModelInitRequest::to_argv() const {
  Args args = {"model", "init"};
  add(args, "--preset", preset);
  add(args, "--tokenizer", tokenizer);
  add(args, "--out", out);
  add(args, "--seed", text(seed));
  add(args, "--pooling", pooling);
  if (!architecture.empty()) add(args, "--architecture", architecture);
  if (hidden_size > 0) add(args, "--hidden-size", text(hidden_size));
  if (layers > 0) add(args, "--layers", text(layers));
  if (heads > 0) add(args, "--heads", text(heads));
  if (intermediate_size > 0) add(args, "--intermediate-size", text(intermediate_size));
  if (local_window >= 0) add(args, "--local-window", text(local_window));
  if (rope_theta > 0) add(args, "--rope-theta", toml_number(rope_theta));
  if (no_rope) args.push_back("--no-rope");
  if (kv_heads > 0) add(args, "--kv-heads", text(kv_heads));
  if (bidirectional) args.push_back("--bidirectional");
  return args;
}

Args FinetuneRequest::to_argv() const {
  return {"train", "--config", config_file, "--auto-resume"};
}

std::string FinetuneRequest::config_toml() const {
  return kWrittenBy + settings_toml(config, keys, contrastive_settings(), training_settings());
}

Args PretrainRequest::to_argv() const {
  return {"pretrain", "--config", config_file, "--auto-resume"};
}

std::string PretrainRequest::config_toml() const {
  return kWrittenBy + settings_toml(config, keys, pretrain_settings(), training_settings());
}

Args EvalRequest::to_argv() const {
  Args args = {"eval"};
  add(args, "--model", model);
  add(args, "--dataset", dataset);
  add(args, "--pooling", pooling);
  add(args, "--db", db);
  add(args, "--experiment", experiment);
  add(args, "--run-name", run_name);
  add(args, "--attention-docs", text(attention_docs));
  add(args, "--query-max-length", text(query_max_length));
  if (granularity > 0) add(args, "--granularity", text(granularity));
  if (max_length > 0) add(args, "--max-length", text(max_length));
  if (!split.empty()) add(args, "--split", split);
  if (device != "cpu") add(args, "--device", device);
  return args;
}

Args lmk_argv(const LmkCommand& command) {
  return std::visit([](const auto& request) { return request.to_argv(); }, command);
}

std::vector<std::pair<std::string, std::string>> lmk_command_files(const LmkCommand& command) {
  return std::visit(
      [](const auto& request) -> std::vector<std::pair<std::string, std::string>> {
        using R = std::decay_t<decltype(request)>;
        if constexpr (std::is_same_v<R, FinetuneRequest> || std::is_same_v<R, PretrainRequest>)
          return {{request.config_file, request.config_toml()}};
        return {};
      },
      command);
}

}  // namespace lmk
