// SlurmClient (core/jobs/slurm_client.cpp): the Slurm programs that are missing (on PATH, in
// bin_dir, through the command prefix) or do not answer are named; and, against a real
// single-node cluster (tests/support/slurm_cluster.h), submit / poll / cancel / signal: jobs
// that finish, fail, are cancelled, never run (afterok on a failed job), are requeued after USR1
// and resume, run two tasks under srun, go through a command prefix; a restarted controller
// (the job completion file) and a stopped one.
#include "core/jobs/slurm.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/input_error_tests.h"
#include "tests/support/slurm_cluster.h"
#include "tests/support/slurm_tests.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

namespace fs = std::filesystem;
using testing::count;
using testing::error_of;
using testing::SlurmCluster;
using testing::TempDir;

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SlurmClientErrors, MissingProgramsAreNamed) {
  TempDir dir;
  fs::create_directories(dir.path() / "empty");
  SlurmJobSpec spec;
  spec.command = {"true"};
  SlurmOptions o;
  o.bin_dir = (dir.path() / "empty").string();
  SlurmClient client(o);
  std::string message = error_of([&] { client.submit(spec, (dir.path() / "j.sh").string()); });
  EXPECT_NE(message.find(o.bin_dir + "/sbatch not found (check [slurm] bin_dir)"),
            std::string::npos)
      << message;
  EXPECT_TRUE(fs::exists(dir.path() / "j.sh"));  // the script was written first
  message = error_of([&] { client.poll({"1"}); });
  EXPECT_NE(message.find("squeue not found"), std::string::npos) << message;

  // The prefix's program, and a Slurm program missing at the other end of the prefix.
  o.command_prefix = {(dir.path() / "no-ssh").string(), "login"};
  message = error_of([&] { SlurmClient(o).cancel("5"); });
  EXPECT_NE(message.find("no-ssh not found on PATH (the first word of [slurm] command_prefix)"),
            std::string::npos)
      << message;
  const std::string fake_ssh = dir.write("ssh", "#!/bin/sh\nshift\nexec sh -c \"$*\"\n");
  fs::permissions(fake_ssh, fs::perms::owner_all);
  o.command_prefix = {fake_ssh, "login"};
  message = error_of([&] { SlurmClient(o).cancel("5"); });
  EXPECT_NE(message.find("scancel not found through '" + fake_ssh + " login'"), std::string::npos)
      << message;

  // A command that does not answer is killed after the timeout, with what it runs under it.
  fs::create_directories(dir.path() / "slow");
  const std::string sleeper = dir.write("slow/squeue", "#!/bin/sh\nsleep 30 &\nwait\n");
  fs::permissions(sleeper, fs::perms::owner_all);
  o.command_prefix.clear();
  o.bin_dir = (dir.path() / "slow").string();
  SlurmClient slow(o);
  slow.set_timeout(0.5);
  const auto start = std::chrono::steady_clock::now();
  message = error_of([&] { slow.poll({"1"}); });
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5);
  EXPECT_NE(
      message.find(o.bin_dir + "/squeue -h -t all -j 1 -O JobID:|,State:|,Reason:|,exit_code:|: "
                               "no answer within 0.5 s (killed)"),
      std::string::npos)
      << message;
}

// ---- Against a real cluster: one for the suite (a start takes ~1.5 s). ----

const char* const kEnded = "finished failed killed";

class SlurmClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    why_not_ = SlurmCluster::unavailable();
    if (!why_not_.empty()) return;
    try {
      cluster_ = std::make_unique<SlurmCluster>();
    } catch (const std::exception& e) {
      why_not_ = e.what();
    }
  }
  static void TearDownTestSuite() { cluster_.reset(); }
  void SetUp() override {
    if (!why_not_.empty()) GTEST_SKIP() << why_not_;
  }

  static SlurmClient client(SlurmOptions options = {}) {
    return SlurmClient(std::move(options), {{"SLURM_CONF", cluster_->conf().string()}});
  }
  // A job running `sh -c SCRIPT` in work()/NAME with its log there.
  static SlurmJobSpec job(const std::string& name, const std::string& script) {
    SlurmJobSpec spec;
    spec.name = name;
    spec.work_dir = (cluster_->work() / name).string();
    spec.log_path = (cluster_->work() / name / "job.log").string();
    spec.command = {"sh", "-c", script};
    return spec;
  }
  static std::string script_path(const std::string& name) {
    return (cluster_->work() / name / "job.sh").string();
  }
  // Polls the job until its status is one of `statuses` (space-separated names) or `seconds`
  // pass; returns the last state.
  static SlurmJobState wait_for(SlurmClient& slurm, const std::string& id,
                                const std::string& statuses, int seconds = 30) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    SlurmJobState state;
    for (;;) {
      state = slurm.poll({id}).at(id);
      if ((" " + statuses + " ").find(std::string(" ") + slurm_status_name(state.status) + " ") !=
          std::string::npos)
        return state;
      if (std::chrono::steady_clock::now() > deadline) return state;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
  static bool eventually(const std::function<bool()>& done, int seconds = 20) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return true;
  }

  static std::unique_ptr<SlurmCluster> cluster_;
  static std::string why_not_;
};

std::unique_ptr<SlurmCluster> SlurmClientTest::cluster_;
std::string SlurmClientTest::why_not_;

TEST_F(SlurmClientTest, ShellJobFinishes) {
  SlurmClient slurm = client();
  // A folder, a name and a value that need quoting in #SBATCH lines and in the shell.
  SlurmJobSpec spec = job("it's a dir", "echo \"$LMK_NOTE\" > out.txt");
  spec.name = "it's a \\ #job";
  spec.env = {{"LMK_NOTE", "it's $HOME `x`"}};
  const std::string id = slurm.submit(spec, script_path("it's a dir"));
  const SlurmJobState state = wait_for(slurm, id, kEnded);
  EXPECT_EQ(state.state, "COMPLETED") << slurp(spec.log_path) << cluster_->logs();
  EXPECT_EQ(state.status, SlurmStatus::Finished);
  EXPECT_EQ(state.exit_code, 0);
  EXPECT_EQ(state.source, "squeue");  // no accounting database here
  EXPECT_EQ(slurp(fs::path(spec.work_dir) / "out.txt"), "it's $HOME `x`\n");
  EXPECT_EQ(cluster_->run("squeue -h -t all -j " + id + " -o %j").output, spec.name + "\n");
  const std::string log = slurp(spec.log_path);
  EXPECT_EQ(log.rfind("[lmk] job " + id + " attempt 0 on ", 0), 0u) << log;
  EXPECT_NE(log.find("[lmk] the command exited with 0"), std::string::npos) << log;
  // Ids no one knows: unknown, with no error.
  const auto states = slurm.poll({id, "999999"});
  EXPECT_EQ(states.at("999999").state, "");
  EXPECT_EQ(states.at("999999").status, SlurmStatus::Unknown);
  EXPECT_EQ(slurm.poll({"999998"}).at("999998").status, SlurmStatus::Unknown);
}

TEST_F(SlurmClientTest, FailingJobGivesItsExitCode) {
  SlurmClient slurm = client();
  const SlurmJobSpec spec = job("fails", "exit 3");
  const std::string id = slurm.submit(spec, script_path("fails"));
  const SlurmJobState state = wait_for(slurm, id, kEnded);
  EXPECT_EQ(state.state, "FAILED") << slurp(spec.log_path);
  EXPECT_EQ(state.status, SlurmStatus::Failed);
  EXPECT_EQ(state.exit_code, 3);
  EXPECT_EQ(state.reason, "NonZeroExitCode");
}

TEST_F(SlurmClientTest, CancelKillsARunningJob) {
  SlurmClient slurm = client();
  const SlurmJobSpec spec = job("cancel", "echo started; exec sleep 60");
  const std::string id = slurm.submit(spec, script_path("cancel"));
  EXPECT_EQ(wait_for(slurm, id, std::string("running ") + kEnded).status, SlurmStatus::Running);
  slurm.cancel(id);
  const SlurmJobState state = wait_for(slurm, id, kEnded);
  EXPECT_EQ(state.state, "CANCELLED") << slurp(spec.log_path);
  EXPECT_EQ(state.status, SlurmStatus::Killed);
  EXPECT_NO_THROW(slurm.cancel(id));  // ended: nothing to do
  // A signal to a job that ended is Slurm's error.
  const std::string message = error_of([&] { slurm.signal(id, "USR1"); });
  EXPECT_NE(message.find("Invalid job id specified"), std::string::npos) << message;
}

