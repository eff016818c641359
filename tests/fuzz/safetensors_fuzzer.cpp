// libFuzzer target for the safetensors header parser: any bytes either parse into a header
// whose tensors lie inside the file, or are rejected with an InputError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/model/safetensors.h"
#include "core/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  try {
    const lmk::SafetensorsHeader header =
        lmk::parse_safetensors_header(file, size, "fuzz.safetensors");
    for (const auto& t : header.tensors) {
      if (header.data_offset + t.end > size || t.begin > t.end)
        std::abort();  // would read out of bounds
    }
  } catch (const lmk::InputError&) {
  }
  return 0;
}
