#pragma once

#include <stdexcept>
#include <string>

namespace lmk {

// A bad input (file, line, field or option): main() prints the message and exits with 2.
// The message names where the problem is, e.g. "tokenizer.json: model.merges[12]: ...".
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A command that stopped on request (a stop signal, core/util/runtime.h) after saving what it
// needs to continue: main() prints the message and exits with 75 (EX_TEMPFAIL: run it again to
// continue, e.g. lmk train --auto-resume).
class Stopped : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit code of a command that stopped on request (Stopped).
constexpr int kExitStopped = 75;

// Builds an InputError whose message starts with "where: ".
inline InputError input_error(const std::string& where, const std::string& what) {
  return InputError(where.empty() ? what : where + ": " + what);
}

}  // namespace lmk
