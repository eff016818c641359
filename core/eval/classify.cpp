#include "core/eval/classify.h"

#include <ATen/ATen.h>

#include <chrono>
#include <map>
#include <set>

#include "core/util/error.h"

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

ClassificationEvaluation evaluate_classification(const LoadedModel& model,
                                                 const Tokenizer& tokenizer,
                                                 const LabelledTexts& train,
                                                 const LabelledTexts& test,
                                                 const EncodeOptions& options) {
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
  const auto x_train = rows_of(encode_texts(model, tokenizer, train.texts, options));
  const auto x_test = rows_of(encode_texts(model, tokenizer, test.texts, options));
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
