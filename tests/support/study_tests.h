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