TEST_F(SlurmClientTest, JobAfterAFailedJobNeverRuns) {
  SlurmClient slurm = client();
  const std::string first = slurm.submit(job("dep-a", "sleep 1; exit 3"), script_path("dep-a"));
  SlurmJobSpec spec = job("dep-b", "touch ran");
  spec.after_ok = {first};
  const std::string second = slurm.submit(spec, script_path("dep-b"));
  EXPECT_EQ(slurm.poll({second}).at(second).reason, "Dependency");
  // --kill-on-invalid-dep=yes: cancelled once the dependency failed (without it the job would
  // stay PENDING with reason DependencyNeverSatisfied).
  const SlurmJobState state = wait_for(slurm, second, kEnded);
  EXPECT_EQ(state.state, "CANCELLED");
  EXPECT_EQ(state.status, SlurmStatus::Killed);
  EXPECT_EQ(state.reason, "DependencyNeverSatisfied");
  EXPECT_EQ(slurm.poll({first}).at(first).status, SlurmStatus::Failed);
  EXPECT_FALSE(fs::exists(fs::path(spec.work_dir) / "ran"));
}

TEST_F(SlurmClientTest, Usr1StopsTheCommandAndTheJobResumesAfterARequeue) {
  SlurmClient slurm = client();
  // First attempt: works until TERM, then "saves a checkpoint" and exits 75; the requeued
  // attempt (SLURM_RESTART_COUNT=1) finishes.
  const std::string work = R"(
if [ "${SLURM_RESTART_COUNT:-0}" -ge 1 ]; then echo "resumed"; exit 0; fi
trap 'echo "checkpoint written"; kill $sleeper; exit 75' TERM
echo "working"
sleep 60 & sleeper=$!
wait
)";
  const SlurmJobSpec spec = job("requeue", work);
  const std::string id = slurm.submit(spec, script_path("requeue"));
  ASSERT_TRUE(eventually([&] { return slurp(spec.log_path).find("working") != std::string::npos; }))
      << slurp(spec.log_path) << cluster_->logs();
  slurm.signal(id, "USR1");
  // Requeued: PENDING until BeginTime, requeue time + 121 s (cred_expire + 1); the test
  // moves it to now.
  const SlurmJobState pending = wait_for(slurm, id, "pending finished failed killed");
  EXPECT_EQ(pending.status, SlurmStatus::Pending) << slurp(spec.log_path);
  EXPECT_TRUE(eventually([&] { return slurm.poll({id}).at(id).reason == "BeginTime"; }))
      << slurm.poll({id}).at(id).reason;
  // It starts again once its first attempt's credential expired (the fixture's cred_expire =
  // 10 s; moving StartTime earlier gets the attempt killed: "Job credential revoked").
  const SlurmJobState state = wait_for(slurm, id, kEnded);
  const std::string log = slurp(spec.log_path);
  EXPECT_EQ(state.state, "COMPLETED") << log;
  EXPECT_EQ(state.exit_code, 0);
  // --open-mode=append: both attempts' lines, in order.
  const std::vector<std::string> in_order = {
      "[lmk] job " + id + " attempt 0 on ",
      "working",
      "[lmk] USR1 received: stopping the command",
      "checkpoint written",
      "[lmk] the command exited with 75",
      "[lmk] stopped before the time limit with a checkpoint: requeueing",
      "[lmk] job " + id + " attempt 1 on ",
      "resumed",
      "[lmk] the command exited with 0"};
  size_t at = 0;
  for (const std::string& line : in_order) {
    const size_t found = log.find(line, at);
    ASSERT_NE(found, std::string::npos) << "'" << line << "' missing after offset " << at << "\n"
                                        << log;
    at = found + line.size();
  }
}

