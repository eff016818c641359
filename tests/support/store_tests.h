#pragma once

// What the results store's unit tests share (tests/core/store/*_test.cpp): running a body in
// several processes started together, the form of the times the store writes, a store of three
// runs that the filter language and the runs table both read, and a store of four runs that the
// reads across runs read.

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "core/store/results_store.h"
#include "tests/support/test_tokenizers.h"

namespace lmk::testing {

// A time as the store writes them: ISO-8601 UTC with milliseconds.
inline bool is_iso_utc(const std::string& time) {
  static const std::regex format(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)");
  return std::regex_match(time, format);
}

// Runs body(index) in `count` child processes started together; returns their exit codes:
// 0 done, 3 "database is locked", 1 any other error (printed).
inline std::vector<int> run_children(int count, const std::function<void(int)>& body) {
  int gate[2];
  EXPECT_EQ(pipe(gate), 0);
  std::vector<pid_t> children;
  for (int index = 0; index < count; ++index) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(gate[1]);
      char byte;
      while (::read(gate[0], &byte, 1) > 0) {
      }
      int code = 0;
      try {
        body(index);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", index, e.what());
        code = std::string(e.what()).find("locked") != std::string::npos ? 3 : 1;
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  close(gate[0]);
  close(gate[1]);  // end of file: every child starts now
  std::vector<int> codes;
  for (const pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    codes.push_back(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  return codes;
}

// A store of three runs: lmk-32 and cls (evaluations of experiment alpha, cls finished, with
// results on docs and code) and "ft [x]" (training, experiment Beta).
class RunSelectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int64_t a = store_.get_or_create_experiment("alpha");
    const int64_t b = store_.get_or_create_experiment("Beta");
    lmk_ = store_.create_run(a, {"lmk-32", "eval", {{"pooling", "lmk"}, {"max_length", 512}}});
    cls_ = store_.create_run(a, {"cls", "eval", {{"pooling", "cls"}, {"max_length", 2048}}});
    train_ = store_.create_run(b, {"ft [x]", "train", {{"train", {{"pooling", "lmk"}}}}});
    store_.set_run_status(cls_, RunStatus::Finished);
    store_.add_eval_results(lmk_, {{"docs", "test", "ndcg_at_10", 0.5}});
    store_.add_eval_results(
        cls_, {{"docs", "test", "ndcg_at_10", 0.25}, {"code", "test", "ndcg_at_10", 0.75}});
  }

  std::vector<int64_t> select(const std::string& text, const std::string& status = "",
                              int64_t experiment = -1) const {
    return store_.selected_runs({text, status, experiment});
  }

  TempDir dir_;
  ResultsStore store_{(dir_.path() / "r.db").string()};
  int64_t lmk_ = 0, cls_ = 0, train_ = 0;
};

// Reads across runs (store_runs, store_metrics, store_evaluations, store_attention tests): an
// evaluation, a training and a bare run of experiment "study" / "other", a pretraining run, each
// evaluated with curve, label and dev groups, and attention profiles of the evaluation.
class RunReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int64_t e = store_.get_or_create_experiment("study");
    const int64_t f = store_.get_or_create_experiment("other");
    eval_ = store_.create_run(e, {"lmk-eval", "eval", {{"pooling", "lmk"}, {"max_length", 512}}});
    train_ = store_.create_run(
        e, {"ft", "train", {{"train", {{"pooling", "mean"}, {"passage_max_length", 128}}}}});
    bare_ = store_.create_run(f, {"bare", "eval", nlohmann::json::object()});
    pretrain_ = store_.create_run(f, {"mlm", "pretrain", {{"train", {{"max_length", 64}}}}});
    for (const int64_t run : {eval_, train_, bare_})
      store_.add_eval_results(run, {{"docs", "test", "ndcg_at_10", 0.5, "all", ""},
                                    {"docs", "test", "ndcg_at_10", 0.4, "length", "256"},
                                    {"docs", "test", "ndcg_at_10", 0.3, "position", "0-10%"},
                                    {"docs", "test", "ndcg_at_10", 0.2, "position@256", "0-10%"},
                                    {"docs", "test", "f1", 0.1, "label", "a"},
                                    {"docs", "dev", "recall_at_10", 0.9, "all", ""}});
    store_.add_attention_profile(eval_, {{"docs", "256", 1, -1, 0, 0, 0.5, 0.75},
                                         {"docs", "256", 1, -1, 1, 0.5, 1, 0.25},
                                         {"docs", "all", 0, 2, 0, 0, 1, 1}});
    store_.set_run_config(eval_, {{"pooling", "lmk"}, {"max_length", 512}, {"model", "/m/a"}});
  }

  TempDir dir_;
  ResultsStore store_{(dir_.path() / "r.db").string()};
  int64_t eval_ = 0, train_ = 0, bare_ = 0, pretrain_ = 0;
};

}  // namespace lmk::testing
