#pragma once

// The ranges numeric options declare (->check(...)), shown in --help after the type ("UINT:in
// [1, 1000000000]"). Every numeric option of lmk declares one (require_ranges, app/commands.h):
// a value outside it, a non-number, or one too large for the type is exit 2 naming the option.
// Header-only: the benchmarks' command lines (tests/bench) take them too.

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

namespace lmk::cli {

constexpr int64_t kMaxCount = 1'000'000'000;  // lengths, counts, sizes

// whole(min, max): a whole number in [min, max]. real(min, max, open_min, open_max): a finite
// number in [min, max], open_min / open_max excluding that end. seed_range(): [0, 2^63 - 1].
inline CLI::Validator whole(int64_t min, int64_t max = kMaxCount) {
  const std::string shown = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return CLI::Validator(
      [min, max, shown](std::string& input) -> std::string {
        int64_t value = 0;
        const char* end = input.data() + input.size();
        const auto [stop, error] = std::from_chars(input.data(), end, value);
        if (input.empty() || stop != end || error == std::errc::invalid_argument)
          return "'" + input + "' is not a whole number";
        if (error == std::errc::result_out_of_range || value < min || value > max)
          return input + " is outside " + shown;
        return "";
      },
      "in " + shown);
}

inline CLI::Validator real(double min, double max, bool open_min = false, bool open_max = false) {
  std::ostringstream shown;
  shown << (open_min ? "(" : "[") << min << ", " << max << (open_max ? ")" : "]");
  return CLI::Validator(
      [=, shown = shown.str()](std::string& input) -> std::string {
        size_t used = 0;
        double value = 0;
        try {
          value = std::stod(input, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != input.size() || !std::isfinite(value))
          return "'" + input + "' is not a number";
        if (value < min || value > max || (open_min && value == min) || (open_max && value == max))
          return input + " is outside " + shown;
        return "";
      },
      "in " + shown.str());
}

inline CLI::Validator seed_range() {
  return whole(0, std::numeric_limits<int64_t>::max());
}

}  // namespace lmk::cli
