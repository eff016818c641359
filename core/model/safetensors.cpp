#include "core/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "core/util/error.h"
#include "core/util/file.h"

namespace lmk {

using nlohmann::json;

namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::F64, "F64", 8},   {DType::F32, "F32", 4}, {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2}, {DType::I64, "I64", 8}, {DType::I32, "I32", 4},
    {DType::I16, "I16", 2},   {DType::I8, "I8", 1},   {DType::U8, "U8", 1},
    {DType::BOOL, "BOOL", 1},
};

const DTypeInfo& info(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d;
  }
  return kDTypes[1];
}

// a * b, or false on overflow.
bool checked_multiply(uint64_t a, uint64_t b, uint64_t& out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  out = a * b;
  return true;
}

}  // namespace

size_t dtype_size(DType dtype) {
  return info(dtype).size;
}
const char* dtype_name(DType dtype) {
  return info(dtype).name;
}

uint64_t TensorEntry::elements() const {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

namespace {

// One tensor's entry of the header (`name`: `value`), checked against the data buffer's size.
TensorEntry parse_tensor_entry(const std::string& name, const json& value, const std::string& where,
                               uint64_t data_size) {
  const std::string at = where + ": tensor '" + name + "'";
  if (!value.is_object()) throw input_error(at, "expected an object");
  TensorEntry entry;
  entry.name = name;
  const auto dtype = value.find("dtype");
  if (dtype == value.end() || !dtype->is_string())
    throw input_error(at, "dtype missing or not a string");
  const auto* found = std::find_if(std::begin(kDTypes), std::end(kDTypes), [&](const DTypeInfo& d) {
    return dtype->get<std::string>() == d.name;
  });
  if (found == std::end(kDTypes))
    throw input_error(at, "unsupported dtype '" + dtype->get<std::string>() + "'");
  entry.dtype = found->dtype;
  const auto shape = value.find("shape");
  if (shape == value.end() || !shape->is_array())
    throw input_error(at, "shape missing or not an array");
  uint64_t elements = 1;
  for (const auto& d : *shape) {
    if (!d.is_number_unsigned())
      throw input_error(at, "shape holds a value that is not a non-negative integer");
    const uint64_t dim = d.get<uint64_t>();
    if (dim > static_cast<uint64_t>(INT64_MAX) || !checked_multiply(elements, dim, elements)) {
      throw input_error(at, "shape overflows");
    }
    entry.shape.push_back(static_cast<int64_t>(dim));
  }
  const auto offsets = value.find("data_offsets");
  if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 ||
      !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
    throw input_error(at, "data_offsets must be [begin, end] with non-negative integers");
  }
  entry.begin = (*offsets)[0].get<uint64_t>();
  entry.end = (*offsets)[1].get<uint64_t>();
  if (entry.end < entry.begin) throw input_error(at, "data_offsets end before they begin");
  if (entry.end > data_size) {
    throw input_error(at, "data_offsets end at " + std::to_string(entry.end) + ", past the " +
                              std::to_string(data_size) + "-byte data buffer");
  }
  uint64_t bytes = 0;
  if (!checked_multiply(elements, found->size, bytes) || bytes != entry.end - entry.begin) {
    throw input_error(at, "shape × dtype size is " + std::to_string(bytes) +
                              " bytes but data_offsets span " +
                              std::to_string(entry.end - entry.begin));
  }
  return entry;
}

}  // namespace

