#pragma once

// What the results store's unit tests share (tests/core/store/*_test.cpp): running a body in
// several processes started together, and a store of three runs that the filter language and
// the runs table both read.

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "core/store/results_store.h"
#include "tests/support/test_tokenizers.h"

namespace lmk::testing {

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

}  // namespace lmk::testing
