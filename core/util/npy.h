#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lmk {

// Writes a NumPy .npy file (format 1.0) holding a C-order float32 matrix [rows, cols], atomically.
void write_npy_float32(const std::string& path, const float* data, int64_t rows, int64_t cols);

// Reads a .npy float32 C-order matrix written by write_npy_float32 (for tests and tools);
// throws InputError on anything else.
std::vector<float> read_npy_float32(const std::string& path, int64_t& rows, int64_t& cols);

}  // namespace lmk
