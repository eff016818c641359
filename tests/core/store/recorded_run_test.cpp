// A command's run from start to end (core/store/recorded_run.h) in a real store: created,
// adopted or continued; RUNNING with this process; ended by the command, by its destructor, or,
// for a process that died without a word, by the next reader (end_lost_runs).
#include "core/store/recorded_run.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "core/util/error.h"
#include "core/util/process.h"
#include "core/util/runtime.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::TempDir;

RunStart eval_start(const std::string& name) {
  RunStart start;
  start.fresh.kind = "eval";
  start.fresh.name = name;
  start.fresh.config = {{"pooling", "lmk"}};
  start.experiment = "e";
  start.device = "cpu";
  return start;
}

TEST(RecordedRunTest, RunsWithThisProcessAndEndsAsTheCommandSays) {
  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  int64_t finished = 0, stopped = 0, failed = 0;
  {
    RecordedRun run(store, eval_start("a"));
    const RunRecord record = store.get_run(run.id());
    EXPECT_EQ(record.status, RunStatus::Running);
    EXPECT_EQ(record.pid, ::getpid());
    EXPECT_EQ(record.process_start, process_start_time(::getpid()));
    EXPECT_EQ(record.host, host_name());
    EXPECT_EQ(record.device, "cpu");
    EXPECT_FALSE(run.continued());
    run.finish();
    finished = run.id();
  }
  {
    RecordedRun run(store, eval_start("b"));
    run.stop("stopped by SIGTERM at step 3");
    stopped = run.id();
  }
  {
    RecordedRun run(store, eval_start("c"));
    run.fail("bad input");
    failed = run.id();
  }
  EXPECT_EQ(store.get_run(finished).status, RunStatus::Finished);
  EXPECT_EQ(store.get_run(stopped).status, RunStatus::Killed);
  EXPECT_EQ(store.get_run(stopped).error_text, "stopped by SIGTERM at step 3");
  EXPECT_EQ(store.get_run(failed).status, RunStatus::Failed);
  EXPECT_EQ(store.get_run(failed).error_text, "bad input");
}

// A command that ends without saying how (an exception past its handlers) does not leave its run
// RUNNING: the destructor ends it FAILED.
TEST(RecordedRunTest, ARunLeftUnendedIsFailedByItsEnd) {
  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  int64_t id = 0;
  try {
    RecordedRun run(store, eval_start("a"));
    id = run.id();
    throw std::runtime_error("out of the blue");
  } catch (const std::runtime_error&) {
  }
  const RunRecord record = store.get_run(id);
  EXPECT_EQ(record.status, RunStatus::Failed);
  EXPECT_NE(record.error_text.find("without recording how"), std::string::npos)
      << record.error_text;
}

// Adopted ($LMK_RUN_ID): the job system's run, kind checked, config replaced; continued (a
// resumed training): the checkpoint's run while the store holds it, else a new one.
TEST(RecordedRunTest, AdoptsOrContinuesOrCreates) {
  TempDir dir;
  ResultsStore store((dir.path() / "r.db").string());
  const int64_t scheduled =
      store.create_run(store.get_or_create_experiment("e"), {"job", "eval", {{"x", 1}}});
  RunStart adopt = eval_start("ignored");
  adopt.adopted = scheduled;
  {
    RecordedRun run(store, adopt);
    EXPECT_EQ(run.id(), scheduled);
    EXPECT_TRUE(run.continued());
    run.finish();
  }
  EXPECT_EQ(store.get_run(scheduled).name, "job");
  EXPECT_EQ(store.get_run(scheduled).config, (nlohmann::json{{"pooling", "lmk"}}));
  RunStart wrong_kind = eval_start("x");
  wrong_kind.fresh.kind = "train";
  wrong_kind.adopted = scheduled;
  EXPECT_THROW({ const RecordedRun run(store, wrong_kind); }, InputError);
  RunStart resume = eval_start("y");
  resume.resumed = scheduled;
  {
    RecordedRun run(store, resume);
    EXPECT_EQ(run.id(), scheduled);
    run.finish();
  }
  resume.resumed = 999;  // a checkpoint of another store
  RecordedRun fresh(store, resume);
  EXPECT_NE(fresh.id(), 999);
  EXPECT_FALSE(fresh.continued());
  fresh.finish();
}

// A process killed outright runs no destructor: its run would stay RUNNING for ever. The next
// reader of this host ends it, saying so; a live process's run (this one's) stays.
TEST(RecordedRunTest, ARunWhoseProcessDiedIsEndedByTheNextReader) {
  TempDir dir;
  const std::string path = (dir.path() / "r.db").string();
  ResultsStore store(path);
  RecordedRun live(store, eval_start("live"));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ResultsStore mine(path);
    new RecordedRun(mine, eval_start("killed"));  // never ended: as a SIGKILL leaves it
    std::_Exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  RunFilter filter;
  filter.status = RunStatus::Running;
  ASSERT_EQ(store.list_runs(filter).size(), 2u);
  EXPECT_EQ(store.end_lost_runs(), 1u);
  EXPECT_EQ(store.end_lost_runs(), 0u) << "once";
  for (const RunRecord& run : store.list_runs({})) {
    if (run.name == "killed") {
      EXPECT_EQ(run.status, RunStatus::Failed);
      EXPECT_NE(run.error_text.find("pid " + std::to_string(child)), std::string::npos)
          << run.error_text;
      EXPECT_NE(run.error_text.find("ended without recording how"), std::string::npos);
    } else {
      EXPECT_EQ(run.status, RunStatus::Running) << run.name;
    }
  }
  live.finish();
}

}  // namespace
}  // namespace lmk
