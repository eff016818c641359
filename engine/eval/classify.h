#pragma once

// Document classification with a frozen encoder: embeddings of the train texts fit a linear
// classifier (core/eval/linear_classifier.h), which labels the test texts; accuracy and macro-F1.

#include <string>
#include <vector>

#include "core/eval/linear_classifier.h"
#include "engine/embed/embed.h"

namespace lmk {

struct LabelledTexts {
  std::vector<std::string> texts, labels;
  std::vector<std::string> ids;  // per text: its "id", else its count among the texts from 1
};

// Reads a classification split: jsonl lines with "text" and "label" (a string or a number) and an
// optional "id" (else the text's count from 1, blank lines not counted). An InputError names the
// file and line of a missing field or a repeated id, and the file when it holds no text.
LabelledTexts read_labelled(const std::string& path);

struct ClassificationEvaluation {
  ClassificationReport report;
  std::vector<std::string> labels;    // class index -> label (train labels sorted, then unseen)
  std::vector<int> truth, predicted;  // per test text, class indices: the per-item results
  size_t train = 0, test = 0;
  double encode_seconds = 0, fit_seconds = 0;
};

// `plan`: the command's plan of `options` over the model (plan_pooling), passed down.
ClassificationEvaluation evaluate_classification(
    const LoadedModel& model, const Tokenizer& tokenizer, const LabelledTexts& train,
    const LabelledTexts& test, const EncodeOptions& options, const PoolingPlan& plan);
// The same with plan_pooling(options, model).
ClassificationEvaluation evaluate_classification(const LoadedModel& model,
                                                 const Tokenizer& tokenizer,
                                                 const LabelledTexts& train,
                                                 const LabelledTexts& test,
                                                 const EncodeOptions& options);

}  // namespace lmk
