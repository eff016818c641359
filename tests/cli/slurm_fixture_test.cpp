// The real-Slurm test fixture (tests/support/slurm_cluster.{sh,h}) works: a single-node
// cluster starts in a temporary folder, runs a batch job to COMPLETED (and a failing one to
// FAILED), cancels a running job and its processes, runs a 2-task srun step inside a batch job
// with the variables distributed training reads, and leaves nothing running when stopped.
// Also pins what sacct does without an accounting database (docs/ARCHITECTURE.md, "Slurm in
// tests"): plain sacct fails, `sacct -c` reads finished jobs from jobcomp/filetxt.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/support/slurm_cluster.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::SlurmCluster;

const char* const kEnded = "COMPLETED FAILED CANCELLED TIMEOUT NODE_FAIL OUT_OF_MEMORY PREEMPTED";

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// A process that exists and is not a zombie.
bool running(const std::string& pid) {
  const std::string stat = slurp("/proc/" + pid + "/stat");
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

// Waits up to `seconds` for `done()`.
template <typename F>
bool eventually(F done, int seconds = 10) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

class SlurmFixtureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = SlurmCluster::unavailable();
    if (!why.empty()) GTEST_SKIP() << why;
    cluster_ = std::make_unique<SlurmCluster>();  // throws with the daemons' log tails
  }

  // Submits `sleep 60` writing its pid to PIDFILE, waits until it runs; returns {id, pid}.
  std::pair<std::string, std::string> start_sleeper(const std::string& pidfile) {
    const std::string id =
        cluster_->submit("-o %j.out --wrap 'echo $$ > " + pidfile + "; exec sleep 60'");
    EXPECT_EQ(cluster_->wait_for(id, std::string("RUNNING ") + kEnded), "RUNNING")
        << cluster_->logs();
    const fs::path file = cluster_->work() / pidfile;
    EXPECT_TRUE(eventually([&] { return slurp(file).find('\n') != std::string::npos; }));
    std::string pid = slurp(file);
    pid.erase(pid.find_last_not_of("\n") + 1);
    return {id, pid};
  }

  std::unique_ptr<SlurmCluster> cluster_;
};

TEST_F(SlurmFixtureTest, BatchJobsFinishAndSacctReadsJobCompletions) {
  std::cout << "cluster up in " << cluster_->start_seconds() << " s\n";
  const std::string ok = cluster_->submit("-o %j.out --wrap 'echo hi'");
  const std::string failing = cluster_->submit("-o %j.out --wrap 'exit 3'");
  EXPECT_EQ(cluster_->wait_for(ok, kEnded), "COMPLETED") << cluster_->logs();
  EXPECT_EQ(cluster_->wait_for(failing, kEnded), "FAILED") << cluster_->logs();
  EXPECT_EQ(slurp(cluster_->work() / (ok + ".out")), "hi\n");
  // Finished jobs leave the default squeue listing (pending, running, completing).
  EXPECT_EQ(cluster_->run("squeue -h -o %i").output, "");

  // No accounting database: plain sacct refuses ...
  const auto plain = cluster_->run("sacct -n -P -o JobID,State -j " + ok);
  EXPECT_NE(plain.code, 0);
  EXPECT_NE(plain.output.find("accounting storage is disabled"), std::string::npos) << plain.output;
  // ... and `sacct -c` reads the job completion file (finished jobs only).
  std::string completions;
  EXPECT_TRUE(eventually([&] {
    completions =
        cluster_->run("sacct -c -n -P -o JobID,State,ExitCode -j " + ok + "," + failing).output;
    return lines(completions).size() == 2;
  })) << completions;
  auto records = lines(completions);  // in the order the jobs ended
  std::sort(records.begin(), records.end());
  EXPECT_EQ(records, (std::vector<std::string>{ok + "|COMPLETED|0:0", failing + "|FAILED|3:0"}));
}

TEST_F(SlurmFixtureTest, CancelEndsARunningJob) {
  const auto [id, pid] = start_sleeper("sleeper.pid");
  ASSERT_TRUE(running(pid)) << pid;
  const auto r = cluster_->run("scancel " + id);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_EQ(cluster_->wait_for(id, kEnded), "CANCELLED") << cluster_->logs();
  EXPECT_TRUE(eventually([&] { return !running(pid); })) << "sleep " << pid << " still runs";
  std::string completions;
  EXPECT_TRUE(eventually([&] {
    completions = cluster_->run("sacct -c -n -P -o JobID,State -j " + id).output;
    return !completions.empty();
  }));
  EXPECT_EQ(completions, id + "|CANCELLED\n");
}

TEST_F(SlurmFixtureTest, TwoTaskSrunStepSeesTheDistributedVariables) {
  std::ofstream(cluster_->work() / "two_tasks.sh")
      << "#!/bin/bash\nsrun -n 2 bash -c 'echo $SLURM_PROCID $SLURM_NTASKS $SLURM_JOB_NODELIST'\n";
  const std::string id = cluster_->submit("-n 2 -o %j.out two_tasks.sh");
  EXPECT_EQ(cluster_->wait_for(id, kEnded), "COMPLETED") << cluster_->logs();
  std::string host = testing::run_shell("hostname -s").output;
  host.erase(host.find_last_not_of("\n") + 1);
  auto out = lines(slurp(cluster_->work() / (id + ".out")));
  std::sort(out.begin(), out.end());
  EXPECT_EQ(out, (std::vector<std::string>{"0 2 " + host, "1 2 " + host}));
}

TEST_F(SlurmFixtureTest, StopLeavesNothingRunning) {
  const auto [id, pid] = start_sleeper("sleeper.pid");
  std::vector<std::string> daemons;
  for (const char* name : {"munged", "slurmctld", "slurmd"}) {
    std::string p = slurp(cluster_->dir() / (std::string(name) + ".pid"));
    p.erase(p.find_last_not_of("\n") + 1);
    ASSERT_FALSE(p.empty()) << name;
    ASSERT_TRUE(running(p)) << name;
    daemons.push_back(p);
  }
  const auto stopped = cluster_->stop();
  EXPECT_EQ(stopped.code, 0) << stopped.output;
  for (const auto& p : daemons) EXPECT_FALSE(running(p)) << "daemon " << p;
  EXPECT_FALSE(running(pid)) << "job process " << pid;
  const auto status =
      testing::run_shell(std::string(LMK_SOURCE_DIR) + "/tests/support/slurm_cluster.sh status " +
                         cluster_->dir().string());
  EXPECT_EQ(status.code, 1);
  EXPECT_EQ(status.output, "stopped\n");
}

}  // namespace
}  // namespace lmk
