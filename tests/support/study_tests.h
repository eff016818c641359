#pragma once

// What the study's unit tests share (tests/core/jobs/study*_test.cpp): a base study config with
// a micro profile, and lookups into a plan.

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "core/jobs/study.h"
#include "core/util/error.h"

namespace lmk::testing {

// A study of the built-in corpus: tiny model, three poolings, documents and passkey.
inline const char* const kBase = R"(
[study]
name = "s"
corpus = "builtin"
[model]
preset = "tiny"
[pretrain]
max_length = 128
steps = 10
[finetune]
poolings = ["cls", "lmk:fixed:16", "lmk:variable:16,32"]
steps = 5
[eval]
benchmarks = ["documents", "passkey"]
[profile.micro.pretrain]
steps = 3
[profile.micro.eval]
lengths = [128, 256]
)";

// Every option a study step's arguments or training configs read, set away from its default
// (its datasets of your own, mine/beir-a and mine/beir-b, and the corpus folder texts/ are
// planned where they are missing, with read_study_grid's `missing`).
inline const char* const kEveryOption = R"(
[study]
name = "everything"
corpus = ["manpages", "python-docs", "texts"]
corpus_limit = 7
seed = 5
device = "cuda:1"
[tokenizer]
vocab_size = 3000
[model]
preset = "tiny"
architecture = "qwen3"
hidden_size = 96
layers = 3
heads = 4
intermediate_size = 200
kv_heads = 2
rope_theta = 20000.5
rope = false
bidirectional = true
[pretrain]
max_length = 192
batch_size = 6
steps = 11
epochs = 2
learning_rate = 0.002
[finetune]
poolings = ["cls", "mean", "lmk:fixed:16", "lmk:variable:16,32"]
query_max_length = 48
passage_max_length = 160
batch_size = 12
negatives = 2
steps = 9
epochs = 3
examples_per_document = 5
synthetic_pairs = 13
learning_rate = 0.0003
temperature = 0.07
warmup_ratio = 0.2
recompute_layers = true
lora_rank = 4
lora_alpha = 8
lora_dropout = 0.1
lora_target_modules = ["q_proj", "v_proj"]
[eval]
benchmarks = ["passages", "documents", "code", "passkey", "needle", "needle-multivalue",
              "needle-multiquery", "cwe", "fwe"]
lengths = [160, 320]
needle_lengths = [160, 640]
depths = [0, 0.25, 1]
queries_per_document = 3
windows = 17
windows_per_document = 2
queries = 9
documents = 8
needle_keys = 2
needle_values = 3
needle_queries = 5
granularity = 24
attention_docs = 1
select = "dev"
datasets = ["mine/beir-a", "mine/beir-b"]
max_lengths = [100, 0]
[sweep]
"eval.granularity" = [8, 24]
"study.seed" = [5, 6]
)";

// The InputError reading `path` gives (a test failure when there is none).
inline std::string expect_input_error(const std::string& path,
                                      const std::string& profile = "full") {
  try {
    read_study_config(path, profile);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for " << path;
  return "";
}

// The plan's step with this id (throws when there is none).
inline const StudyStep& find_step(const StudyPlan& plan, const std::string& id) {
  for (const StudyStep& step : plan.steps)
    if (step.id == id) return step;
  throw std::runtime_error("no step " + id);
}

}  // namespace lmk::testing
