// NumPy .npy files (core/util/npy.h): the writer's bytes are format 1.0 as numpy writes them,
// and the reader takes that format back and refuses anything else with an InputError.
#include "core/util/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/util/error.h"
#include "core/util/file.h"
#include "tests/support/test_tokenizers.h"

namespace lmk {
namespace {

using testing::TempDir;

TEST(NpyTest, WritesWhatNumpyReads) {
  TempDir dir;
  const std::vector<float> data = {1, 2, 3, 4, 5, 6};
  const std::string path = (dir.path() / "x.npy").string();
  write_npy_float32(path, data.data(), 2, 3);
  const std::string bytes = read_file(path);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ(
      (10 + (static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8)) %
          64,
      0u);
  int64_t rows = 0, cols = 0;
  EXPECT_EQ(read_npy_float32(path, rows, cols), data);
  EXPECT_EQ(rows, 2);
  EXPECT_EQ(cols, 3);
}

// Byte by byte: magic, version 1.0, little-endian header length, the header dict as numpy
// writes it padded with spaces to a multiple of 64 bytes and ended by "\n", then the floats.
TEST(NpyTest, WritesNumpysFormatByteForByte) {
  TempDir dir;
  const std::vector<float> data = {0.5f, -1.25f, 3e7f, 0.0f};
  const std::string path = (dir.path() / "m.npy").string();
  write_npy_float32(path, data.data(), 4, 1);
  const std::string bytes = read_file(path);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 1), }";
  // 10 bytes of prefix + the dict + padding + "\n" = 128 (the dict alone is 59 bytes).
  ASSERT_EQ(dict.size(), 59u);
  ASSERT_EQ(bytes.size(), 128u + 4 * sizeof(float));
  EXPECT_EQ(bytes.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));  // 118 = 0x76
  EXPECT_EQ(bytes.substr(10, 118), dict + std::string(58, ' ') + "\n");
  std::vector<float> back(4);
  std::memcpy(back.data(), bytes.data() + 128, 4 * sizeof(float));
  EXPECT_EQ(back, data);
}

// A file built by hand, its header padded to 192 bytes rather than the writer's 128 (the reader
// goes by the length field), reads back; so does an empty matrix.
TEST(NpyTest, ReadsAHandWrittenFileAndAnEmptyMatrix) {
  TempDir dir;
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2), }";
  const std::string header = dict + std::string(192 - 10 - dict.size() - 1, ' ') + "\n";
  ASSERT_EQ(10 + header.size(), 192u);
  const float values[2] = {7.5f, -2.0f};
  const std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) +
                            '\0' + header + std::string(reinterpret_cast<const char*>(values), 8);
  int64_t rows = 0, cols = 0;
  EXPECT_EQ(read_npy_float32(dir.write("hand.npy", bytes), rows, cols),
            (std::vector<float>{7.5f, -2.0f}));
  EXPECT_EQ(rows, 1);
  EXPECT_EQ(cols, 2);

  const std::string empty = (dir.path() / "empty.npy").string();
  write_npy_float32(empty, nullptr, 0, 3);
  EXPECT_TRUE(read_npy_float32(empty, rows, cols).empty());
  EXPECT_EQ(rows, 0);
  EXPECT_EQ(cols, 3);
}

// Anything but a C-order float32 matrix whose data fills its shape is an InputError naming the
// file and what is wrong.
TEST(NpyTest, RefusesOtherFilesNamingTheProblem) {
  TempDir dir;
  const std::vector<float> data = {1, 2, 3, 4, 5, 6};
  const std::string good = (dir.path() / "good.npy").string();
  write_npy_float32(good, data.data(), 3, 2);
  const std::string bytes = read_file(good);
  auto error_of = [&](const std::string& name, const std::string& content) {
    const std::string path = dir.write(name, content);
    try {
      int64_t rows = 0, cols = 0;
      read_npy_float32(path, rows, cols);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no InputError");
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string out = bytes;
    const size_t at = out.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return out.replace(at, from.size(), to);
  };
  const std::string dir_path = dir.path().string();
  EXPECT_EQ(error_of("text.npy", "shape = (3, 2)\n"), dir_path + "/text.npy: not a .npy file");
  EXPECT_EQ(error_of("short.npy", bytes.substr(0, 9)), dir_path + "/short.npy: not a .npy file");
  EXPECT_EQ(error_of("cut_header.npy", bytes.substr(0, 40)),
            dir_path + "/cut_header.npy: truncated header");
  EXPECT_EQ(error_of("cut_data.npy", bytes.substr(0, bytes.size() - 4)),
            dir_path + "/cut_data.npy: data size does not match the shape");
  EXPECT_EQ(error_of("extra_data.npy", bytes + std::string(4, '\0')),
            dir_path + "/extra_data.npy: data size does not match the shape");
  // Same lengths as the good file's header, so only the content differs.
  for (const auto& [name, content] :
       {std::pair<std::string, std::string>{"f8.npy", replaced("'<f4'", "'<f8'")},
        {"big_endian.npy", replaced("'<f4'", "'>f4'")},
        {"fortran.npy", replaced("False", "True ")},
        {"vector.npy", replaced("(3, 2)", "(6,)  ")}}) {
    const std::string message = error_of(name, content);
    EXPECT_EQ(message.rfind(dir_path + "/" + name + ": expected a C-order float32 matrix", 0), 0u)
        << message;
  }
}

}  // namespace
}  // namespace lmk
