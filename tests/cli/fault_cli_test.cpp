// Faults injected into the real lmk, not mocks: a file-size limit (prlimit --fsize: a write
// past it fails with EFBIG, as on a full disk or quota; lmk ignores SIGXFSZ to see it), and
// libfiu's POSIX preload (fiu-run -x, Debian's fiu-utils) making fsync fail with ENOSPC, rename
// with EIO, or SQLite's pwrite with ENOSPC. What lmk promises: the command exits 2 naming the
// file and the cause; no truncated file is left under an output's final name, and one that
// was there keeps its content; the store passes PRAGMA integrity_check and keeps every run it
// held; a checkpoint that cannot be written leaves the previous one, which resumes to the
// weights of an uninterrupted run.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>

#include "core/util/file.h"
#include "tests/support/run_lmk.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::Result;
using testing::run_lmk;
using testing::TempDir;

// `WRAPPER lmk ARGS` (one thread, as the other CLI tests).
Result lmk_under(const std::string& wrapper, const std::string& args) {
  return testing::run_shell("LMK_THREADS=1 " + wrapper + " " + std::string(LMK_BINARY_DIR) +
                            "/app/lmk " + args);
}

struct Fault {
  std::string name, wrapper, cause;
};
// A full disk at the data (prlimit: `limit` bytes per file), at the flush, and a failing rename.
std::vector<Fault> output_faults(const std::string& limit) {
  return {{"a write past the file-size limit", "prlimit --fsize=" + limit, "File too large"},
          {"fsync ENOSPC", "fiu-run -x -c 'enable name=posix/io/sync/fsync,failinfo=28'",
           "No space left on device"},
          {"rename EIO", "fiu-run -x -c 'enable name=posix/io/dir/rename,failinfo=5'",
           "Input/output error"}};
}

class FaultCliTest : public ::testing::Test {
 protected:
  FaultCliTest() : tokenizer_(dir_.write("tokenizer.json", testing::word_level_json(100).dump())) {
    std::string docs, page;
    for (int d = 0; d < 200; ++d) {
      std::string text;
      for (int w = 0; w < 60; ++w) text += " w" + std::to_string((d * 7 + w * 3) % 90);
      docs += "{\"id\": \"d" + std::to_string(d) + "\", \"text\": \"" + text + "\"}\n";
      if (d < 20) page += text + "\n\n";
    }
    dir_.write("docs.jsonl", docs);
    dir_.write("page.txt", page);
    EXPECT_EQ(
        run_lmk("model init --preset tiny --tokenizer " + tokenizer_ + " --out " + path("model"))
            .code,
        0);
    EXPECT_EQ(run_lmk("data passkey --tokenizer " + tokenizer_ + " --out " + path("passkey") +
                      " --lengths 128 --documents 8 --queries 4 --seed 5")
                  .code,
              0);
  }
  std::string path(const std::string& name) const { return (dir_.path() / name).string(); }
  // Temporary files AtomicFile left in the folder (there must be none).
  std::vector<std::string> leftovers() const {
    std::vector<std::string> found;
    for (const auto& entry : fs::recursive_directory_iterator(dir_.path()))
      if (entry.path().filename().string().find(".tmp.") != std::string::npos)
        found.push_back(entry.path().string());
    return found;
  }
  // sqlite3's answer to `query` on the store `db` (a query that fails fails the test).
  static std::string sql(const std::string& db, const std::string& query) {
    const Result r = testing::run_shell("sqlite3 " + db + " '" + query + "'");
    EXPECT_EQ(r.code, 0) << r.output;
    return r.output;
  }
  // The count of per-query rows run `run` holds in `db`.
  static std::string query_rows(const std::string& db, int run) {
    return sql(db,
               "select count(*) from query_metrics join eval_queries q on q.id = query where "
               "q.run_id = " +
                   std::to_string(run));
  }
  // A passkey dataset long enough to take a second or two to encode (folder "long"), and its
  // evaluation recorded into `db` as run 1, "first".
  void long_dataset_and_a_first_run(const std::string& db) {
    ASSERT_EQ(run_lmk("data passkey --tokenizer " + tokenizer_ + " --out " + path("long") +
                      " --lengths 512 --documents 96 --queries 8 --seed 5")
                  .code,
              0);
    ASSERT_EQ(run_lmk("eval --model " + path("model") + " --dataset " + path("long") + " --db " +
                          db + " --run-name first",
                      "", testing::kQuickEnv)
                  .code,
              0);
  }
  TempDir dir_;
  std::string tokenizer_;
};

