#include "core/util/device_name.h"

namespace lmk {

std::optional<DeviceName> read_device_name(const std::string& name) {
  if (name == "cpu") return DeviceName{};
  if (name == "cuda") return DeviceName{true, -1};
  const std::string prefix = "cuda:";
  if (name.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string digits = name.substr(prefix.size());
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return DeviceName{true, std::stoi(digits)};
}

std::string bad_device_message(const std::string& name) {
  return "'" + name + "' is not a device (cpu, cuda or cuda:N)";
}

}  // namespace lmk
