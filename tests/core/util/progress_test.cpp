#include "core/util/progress.h"

#include <gtest/gtest.h>

#include <thread>

namespace lmk {
namespace {

TEST(ProgressTest, RendersPercentRateAndEta) {
  Progress p("tokenize", 200, "B", std::chrono::seconds(10), std::chrono::milliseconds(0), stderr);
  EXPECT_EQ(p.render(50, 10.0, false), "tokenize  25.0% 5 B/s elapsed 10s ETA 30s");
  EXPECT_EQ(p.render(200, 90.0, true),
            "tokenize [##############################] 100.0% 2.22 B/s elapsed 1m30s ETA 0s");
  EXPECT_NE(p.render(0, 1.0, false).find("ETA ?"), std::string::npos);
  p.set_detail("loss 2.31");
  EXPECT_EQ(p.render(50, 10.0, false), "tokenize  25.0% 5 B/s elapsed 10s ETA 30s  loss 2.31");
}

TEST(ProgressTest, PrintsPeriodicLinesWhenNotATerminal) {
  std::FILE* out = std::tmpfile();
  {
    Progress p("work", 10, "", std::chrono::seconds(0), std::chrono::milliseconds(0), out);
    for (int i = 1; i <= 3; ++i) {
      p.update(static_cast<uint64_t>(i));
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  std::rewind(out);
  char buffer[1024] = {};
  const size_t n = std::fread(buffer, 1, sizeof buffer - 1, out);
  std::fclose(out);
  const std::string text(buffer, n);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4) << text;  // 3 updates + the final line
  EXPECT_NE(text.find("work  30.0%"), std::string::npos) << text;
}

TEST(ProgressTest, QuietForShortWork) {
  std::FILE* out = std::tmpfile();
  {
    Progress p("quick", 10, "", std::chrono::seconds(0), std::chrono::milliseconds(60000), out);
    p.update(10);
  }
  EXPECT_EQ(std::ftell(out), 0);
  std::fclose(out);
}

}  // namespace
}  // namespace lmk
