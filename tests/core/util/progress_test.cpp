#include "core/util/progress.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <sstream>
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

// Everything written to a tmpfile.
std::string contents(std::FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) text.append(buffer, n);
  return text;
}

// The lines of `text` that start with '{'.
std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> events;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line[0] == '{') events.push_back(nlohmann::json::parse(line));
  }
  return events;
}

TEST(ProgressTest, WritesJsonEventsWhenAskedByTheEnvironment) {
  ::setenv("LMK_PROGRESS_JSON", "1", 1);
  EXPECT_TRUE(progress_json_requested());
  std::FILE* out = std::tmpfile();
  {
    // Quiet for a minute and a human line every 10 s: only the JSON events appear.
    Progress p("training", 40, "steps", std::chrono::seconds(10), std::chrono::milliseconds(60000),
               out);
    p.set_detail("loss 2.31 lr 3e-04 5.1k tok/s");
    for (int i = 1; i <= 12; ++i) p.update(static_cast<uint64_t>(i));  // within 2 s: one event
  }
  ::unsetenv("LMK_PROGRESS_JSON");
  const std::string text = contents(out);
  std::fclose(out);
  const auto events = json_lines(text);
  ASSERT_EQ(events.size(), 2u) << "the first update and finish():\n" << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_EQ(events[0]["event"], "progress");
  EXPECT_EQ(events[0]["label"], "training");
  EXPECT_EQ(events[0]["done"], 1);
  EXPECT_EQ(events[0]["total"], 40);
  EXPECT_EQ(events[0]["unit"], "steps");
  EXPECT_EQ(events[0]["detail"], "loss 2.31 lr 3e-04 5.1k tok/s");
  EXPECT_GE(events[0]["elapsed_s"].get<double>(), 0.0);
  EXPECT_GE(events[0]["eta_s"].get<double>(), 0.0);
  EXPECT_EQ(events[1]["done"], 12);
  // The events read back.
  const auto latest = latest_progress_event(text);
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->done, 12);
  EXPECT_EQ(latest->total, 40);
  EXPECT_EQ(latest->label, "training");
}

TEST(ProgressTest, JsonEventsComeBesideTheHumanLines) {
  ::setenv("LMK_PROGRESS_JSON", "yes", 1);
  std::FILE* out = std::tmpfile();
  {
    Progress p("work", 10, "", std::chrono::seconds(0), std::chrono::milliseconds(0), out);
    p.update(3);
  }
  ::unsetenv("LMK_PROGRESS_JSON");
  const std::string text = contents(out);
  std::fclose(out);
  EXPECT_EQ(json_lines(text).size(), 2u) << text;
  EXPECT_NE(text.find("work  30.0%"), std::string::npos) << text;
  EXPECT_EQ(json_lines(text)[1].count("eta_s"), 1u) << text;
}

TEST(ProgressTest, NoJsonEventsWithoutTheEnvironment) {
  for (const char* value : {static_cast<const char*>(nullptr), "", "0"}) {
    if (value)
      ::setenv("LMK_PROGRESS_JSON", value, 1);
    else
      ::unsetenv("LMK_PROGRESS_JSON");
    EXPECT_FALSE(progress_json_requested()) << (value ? value : "unset");
    std::FILE* out = std::tmpfile();
    {
      Progress p("work", 10, "", std::chrono::seconds(0), std::chrono::milliseconds(0), out);
      p.update(3);
    }
    const std::string text = contents(out);
    std::fclose(out);
    EXPECT_EQ(text.find('{'), std::string::npos) << text;
    EXPECT_NE(text.find("work  30.0%"), std::string::npos) << text;
  }
  ::unsetenv("LMK_PROGRESS_JSON");
}

