#pragma once

// What the Slurm client layer's unit tests share (tests/core/jobs/slurm_test.cpp,
// slurm_client_test.cpp) besides tests/support/input_error_tests.h: counting a part of a text.

#include <string>

namespace lmk::testing {

// How often `part` occurs in `text` (overlapping occurrences count).
inline size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace lmk::testing
