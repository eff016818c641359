#include "core/util/runtime.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

#include <string>
#include <utility>
#include <vector>

namespace lmk {
namespace {

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
