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

// A field of a core options struct out of its range or at odds with another field: what() is
// "<field>: <message>" with the struct's field name ("hidden_size: must be > 0"), so core names
// what it knows. The caller that knows where the value came from says so: the CLI names its
// option ("--hidden-size", one rule in app/commands.cpp).
class FieldError : public InputError {
 public:
  FieldError(const std::string& field, const std::string& message)
      : InputError(field + ": " + message), field_(field), message_(message) {}
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }

 private:
  std::string field_, message_;
};

// Builds an InputError whose message starts with "where: ".
inline InputError input_error(const std::string& where, const std::string& what) {
  return InputError(where.empty() ? what : where + ": " + what);
}

}  // namespace lmk
