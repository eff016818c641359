#include "engine/eval/classify.h"

#include <ATen/ATen.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/data/jsonl.h"
#include "core/util/error.h"
#include "core/util/json_util.h"

namespace lmk {

namespace {

std::vector<std::vector<float>> rows_of(const at::Tensor& embeddings) {
  const at::Tensor e = embeddings.contiguous();
  std::vector<std::vector<float>> rows(static_cast<size_t>(e.size(0)));
  for (int64_t r = 0; r < e.size(0); ++r)
    rows[static_cast<size_t>(r)].assign(e[r].data_ptr<float>(), e[r].data_ptr<float>() + e.size(1));
  return rows;
}

}  // namespace

LabelledTexts read_labelled(const std::string& path) {
  using json = nlohmann::json;
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

ClassificationEvaluation evaluate_classification(const LoadedModel& model,
                                                 const Tokenizer& tokenizer,
                                                 const LabelledTexts& train,
                                                 const LabelledTexts& test,
                                                 const EncodeOptions& options) {
  return evaluate_classification(model, tokenizer, train, test, options,
                                 plan_pooling(options, model));
}

ClassificationEvaluation evaluate_classification(
    const LoadedModel& model, const Tokenizer& tokenizer, const LabelledTexts& train,
    const LabelledTexts& test, const EncodeOptions& options, const PoolingPlan& plan) {
  if (train.texts.empty() || test.texts.empty())
    throw InputError("classification: needs train and test texts");
  ClassificationEvaluation out;
  out.train = train.texts.size();
  out.test = test.texts.size();
  std::map<std::string, int> index;
  for (const std::string& label : std::set<std::string>(train.labels.begin(), train.labels.end()))
    index.emplace(label, static_cast<int>(index.size()));
  for (const std::string& label : test.labels) index.emplace(label, static_cast<int>(index.size()));
  out.labels.resize(index.size());
  for (const auto& [label, i] : index) out.labels[static_cast<size_t>(i)] = label;
  auto classes_of = [&](const std::vector<std::string>& labels) {
    std::vector<int> y;
    for (const std::string& label : labels) y.push_back(index.at(label));
    return y;
  };
  auto start = std::chrono::steady_clock::now();
  const auto x_train = rows_of(encode_texts(model, tokenizer, train.texts, options, plan));
  const auto x_test = rows_of(encode_texts(model, tokenizer, test.texts, options, plan));
  out.encode_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  start = std::chrono::steady_clock::now();
  const int classes = static_cast<int>(index.size());
  const LinearClassifier classifier =
      train_linear_classifier(x_train, classes_of(train.labels), classes);
  out.truth = classes_of(test.labels);
  out.predicted = predict(classifier, x_test);
  out.report = macro_f1(out.truth, out.predicted, classes);
  out.fit_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace lmk