SafetensorsHeader parse_safetensors_header(std::string_view file, uint64_t file_size,
                                           const std::string& where) {
  if (file_size < 8 || file.size() < 8)
    throw input_error(
        where, "too short for a safetensors header (" + std::to_string(file_size) + " bytes)");
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i)
    header_length = (header_length << 8) | static_cast<unsigned char>(file[static_cast<size_t>(i)]);
  if (header_length > kMaxSafetensorsHeader) {
    throw input_error(
        where, "header length " + std::to_string(header_length) + " exceeds the 100 MB limit");
  }
  if (header_length > file_size - 8) {
    throw input_error(where, "header length " + std::to_string(header_length) +
                                 " runs past the end of the " + std::to_string(file_size) +
                                 "-byte file");
  }
  if (file.size() < 8 + header_length) throw input_error(where, "header not fully read");
  const std::string_view text = file.substr(8, header_length);
  if (text.empty() || text[0] != '{') throw input_error(where, "header is not a JSON object");

  // nlohmann keeps the last of repeated keys; the callback sees every top-level key.
  std::set<std::string> seen;
  std::string duplicate;
  json header;
  try {
    header = json::parse(text, [&](int depth, json::parse_event_t event, json& parsed) {
      if (depth == 1 && event == json::parse_event_t::key &&
          !seen.insert(parsed.get<std::string>()).second) {
        duplicate = parsed.get<std::string>();
      }
      return true;
    });
  } catch (const json::exception& e) {
    throw input_error(where, std::string("header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty())
    throw input_error(where, "tensor '" + duplicate + "' appears twice in the header");
  if (!header.is_object()) throw input_error(where, "header is not a JSON object");

  SafetensorsHeader result;
  result.data_offset = 8 + header_length;
  result.data_size = file_size - result.data_offset;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const json& value = it.value();
    if (name == "__metadata__") {
      if (!value.is_object())
        throw input_error(where + ": __metadata__", "expected an object of strings");
      for (auto m = value.begin(); m != value.end(); ++m) {
        if (!m.value().is_string())
          throw input_error(where + ": __metadata__." + m.key(), "expected a string");
        result.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    result.tensors.push_back(parse_tensor_entry(name, value, where, result.data_size));
  }
  std::sort(result.tensors.begin(), result.tensors.end(),
            [](const TensorEntry& a, const TensorEntry& b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  uint64_t position = 0;
  for (const auto& t : result.tensors) {
    if (t.begin < position)
      throw input_error(where + ": tensor '" + t.name + "'", "overlaps the tensor before it");
    if (t.begin > position) {
      throw input_error(where + ": tensor '" + t.name + "'",
                        "leaves a gap of " + std::to_string(t.begin - position) +
                            " bytes before it in the data buffer");
    }
    position = t.end;
  }
  if (position != result.data_size) {
    throw input_error(where, std::to_string(result.data_size - position) +
                                 " bytes at the end of the data buffer belong to no tensor");
  }
  return result;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw input_error(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw input_error(path, "not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapped == MAP_FAILED) {
      ::close(fd);
      throw input_error(path, std::string("cannot map: ") + std::strerror(errno));
    }
    data_ = static_cast<const char*>(mapped);
  }
  ::close(fd);
  try {
    header_ = parse_safetensors_header(std::string_view(data_ ? data_ : "", size_), size_, path);
  } catch (...) {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
    throw;
  }
  for (size_t i = 0; i < header_.tensors.size(); ++i) index_[header_.tensors[i].name] = i;
}

SafetensorsFile::~SafetensorsFile() {
  if (data_) ::munmap(const_cast<char*>(data_), size_);
}

const TensorEntry* SafetensorsFile::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

std::string_view SafetensorsFile::bytes(const TensorEntry& entry) const {
  return std::string_view(data_ + header_.data_offset + entry.begin, entry.end - entry.begin);
}

void write_safetensors(const std::string& path, const std::vector<TensorToWrite>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  json header = json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (header.contains(t.name)) throw input_error(path, "tensor '" + t.name + "' given twice");
    uint64_t elements = 1;
    for (int64_t d : t.shape) elements *= static_cast<uint64_t>(d);
    if (elements * dtype_size(t.dtype) != t.bytes.size()) {
      throw input_error(path, "tensor '" + t.name + "': " + std::to_string(t.bytes.size()) +
                                  " bytes do not match its shape and dtype");
    }
    header[t.name] = {{"dtype", dtype_name(t.dtype)},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // keeps the data buffer 8-byte aligned
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i)
    prefix[static_cast<size_t>(i)] = static_cast<char>((text.size() >> (8 * i)) & 0xFF);
  AtomicFile out(path);
  out.write(prefix);
  out.write(text);
  for (const auto& t : tensors) out.write(t.bytes);
  out.commit();
}

}  // namespace lmk