// Every output file kind -- an embeddings .npy, an explorer file, a TREC run -- under each
// fault: exit 2 naming the file and the cause, nothing under the final name (or the previous
// content, where a file was there), no temporary file left behind.
TEST_F(FaultCliTest, AFailedOutputWriteLeavesNothingHalfWrittenAndSaysWhy) {
  struct Output {
    std::string name, command, file, limit;
  } outputs[] = {
      {"embeddings",
       "encode --model " + path("model") + " --input " + path("docs.jsonl") + " --out ", "emb.npy",
       "16384"},
      {"explorer file",
       "attention --model " + path("model") + " --document " + path("page.txt") +
           " --query 'w3 w4' --layers all --explore ",
       "page.lmkattn", "4096"},
      {"TREC run",
       "eval --model " + path("model") + " --dataset " + path("passkey") + " --save-run ",
       "run.trec", "256"},
  };
  for (const Output& output : outputs) {
    // The output as it is without a fault (and big enough for the limit to bite).
    const std::string clean = path("clean-" + output.file);
    const Result ok = run_lmk(output.command + clean);
    ASSERT_EQ(ok.code, 0) << output.name << "\n" << ok.output;
    ASSERT_GT(fs::file_size(clean), std::stoull(output.limit)) << output.name;
    for (const Fault& fault : output_faults(output.limit)) {
      for (bool existed : {false, true}) {
        const std::string file = path(output.file);
        const std::string what =
            output.name + " under " + fault.name + (existed ? ", over an earlier file" : "");
        fs::remove(file);
        if (existed) dir_.write(output.file, "the earlier file");
        const Result r = lmk_under(fault.wrapper, output.command + file);
        EXPECT_EQ(r.code, 2) << what << "\n" << r.output;
        EXPECT_NE(r.output.find(file), std::string::npos) << what << ": file not named\n"
                                                          << r.output;
        EXPECT_NE(r.output.find(fault.cause), std::string::npos) << what << ": cause not said\n"
                                                                 << r.output;
        if (existed)
          EXPECT_EQ(read_file(file), "the earlier file") << what;
        else
          EXPECT_FALSE(fs::exists(file)) << what << ": a half-written file under the final name";
        EXPECT_TRUE(leftovers().empty()) << what << ": " << leftovers().front();
      }
    }
  }
}

