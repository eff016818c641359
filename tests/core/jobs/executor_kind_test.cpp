// The executors' names (core/jobs/executor_kind.cpp): "local" and "slurm" are read and written
// in one place; anything else is an InputError naming where the name came from.
#include "core/jobs/executor_kind.h"

#include <gtest/gtest.h>

#include <string>

#include "core/util/error.h"

namespace lmk {
namespace {

// The two names the jobs table stores parse to their kinds, and each kind's name parses back
// to it.
TEST(ExecutorKind, TheTwoNamesRoundTrip) {
  EXPECT_EQ(parse_executor("local"), ExecutorKind::Local);
  EXPECT_EQ(parse_executor("slurm"), ExecutorKind::Slurm);
  EXPECT_STREQ(executor_name(ExecutorKind::Local), "local");
  EXPECT_STREQ(executor_name(ExecutorKind::Slurm), "slurm");
  for (const ExecutorKind kind : {ExecutorKind::Local, ExecutorKind::Slurm})
    EXPECT_EQ(parse_executor(executor_name(kind)), kind);
}

// Any other name (another case, spaces, empty) is refused with the caller's `where` in front
// and the name quoted; without one the message says "executor".
TEST(ExecutorKind, OtherNamesAreInputErrorsNamingWhere) {
  for (const std::string name : {"Local", "SLURM", " local", "local ", "", "ssh", "pbs"}) {
    try {
      parse_executor(name, "--executor");
      ADD_FAILURE() << "'" << name << "' accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), "--executor: '" + name + "' is not local or slurm");
    }
  }
  try {
    parse_executor("condor");
    ADD_FAILURE() << "condor accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "executor: 'condor' is not local or slurm");
  }
}

// runs_on compares a stored name with a kind exactly: each kind matches its own name only.
TEST(ExecutorKind, RunsOnMatchesOnlyTheKindsOwnName) {
  EXPECT_TRUE(runs_on("local", ExecutorKind::Local));
  EXPECT_TRUE(runs_on("slurm", ExecutorKind::Slurm));
  EXPECT_FALSE(runs_on("slurm", ExecutorKind::Local));
  EXPECT_FALSE(runs_on("local", ExecutorKind::Slurm));
  for (const std::string stored : {"", "Local", "SLURM", "local ", "slurm\n"}) {
    EXPECT_FALSE(runs_on(stored, ExecutorKind::Local)) << "'" << stored << "'";
    EXPECT_FALSE(runs_on(stored, ExecutorKind::Slurm)) << "'" << stored << "'";
  }
}

}  // namespace
}  // namespace lmk
