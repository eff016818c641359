#pragma once

// What lmk results, lmk compare and lmk export share: opening a store for reading, terminal
// detection, and the config differences of runs (app/store_commands.cpp).

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/store/results_store.h"

namespace lmk::cli {

// Shown for a parameter a run does not have, or a result it lacks.
inline constexpr const char* kAbsent = "-";

// Opens a store for reading: it must exist (a typo must not create an empty file). Runs of this
// host whose process died without recording how are ended first (ResultsStore::end_lost_runs).
ResultsStore open_for_reading(const std::string& db);

// Bold is for a terminal, unless NO_COLOR is set to something (no-color.org).
bool stdout_is_terminal();

// The parameter's value, or kAbsent.
std::string value_or_absent(const std::map<std::string, std::string>& params,
                            const std::string& key);

// "a, b, c", or "none".
template <typename Names>
std::string join(const Names& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "none" : text;
}

}  // namespace lmk::cli
