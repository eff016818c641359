#pragma once

// The safetensors format (Hugging Face): 8-byte little-endian header length N, N bytes of JSON
// header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}},
// then the data buffer. Parsing here is LibTorch-free so it can be fuzzed on its own; the
// tensor views for the model live in engine/embed/model_folder.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lmk {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL };

// Bytes per element.
size_t dtype_size(DType dtype);
// The format's name ("F32", "BF16", ...).
const char* dtype_name(DType dtype);

struct TensorEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // byte range in the data buffer

  // Number of elements (product of the shape).
  uint64_t elements() const;
};

struct SafetensorsHeader {
  std::vector<TensorEntry> tensors;  // in data-buffer order
  std::map<std::string, std::string> metadata;
  uint64_t data_offset = 0;  // where the data buffer starts in the file
  uint64_t data_size = 0;
};

// The largest header accepted (the format's reference implementation uses 100 MB).
constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

// Parses and checks the header of a safetensors file whose bytes are `file` (the whole file,
// or at least its first 8 + N bytes with `file_size` the real size). Every rule of the format
// is checked: header length bounded by the file and kMaxSafetensorsHeader, a JSON object, no
// duplicate names, known dtypes, non-negative shapes, data_offsets consistent with shape × dtype,
// offsets tiling the data buffer exactly (no gap, no overlap). Throws InputError naming `where`
// and the tensor or field.
SafetensorsHeader parse_safetensors_header(std::string_view file, uint64_t file_size,
                                           const std::string& where);

// A safetensors file mapped read-only into memory.
class SafetensorsFile {
 public:
  // Maps and checks path; throws InputError.
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const SafetensorsHeader& header() const { return header_; }
  // The entry called name, or null.
  const TensorEntry* find(std::string_view name) const;
  // The raw little-endian bytes of a tensor (valid while this object lives).
  std::string_view bytes(const TensorEntry& entry) const;

 private:
  std::string path_;
  const char* data_ = nullptr;
  size_t size_ = 0;
  SafetensorsHeader header_;
  std::map<std::string, size_t, std::less<>> index_;
};

// One tensor to write: raw little-endian bytes, dtype and shape.
struct TensorToWrite {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  std::string_view bytes;
};

// Writes a safetensors file atomically (temporary file, fsync, rename). Throws InputError when
// a tensor's byte size does not match its shape or names repeat.
void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace lmk
