#pragma once

// toml++ 3.3.0 (Debian 12's libtomlplusplus-dev) reaches __builtin_unreachable — undefined
// behaviour, seen by the study document fuzzer under UBSan — when it checks a non-ASCII
// character for whitespace: one outside strings and comments, or the first one after a
// line-ending backslash in a multi-line basic string (marzer/tomlplusplus#190 and #295, fixed
// upstream after 3.3.0). Every toml++ parse of text we did not write goes through this check
// first; such text is not valid TOML anyway.

#include <string>
#include <string_view>

namespace lmk {

// "" when toml++ can be given `text`; else why not: "line N: character U+XXXX outside a
// string or comment" (or "... after a line-ending backslash").
std::string toml_unsafe_text(std::string_view text);

}  // namespace lmk
