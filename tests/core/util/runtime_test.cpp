#include "core/util/runtime.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

#include <string>
#include <utility>
#include <vector>

namespace lmk {
namespace {

// Sets or unsets the idle-waiting variables for one test, restoring them after.
class WaitingEnvironment {
 public:
  WaitingEnvironment() {
    for (const char* name : kNames)
      if (const char* value = std::getenv(name)) saved_.emplace_back(name, value);
  }
  ~WaitingEnvironment() {
    for (const char* name : kNames) ::unsetenv(name);
    for (const auto& [name, value] : saved_) ::setenv(name.c_str(), value.c_str(), 1);
  }
  static constexpr const char* kNames[] = {"OMP_WAIT_POLICY"};

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

TEST(RuntimeTest, PassiveWaitingSetsOnlyWhatTheUserLeftUnset) {
  WaitingEnvironment restore;
  using Assignments = std::vector<std::pair<std::string, std::string>>;
  ::unsetenv("OMP_WAIT_POLICY");
  EXPECT_EQ(passive_waiting_environment(), (Assignments{{"OMP_WAIT_POLICY", "PASSIVE"}}));
  EXPECT_EQ(waiting_settings(), "OMP_WAIT_POLICY=unset");
  ::setenv("OMP_WAIT_POLICY", "ACTIVE", 1);
  EXPECT_TRUE(passive_waiting_environment().empty()) << "nothing to set: no re-execution";
  EXPECT_EQ(waiting_settings(), "OMP_WAIT_POLICY=ACTIVE");
}

// The signal tests run in child processes (death tests fork): the handlers and the flag are
// process-wide.
TEST(RuntimeTest, StopSignalsOnlyRecordTheFirstSignal) {
  EXPECT_EXIT(
      {
        install_stop_signals();
        if (stop_requested() || stop_signal() != 0) ::_exit(1);
        std::raise(SIGTERM);  // would end the process without the handler
        if (!stop_requested() || stop_signal() != SIGTERM) ::_exit(2);
        std::raise(SIGUSR1);
        std::raise(SIGTERM);
        ::_exit(stop_signal() == SIGTERM ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(RuntimeTest, ASecondSigintEndsTheProcessWith130) {
  EXPECT_EXIT(
      {
        install_stop_signals();
        std::raise(SIGINT);
        if (stop_signal() != SIGINT) ::_exit(1);
        std::raise(SIGINT);
        ::_exit(0);
      },
      ::testing::ExitedWithCode(130), "");
  EXPECT_EXIT(
      {
        install_stop_signals();
        std::raise(SIGTERM);
        std::raise(SIGINT);  // after SIGTERM too: Ctrl-C while it stops
        ::_exit(0);
      },
      ::testing::ExitedWithCode(130), "");
}

}  // namespace
}  // namespace lmk