// SQLite's writes failing with ENOSPC while an evaluation runs, from the moment its run is in
// the store (libfiu's remote control enables the fault in the running process) until it ends:
// recording its per-query rows fails; lmk exits non-zero naming the store and the cause, and
// the store passes PRAGMA integrity_check and holds the earlier run with all its rows.
TEST_F(FaultCliTest, ADiskFullWhileRecordingAnEvaluationKeepsTheStoreWhole) {
  // Long enough to encode that the fault is on well before the results are written.
  const std::string db = path("results.db");
  ASSERT_NO_FATAL_FAILURE(long_dataset_and_a_first_run(db));
  const std::string runs = sql(db, "select id, name, status from runs"), rows = query_rows(db, 1);
  ASSERT_NE(rows, "0\n");

  const std::string control = path("fiu-ctrl"), err = path("second.err");
  const pid_t child = testing::start_lmk(
      {"eval", "--model", path("model"), "--dataset", path("long"), "--db", db, "--run-name",
       "second"},
      {"LD_PRELOAD=/usr/lib/fiu/fiu_run_preload.so /usr/lib/fiu/fiu_posix_preload.so",
       "FIU_CTRL_FIFO=" + control},
      "/dev/null", err);
  bool running = false;
  for (int i = 0; i < 2000 && !running; ++i) {
    running = sql(db, "select count(*) from runs where name = \"second\"") == "1\n";
    if (!running) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(running) << read_file(err);
  const Result enabled = testing::run_shell("fiu-ctrl -f " + control +
                                            " -c 'enable name=posix/io/rw/pwrite,failinfo=28' " +
                                            std::to_string(child));
  EXPECT_EQ(enabled.code, 0) << enabled.output;
  const int code = testing::wait_lmk(child);
  const std::string log = read_file(err);
  EXPECT_NE(code, 0) << log;
  EXPECT_NE(log.find(db), std::string::npos) << "the store not named\n" << log;
  EXPECT_NE(log.find("full"), std::string::npos) << "the cause not said\n" << log;
  EXPECT_EQ(sql(db, "pragma integrity_check"), "ok\n");
  EXPECT_EQ(sql(db, "select id, name, status from runs where id = 1"),
            runs.substr(0, runs.find('\n') + 1));
  EXPECT_EQ(query_rows(db, 1), rows);
}

// Readers never stop a writer and cannot damage the store: while an evaluation records into
// it, one reader holds a read transaction open the whole time (an sqlite3 shell, BEGIN and a
// SELECT, then nothing), and `lmk results` readers are killed (SIGKILL) at random moments
// mid-read. The writer ends normally -- in WAL a writer does not wait for readers; were it to
// wait, its busy timeout (10 s, core/store/sqlite_statement.h) would end it with "database is
// locked" -- and the store passes integrity_check with both runs and all their rows.
TEST_F(FaultCliTest, ReadersHoldingATransactionOrKilledMidReadNeverStopAWriter) {
  const std::string db = path("results.db");
  ASSERT_NO_FATAL_FAILURE(long_dataset_and_a_first_run(db));
  // The reader holding its transaction, in a process group of its own.
  const pid_t holder = ::fork();
  if (holder == 0) {
    ::setpgid(0, 0);
    const std::string script =
        "(echo 'BEGIN; SELECT count(*) FROM runs;'; sleep 120) | sqlite3 " + db + " > /dev/null";
    ::execl("/bin/sh", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // its snapshot taken
  const auto started = std::chrono::steady_clock::now();
  const pid_t writer = testing::start_lmk({"eval", "--model", path("model"), "--dataset",
                                           path("long"), "--db", db, "--run-name", "second"},
                                          {}, "/dev/null", path("writer.err"));
  // Readers killed mid-read while it writes.
  unsigned seed = 7;
  int killed = 0;
  for (;;) {
    siginfo_t info = {};
    if (::waitid(P_PID, static_cast<id_t>(writer), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid != 0)
      break;
    const pid_t reader = testing::start_lmk({"results", "--db", db}, {}, "/dev/null", "/dev/null");
    std::this_thread::sleep_for(std::chrono::milliseconds(rand_r(&seed) % 40));
    killed += ::kill(reader, SIGKILL) == 0;
    testing::wait_lmk(reader);
  }
  const int code = testing::wait_lmk(writer);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(::kill(holder, 0), 0) << "the holding reader ended before the writer";
  ::kill(-holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  EXPECT_EQ(code, 0) << read_file(path("writer.err"));
  EXPECT_GT(killed, 3) << "readers were killed while it wrote";
  RecordProperty("writer_seconds", std::to_string(seconds));
  RecordProperty("readers_killed", killed);
  EXPECT_EQ(sql(db, "pragma integrity_check"), "ok\n");
  EXPECT_EQ(sql(db, "select name, status from runs order by id"),
            "first|FINISHED\nsecond|FINISHED\n");
  EXPECT_EQ(query_rows(db, 2), query_rows(db, 1)) << "both runs hold all their per-query rows";
}

// A study whose step hits a full disk (a file-size limit of 1 MB: the code corpus's jsonl is
// larger): it stops with exit 2 naming the step, the file and the cause, nothing is left under
// that file's final name; run again with room, it reuses the steps that finished and runs the
// rest, every run FINISHED in a store that passes integrity_check.
TEST_F(FaultCliTest, AStudyStoppedByAFullDiskReusesItsFinishedStepsWhenRunAgain) {
  const std::string study = path("study"), db = path("study/results.db");
  const std::string args = "study " + std::string(LMK_SOURCE_DIR) +
                           "/experiments/pooling-vs-length.toml --profile micro --dir " + study +
                           " --db " + db;
  const Result full = testing::run_shell("LMK_THREADS=2 prlimit --fsize=1000000 " +
                                         std::string(LMK_BINARY_DIR) + "/app/lmk " + args);
  ASSERT_EQ(full.code, 2) << full.output;
  EXPECT_NE(full.output.find("study step "), std::string::npos) << full.output;
  const std::string said = ": write failed: File too large";
  const size_t at = full.output.find(said);
  ASSERT_NE(at, std::string::npos) << full.output;
  const size_t start = full.output.rfind(' ', at) + 1;
  const std::string file = full.output.substr(start, at - start);
  EXPECT_FALSE(fs::exists(file)) << file << ": half written under its final name";
  EXPECT_TRUE(leftovers().empty()) << leftovers().front();

  const Result again = run_lmk(args, "", "LMK_THREADS=2");
  ASSERT_EQ(again.code, 0) << again.output;
  std::smatch counts;
  ASSERT_TRUE(
      std::regex_search(again.output, counts, std::regex("([0-9]+) steps run, ([0-9]+) reused")))
      << again.output;
  EXPECT_EQ(std::stoi(counts[1]) + std::stoi(counts[2]), 46) << counts[0];
  EXPECT_GT(std::stoi(counts[2]), 0) << "the steps done before the fault are reused";
  EXPECT_EQ(sql(db, "pragma integrity_check"), "ok\n");
  EXPECT_EQ(sql(db, "select count(*) from runs where status != \"FINISHED\""), "0\n");
}

// A checkpoint that cannot be written (the disk full at model.safetensors): the training run
// exits 2 naming the file; the previous checkpoint is untouched and resumes to the weights of
// an uninterrupted run.
TEST_F(FaultCliTest, ACheckpointThatCannotBeWrittenLeavesThePreviousOneToResumeFrom) {
  std::string pairs;
  for (int i = 0; i < 48; ++i) {
    const std::string a = "w" + std::to_string(10 + (i * 7) % 80),
                      b = "w" + std::to_string(10 + (i * 13 + 5) % 80);
    pairs += "{\"query\": \"" + a + " " + b + "\", \"pos\": [\"" + a + " w1 w2 w3 " + b + "\"]}\n";
  }
  dir_.write("pairs.jsonl", pairs);
  const auto config = [&](const std::string& out) {
    return dir_.write(out + ".toml",
                      "[model]\ninit = \"model\"\n[data]\ntrain = \"pairs.jsonl\"\n[train]\n"
                      "pooling = \"lmk\"\nbatch_size = 8\nmax_steps = 24\ncheckpoint_every = 4\n"
                      "seed = 3\n[output]\ndir = \"" +
                          out + "\"\n");
  };
  // One thread everywhere: the same sums in the same order, so equal weights are byte-equal.
  ASSERT_EQ(run_lmk("train --config " + config("full"), "", testing::kQuickEnv).code, 0);
  // Killed once its first checkpoint is there (as a preemption would).
  const std::string cfg = config("faulty");
  const pid_t child = testing::start_lmk({"train", "--config", cfg}, {}, "/dev/null", "/dev/null");
  const fs::path state = path("faulty/checkpoint/state.json");
  bool killed = false;
  for (int i = 0; i < 6000 && !killed; ++i) {
    std::error_code ec;
    if (fs::exists(state, ec)) killed = ::kill(child, SIGKILL) == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(testing::wait_lmk(child), 128 + SIGKILL) << "the run ended before it could be killed";
  const std::string saved = read_file(state.string());
  const std::string weights = read_file(path("faulty/checkpoint/model.safetensors"));
  // Resumed with the disk full: its next checkpoint cannot be written.
  const Result r = lmk_under("prlimit --fsize=65536", "train --config " + cfg + " --resume");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("checkpoint.new/model.safetensors"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("File too large"), std::string::npos) << r.output;
  EXPECT_TRUE(read_file(state.string()) == saved) << "the previous checkpoint is untouched";
  EXPECT_TRUE(read_file(path("faulty/checkpoint/model.safetensors")) == weights);
  EXPECT_TRUE(leftovers().empty()) << leftovers().front();
  // Resumed again with room: the weights of the uninterrupted run.
  const Result again = run_lmk("train --config " + cfg + " --resume", "", testing::kQuickEnv);
  ASSERT_EQ(again.code, 0) << again.output;
  EXPECT_TRUE(read_file(path("faulty/last/model.safetensors")) ==
              read_file(path("full/last/model.safetensors")))
      << "resumed weights differ from the uninterrupted run's";
}

}  // namespace
}  // namespace lmk