TEST_F(SlurmClientTest, TwoTasksRunUnderSrun) {
  SlurmOptions options;
  options.ntasks_per_node = 2;
  SlurmClient slurm = client(options);
  const SlurmJobSpec spec = job("two-tasks", "echo \"rank $SLURM_PROCID of $SLURM_NTASKS\"");
  const std::string id = slurm.submit(spec, script_path("two-tasks"));
  const SlurmJobState state = wait_for(slurm, id, kEnded);
  const std::string log = slurp(spec.log_path);
  EXPECT_EQ(state.state, "COMPLETED") << log;
  EXPECT_NE(log.find("rank 0 of 2\n"), std::string::npos) << log;
  EXPECT_NE(log.find("rank 1 of 2\n"), std::string::npos) << log;
}

TEST_F(SlurmClientTest, CommandsGoThroughTheCommandPrefix) {
  // ssh as the prefix sees it: the host, then one string for the remote shell.
  const fs::path ssh = cluster_->work() / "fake ssh";
  std::ofstream(ssh) << "#!/bin/sh\necho \"$1\" >> " << shell_quote((ssh.string() + ".hosts"))
                     << "\nshift\nexport SLURM_CONF=" << shell_quote(cluster_->conf().string())
                     << "\nexec sh -c \"$*\"\n";
  fs::permissions(ssh, fs::perms::owner_all);
  SlurmOptions options;
  options.command_prefix = {ssh.string(), "login-node"};
  SlurmClient slurm(options);  // no SLURM_CONF here: only the fake ssh sets it
  const SlurmJobSpec spec = job("prefix 'x'", "echo via prefix");
  const std::string id = slurm.submit(spec, script_path("prefix 'x'"));
  const SlurmJobState state = wait_for(slurm, id, kEnded);
  EXPECT_EQ(state.state, "COMPLETED") << slurp(spec.log_path);
  EXPECT_NE(slurp(spec.log_path).find("via prefix\n"), std::string::npos);
  EXPECT_NO_THROW(slurm.cancel(id));
  const std::string hosts = slurp(ssh.string() + ".hosts");
  EXPECT_GE(count(hosts, "login-node\n"), 3u) << hosts;  // sbatch, the polls, scancel
  EXPECT_EQ(count(hosts, "login-node\n") * std::string("login-node\n").size(), hosts.size());
}

// A cluster of its own: restarted (squeue forgets, the job completion file stays), then stopped.
TEST(SlurmClientRestart, PollReadsTheCompletionFileAndAStoppedControllerFailsSubmit) {
  const std::string why = SlurmCluster::unavailable();
  if (!why.empty()) GTEST_SKIP() << why;
  SlurmCluster cluster;
  SlurmClient slurm(SlurmOptions{}, {{"SLURM_CONF", cluster.conf().string()}});
  SlurmJobSpec spec;
  spec.work_dir = cluster.work().string();
  spec.log_path = (cluster.work() / "restart.log").string();
  spec.command = {"sh", "-c", "exit 4"};
  const std::string id = slurm.submit(spec, (cluster.work() / "restart.sh").string());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (slurm.poll({id}).at(id).status != SlurmStatus::Failed &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));

  cluster.stop();
  const auto restart = testing::run_shell(
      "LMK_SLURM_OWNER_PID=" + std::to_string(::getpid()) + " " + LMK_SOURCE_DIR +
      "/tests/support/slurm_cluster.sh start " + cluster.dir().string());
  ASSERT_EQ(restart.code, 0) << restart.output;
  // The new controller does not know the job (squeue fails for a single unknown id).
  EXPECT_NE(cluster.state(id).find("Invalid job id specified"), std::string::npos);
  const SlurmJobState state = slurm.poll({id}).at(id);
  EXPECT_EQ(state.source, "sacct -c");
  EXPECT_EQ(state.state, "FAILED");
  EXPECT_EQ(state.exit_code, 4);

  cluster.stop();
  const auto start = std::chrono::steady_clock::now();
  const std::string message =
      error_of([&] { slurm.submit(spec, (cluster.work() / "restart.sh").string()); });
  std::cout << "sbatch gave up after "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            << " s\n";
  EXPECT_NE(message.find("sbatch " + (cluster.work() / "restart.sh").string() +
                         " failed (exit 1): sbatch: error: Batch job submission failed: Unable to "
                         "contact slurm controller"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace lmk
