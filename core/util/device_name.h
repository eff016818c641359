#pragma once

// What a device name may be — "cpu", "cuda", "cuda:N" — read in one place (lmkcore, no
// LibTorch): the model commands' --device (engine/embed parse_device, which then asks the machine)
// and a study's [study] device (checked where it is planned, run on another machine) take the
// same names. They disagreed: `cuda:+1` and `cuda: 1` passed lmk eval and failed in a study.

#include <optional>
#include <string>

namespace lmk {

struct DeviceName {
  bool cuda = false;
  int index = -1;  // cuda:N's N; -1 for cpu and plain cuda
};

// The device `name` names, or nullopt when it is not "cpu", "cuda" or "cuda:" and decimal digits
// (no sign, space or other character; at most 9 digits).
std::optional<DeviceName> read_device_name(const std::string& name);

// The message for a name read_device_name refuses: "'NAME' is not a device (cpu, cuda or
// cuda:N)".
std::string bad_device_message(const std::string& name);

}  // namespace lmk
