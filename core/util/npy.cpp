#include "core/util/npy.h"

#include <cstring>
#include <regex>

#include "core/util/error.h"
#include "core/util/file.h"

namespace lmk {

void write_npy_float32(const std::string& path, const float* data, int64_t rows, int64_t cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  // magic (6) + version (2) + length (2) + header + '\n' must be a multiple of 64.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string prefix("\x93NUMPY\x01\x00", 8);
  prefix.push_back(static_cast<char>(header.size() & 0xFF));
  prefix.push_back(static_cast<char>((header.size() >> 8) & 0xFF));
  AtomicFile out(path);
  out.write(prefix);
  out.write(header);
  out.write(std::string_view(reinterpret_cast<const char*>(data),
                             static_cast<size_t>(rows * cols) * sizeof(float)));
  out.commit();
}

std::vector<float> read_npy_float32(const std::string& path, int64_t& rows, int64_t& cols) {
  const std::string bytes = read_file(path);
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    throw input_error(path, "not a .npy file");
  const size_t header_length =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  if (10 + header_length > bytes.size()) throw input_error(path, "truncated header");
  const std::string header = bytes.substr(10, header_length);
  std::smatch m;
  if (!std::regex_search(
          header, m,
          std::regex(R"('descr': '<f4'.*'fortran_order': False.*'shape': \((\d+), (\d+)\))"))) {
    throw input_error(path, "expected a C-order float32 matrix, header " + header);
  }
  rows = std::stoll(m[1]);
  cols = std::stoll(m[2]);
  const size_t expected = static_cast<size_t>(rows * cols) * sizeof(float);
  if (bytes.size() - 10 - header_length != expected)
    throw input_error(path, "data size does not match the shape");
  std::vector<float> data(static_cast<size_t>(rows * cols));
  std::memcpy(data.data(), bytes.data() + 10 + header_length, expected);
  return data;
}

}  // namespace lmk
