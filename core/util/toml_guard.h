#pragma once

// toml++ 3.3.0 (Debian 12's libtomlplusplus-dev) reaches __builtin_unreachable — undefined
// behaviour, seen by the study document fuzzer under UBSan — when it checks a non-ASCII
// character for whitespace (marzer/tomlplusplus#190 and #295, fixed upstream after 3.3.0): one
// outside strings and comments, inside what it reads as a bare value (quotes included), or right
// after a backslash (and spaces, and with a line-ending one the newlines) in a string. Every
// toml++ parse of text we did not write goes through this check first. Only the last case can
// be valid TOML (a line-ending backslash before a line that starts with such a character); the
// message says where, so the user can keep the character on the backslash's line.

#include <string>
#include <string_view>

namespace lmk {

// "" when toml++ can be given `text`; else why not: "line N: character U+XXXX outside a
// string or comment" (or "... after a line-ending backslash").
std::string toml_unsafe_text(std::string_view text);

}  // namespace lmk
