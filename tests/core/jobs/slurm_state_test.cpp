// Slurm's output read back (core/jobs/slurm_state.cpp): sbatch's job id, squeue's and sacct's
// lines on text captured from Slurm 22.05's commands (the last line of a job wins), and every
// job state mapped to a status.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/jobs/slurm.h"
#include "core/util/error.h"

namespace lmk {
namespace {

// Captured from Slurm 22.05 (the fixture's cluster): sbatch --parsable, squeue -h -t all -O
// 'JobID:|,State:|,Reason:|,exit_code:|', sacct -c -n -P -X -o JobIDRaw,State,ExitCode,Reason.
TEST(SlurmParse, SbatchOutput) {
  EXPECT_EQ(parse_sbatch_output("123\n"), "123");
  EXPECT_EQ(parse_sbatch_output("123;lmktest\n"), "123");
  EXPECT_EQ(parse_sbatch_output("sbatch: site notice\n456\n"), "456");
  EXPECT_EQ(parse_sbatch_output("Submitted batch job 7\n"), "");
  EXPECT_EQ(parse_sbatch_output(""), "");
  EXPECT_EQ(parse_sbatch_output(std::string("\0\xff;;\n|", 6)), "");
}

TEST(SlurmParse, SqueueLines) {
  const auto jobs = parse_squeue(
      "7|CANCELLED|DependencyNeverSatisfied|0|\n"
      "6|FAILED|NonZeroExitCode|768|\n"
      "3|FAILED|NonZeroExitCode|35072|\n"
      "8|PENDING|DependencyNeverSatisfied|0|\n"
      "9|RUNNING|None|0|\n"
      "4|COMPLETED|None|0|\n"
      "11|CANCELLED|None|15|\n"
      "12_3|RUNNING|None|0|\n"
      "garbage\n|||\n");
  ASSERT_EQ(jobs.size(), 7u);
  EXPECT_EQ(jobs.at("7").state, "CANCELLED");
  EXPECT_EQ(jobs.at("7").status, SlurmStatus::Killed);
  EXPECT_EQ(jobs.at("7").reason, "DependencyNeverSatisfied");
  EXPECT_EQ(jobs.at("6").exit_code, 3);
  EXPECT_EQ(jobs.at("6").status, SlurmStatus::Failed);
  EXPECT_EQ(jobs.at("3").exit_code, 137);
  EXPECT_EQ(jobs.at("8").status, SlurmStatus::Pending);
  EXPECT_EQ(jobs.at("8").exit_code, -1);
  EXPECT_EQ(jobs.at("9").status, SlurmStatus::Running);
  EXPECT_EQ(jobs.at("9").reason, "");
  EXPECT_EQ(jobs.at("9").exit_code, -1);  // not ended: no exit code yet
  EXPECT_EQ(jobs.at("4").status, SlurmStatus::Finished);
  EXPECT_EQ(jobs.at("4").exit_code, 0);
  EXPECT_EQ(jobs.at("11").exit_code, 0);
  EXPECT_EQ(jobs.at("11").exit_signal, 15);
  EXPECT_TRUE(parse_squeue("").empty());
  const char with_nul[] = "1|\0|x|y|\n\xff";  // a NUL inside, a byte that is not UTF-8 at the end
  EXPECT_TRUE(parse_squeue(std::string(with_nul, sizeof(with_nul) - 1)).size() <= 1);
}

TEST(SlurmParse, SacctLinesTheLastOfAJobWins) {
  // A requeued job has a record per attempt in the completion file, in the order they ended.
  const auto jobs = parse_sacct(
      "6|FAILED|3:0|\n"
      "7|CANCELLED|0:0|\n"
      "4|PENDING|0:0|\n"
      "4|COMPLETED|0:0|\n"
      "12|CANCELLED by 0|0:15|\n"
      "12.batch|CANCELLED|0:15|\n"
      "13|TIMEOUT|0:0\n"
      "14|OUT_OF_MEMORY|0:125|\n"
      "15|RUNNING|0:0|None\n"
      "junk|x\n\n");
  ASSERT_EQ(jobs.size(), 7u);
  EXPECT_EQ(jobs.at("6").exit_code, 3);
  EXPECT_EQ(jobs.at("6").status, SlurmStatus::Failed);
  EXPECT_EQ(jobs.at("7").status, SlurmStatus::Killed);
  EXPECT_EQ(jobs.at("4").state, "COMPLETED");
  EXPECT_EQ(jobs.at("4").status, SlurmStatus::Finished);
  EXPECT_EQ(jobs.at("12").state, "CANCELLED");
  EXPECT_EQ(jobs.at("12").exit_signal, 15);
  EXPECT_EQ(jobs.at("13").status, SlurmStatus::Failed);
  EXPECT_EQ(jobs.at("14").status, SlurmStatus::Failed);
  EXPECT_EQ(jobs.at("15").status, SlurmStatus::Running);
  EXPECT_EQ(jobs.at("15").exit_code, -1);
  EXPECT_TRUE(parse_sacct("Slurm accounting storage is disabled\n").empty());
  EXPECT_TRUE(parse_sacct("1|COMPLETED|x:y|\n").at("1").exit_code == -1);
}

TEST(SlurmStatus, EveryStateMaps) {
  const std::map<SlurmStatus, std::vector<std::string>> table = {
      {SlurmStatus::Pending,
       {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESIZING",
        "SUSPENDED"}},
      {SlurmStatus::Running, {"RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING"}},
      {SlurmStatus::Finished, {"COMPLETED"}},
      {SlurmStatus::Failed,
       {"FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "TIMEOUT"}},
      {SlurmStatus::Killed, {"CANCELLED", "CANCELLED by 1000", "PREEMPTED", "REVOKED"}},
      {SlurmStatus::Unknown, {"", "SPECIAL_EXIT", "nonsense", "completed?"}}};
  for (const auto& [status, states] : table)
    for (const std::string& state : states)
      EXPECT_EQ(slurm_status(state), status) << "'" << state << "'";
  EXPECT_EQ(slurm_status("completed"), SlurmStatus::Finished);
  EXPECT_STREQ(slurm_status_name(SlurmStatus::Killed), "killed");
}

}  // namespace
}  // namespace lmk
