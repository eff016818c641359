#pragma once

// What the tests of a distributed run's environment share (tests/core/dist/*_test.cpp): reading
// the launcher's variables from a map instead of this process's environment.

#include <map>
#include <string>

#include "core/dist/launcher_env.h"

namespace lmk::testing {

using Variables = std::map<std::string, std::string>;

// read_distributed_env over `variables` (a name not in it is unset).
inline DistributedEnv read(const Variables& variables) {
  return read_distributed_env([&](const char* name) -> const char* {
    const auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  });
}

}  // namespace lmk::testing
