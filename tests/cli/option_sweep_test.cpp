// Every numeric option of every subcommand, taken from the CLI's own definition (lmk lists its
// options with LMK_LIST_OPTIONS=1), is fed what its declared range excludes -- -1, a
// non-number, 2^64, and 0 where 0 is outside the range -- through the real lmk: each is exit 2
// with the option named. 0 where the range holds it (its documented meaning: "no limit",
// "all", ...) is not refused as out of range.
#include <gtest/gtest.h>

#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_lmk.h"

namespace lmk {
namespace {

using nlohmann::json;
using testing::Result;
using testing::run_lmk;

struct NumericOption {
  std::string command, option, declared;
  bool positional = false;
  bool zero_allowed = false;
};

// The lower end of a declared range ("UINT:in [0, 1000000000]", "FLOAT:in (0, 1)"): whether 0
// lies inside it.
bool range_holds_zero(const std::string& declared) {
  const size_t at = declared.find("in ");
  if (at == std::string::npos || at + 3 >= declared.size()) return false;
  const bool open = declared[at + 3] == '(';
  const double min = std::stod(declared.substr(at + 4));
  return min < 0 || (min == 0 && !open);
}

std::vector<NumericOption> numeric_options() {
  const Result listed = run_lmk("", "", "LMK_LIST_OPTIONS=1");
  EXPECT_EQ(listed.code, 0) << listed.output;
  std::vector<NumericOption> options;
  std::istringstream lines(listed.output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '{') continue;
    const json j = json::parse(line);
    if (!j["numeric"].get<bool>()) continue;
    NumericOption o;
    o.command = j["command"];
    o.option = j["option"];
    o.declared = j["declared"];
    o.positional = o.option[0] != '-';
    o.zero_allowed = range_holds_zero(o.declared);
    options.push_back(o);
  }
  return options;
}

// `lmk [global] COMMAND OPTION VALUE` (a positional takes VALUE alone).
std::string command_line(const NumericOption& o, const std::string& value) {
  const std::string given = o.positional ? "'" + value + "'" : o.option + " '" + value + "'";
  if (o.command.empty()) return given + " tokenize";  // a global option
  return o.command + " " + given;
}

TEST(OptionSweep, EveryNumericOptionDeclaresItsRangeAndRefusesWhatItExcludes) {
  const std::vector<NumericOption> options = numeric_options();
  // Every subcommand with numbers: a regression that lists nothing must not pass.
  ASSERT_GE(options.size(), 60u);
  struct Case {
    const NumericOption* option;
    std::string value;
    bool refused;
  };
  std::vector<Case> cases;
  for (const NumericOption& o : options) {
    EXPECT_NE(o.declared.find(":in "), std::string::npos)
        << "lmk " << o.command << " " << o.option << " declares no range: " << o.declared;
    for (const char* value : {"-1", "many", "18446744073709551616"})
      cases.push_back({&o, value, true});
    cases.push_back({&o, "0", !o.zero_allowed});
  }
  // Two at a time (CI has two cores); each run only parses its command line.
  std::vector<Result> results(cases.size());
  for (size_t start = 0; start < cases.size(); start += 4) {
    std::vector<std::future<Result>> running;
    for (size_t i = start; i < std::min(cases.size(), start + 4); ++i)
      running.push_back(std::async(std::launch::async, [&cases, i] {
        return run_lmk(command_line(*cases[i].option, cases[i].value), "", "LMK_THREADS=1");
      }));
    for (size_t i = start; i < std::min(cases.size(), start + 4); ++i)
      results[i] = running[i - start].get();
  }
  size_t refused = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const Result& r = results[i];
    const std::string what =
        "lmk " + command_line(*c.option, c.value) + " (" + c.option->declared + ")";
    // CLI11 names the option first: "--max-length: -1 is outside [0, 1000000000]".
    const bool named = r.output.find(c.option->option + ": ") != std::string::npos;
    if (c.refused) {
      EXPECT_EQ(r.code, 2) << what << "\n" << r.output;
      EXPECT_TRUE(named) << what << " does not name the option\n" << r.output;
      refused += r.code == 2 && named;
    } else {
      EXPECT_FALSE(named) << what << ": 0 is in the declared range, yet refused\n" << r.output;
    }
  }
  RecordProperty("refused", static_cast<int>(refused));
}

}  // namespace
}  // namespace lmk
