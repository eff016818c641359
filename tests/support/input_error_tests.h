#pragma once

// What unit tests of readers and checks share (the data readers', the job system's): checks on
// the message of an InputError, and gzip data made by zlib itself.

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "core/util/error.h"
#include "core/util/file.h"

namespace lmk::testing {

// The InputError message fn throws ("" when it throws none).
template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Whether message contains expected (shown both when not).
inline ::testing::AssertionResult has(const std::string& message, const std::string& expected) {
  if (message.find(expected) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "expected \"" << expected << "\" in \"" << message << "\"";
}

// Whether fn throws an InputError whose message contains expected.
template <typename Fn>
::testing::AssertionResult throws_input_error(Fn&& fn, const std::string& expected) {
  return has(error_of(fn), expected);
}

// Gzip-compresses text with zlib itself (not through the code under test).
inline std::string gzip(const std::string& text, const std::string& path) {
  gzFile f = gzopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(f);
  return read_file(path);
}

}  // namespace lmk::testing
