#include "app/commands.h"

#include <unistd.h>

#include <iostream>
#include <sstream>

#include "core/util/error.h"

namespace lmk::cli {

std::vector<int64_t> parse_int_list(const std::string& text, const std::string& flag,
                                    int64_t min_value, const std::string& what) {
  std::vector<int64_t> values;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value < min_value)
      throw input_error(flag, "'" + item + "' is not " + what);
    values.push_back(value);
  }
  if (values.empty()) throw input_error(flag, "empty list");
  return values;
}

std::function<void(const std::string& line, bool transient)> terminal_report(bool& pending) {
  const bool tty = ::isatty(2);
  return [tty, &pending](const std::string& line, bool transient) {
    if (!tty) {
      std::cerr << line << "\n";
      return;
    }
    std::cerr << "\r\033[K";
    if (transient)
      std::cerr << line.substr(0, 120) << std::flush;
    else
      std::cerr << line << "\n";
    pending = transient;
  };
}

}  // namespace lmk::cli