TEST(ProgressTest, ReadsTheNewestEventOfALog) {
  const std::string log =
      "ining 12/40\n"  // cut at the start
      R"({"event":"progress","label":"tokenize","done":5,"total":9,"unit":"docs","elapsed_s":1.5})"
      "\nsome other line\n"
      R"({"event":"step","step":12,"total":40,"loss":2.31,"lr":0.0003,"tokens_per_s":5100,)"
      R"("eta_s":7.5})"
      "\r\x1b[Ktraining [####   ] 30.0%\r\x1b[Ktraining [#####  ] 31.0%\n";
  auto event = latest_progress_event(log);
  ASSERT_TRUE(event);
  EXPECT_EQ(event->event, "step");
  EXPECT_EQ(event->label, "training");
  EXPECT_EQ(event->unit, "steps");
  EXPECT_EQ(event->done, 12);
  EXPECT_EQ(event->total, 40);
  EXPECT_DOUBLE_EQ(event->eta_s, 7.5);
  EXPECT_DOUBLE_EQ(event->elapsed_s, -1);
  const std::vector<std::pair<std::string, double>> values = {
      {"loss", 2.31}, {"lr", 0.0003}, {"tokens_per_s", 5100}};
  EXPECT_EQ(event->values, values);

  // A progress event after a terminal's escape codes, the newest of the text.
  event = latest_progress_event(
      log + "\r\x1b[K" +
      R"({"event":"progress","label":"encode","done":3,"total":7,"unit":"B","elapsed_s":2,)"
      R"("eta_s":2.67,"detail":"x"})");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->event, "progress");
  EXPECT_EQ(event->label, "encode");
  EXPECT_EQ(event->unit, "B");
  EXPECT_EQ(event->detail, "x");
  EXPECT_EQ(event->done, 3);
  EXPECT_DOUBLE_EQ(event->elapsed_s, 2);
  EXPECT_TRUE(event->values.empty());

  // The newest line cut in the middle: the one before it.
  event = latest_progress_event(log + R"({"event":"progress","label":"x","do)");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->done, 12);
}

TEST(ProgressTest, ReadingSkipsWhatIsNotAnEvent) {
  const std::string good = R"({"event":"progress","label":"a","done":1,"total":2})";
  const std::string bad_lines[] = {
      R"({"event":"progress","label":"a","done":"1","total":2})",  // wrong type
      R"({"event":"progress","label":"a","total":2})",             // no done
      R"({"event":"step","step":1e400,"total":2})",                // out of range
      R"({"event":"step","step":-1e30,"total":2})",
      R"({"event":"step","step":18446744073709551615,"total":2})",
      R"({"event":"other","done":1,"total":2})",
      R"({"event":7,"done":1,"total":2})",
      R"(["event","progress"])",
      R"({"event":"progress","label":"a","done":1,"total":2)",               // no closing brace
      "{\"event\":\"progress\",\"label\":\"\xff\",\"done\":1,\"total\":2}",  // not UTF-8
      std::string(100000, '{') + std::string(100000, '}'),
      std::string(5000, '[') + "{}" + std::string(5000, ']'),
      "}{",
      "{",
      "",
      std::string("{\"event\":\"progress\"\0}", 21),
  };
  for (const std::string& bad : bad_lines) {
    EXPECT_FALSE(latest_progress_event(bad)) << bad.substr(0, 80);
    const auto event = latest_progress_event(good + "\n" + bad + "\n");
    ASSERT_TRUE(event) << bad.substr(0, 80);
    EXPECT_EQ(event->label, "a");
  }
  // Wrong types of optional fields are left at their defaults.
  const auto event = latest_progress_event(
      R"({"event":"step","step":3,"total":4,"loss":"x","lr":null,"eta_s":[1]})");
  ASSERT_TRUE(event);
  EXPECT_EQ(event->done, 3);
  EXPECT_TRUE(event->values.empty());
  EXPECT_DOUBLE_EQ(event->eta_s, -1);
  EXPECT_FALSE(latest_progress_event(std::string("\r\n\r\n\0\0", 6)));
}

}  // namespace
}  // namespace lmk
