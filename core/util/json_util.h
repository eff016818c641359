#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/util/error.h"

// Typed access to fields of untrusted JSON: a missing or mistyped field is an InputError that
// names its path ("tokenizer.json: model.vocab: ...").
namespace lmk::json_util {

using nlohmann::json;

// Path of a member below `where`.
inline std::string member_path(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

// Deeper JSON is refused: nlohmann's copy and dump recurse once per level, and a text of
// brackets would overflow the stack (found by the dataset fuzzer). Real files nest a few levels.
constexpr size_t kMaxJsonDepth = 100;

// The deepest nesting of arrays and objects in JSON text (brackets in strings do not count).
inline size_t nesting_depth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// Parses JSON text; any JSON error (syntax, number overflow, nesting deeper than
// kMaxJsonDepth, ...) is an InputError naming where.
inline json parse(std::string_view text, const std::string& where) {
  if (nesting_depth(text) > kMaxJsonDepth) {
    throw input_error(where,
                      "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw input_error(where, std::string("invalid JSON: ") + e.what());
  }
}

// Converts a JSON value to T; integers must fit T (no silent truncation).
template <typename T>
T convert(const json& value, const std::string& path) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (!value.is_number_integer()) {
      throw input_error(path, "expected an integer, got " + std::string(value.type_name()));
    }
    const bool fits =
        value.is_number_unsigned()
            ? value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
            : value.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                  (std::is_unsigned_v<T> ||
                   value.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max()));
    if (!fits) throw input_error(path, "integer " + value.dump() + " is out of range");
    return value.is_number_unsigned() ? static_cast<T>(value.get<uint64_t>())
                                      : static_cast<T>(value.get<int64_t>());
  } else {
    try {
      return value.get<T>();
    } catch (const json::exception&) {
      throw input_error(path, "has the wrong type (" + std::string(value.type_name()) + ")");
    }
  }
}

// Returns j[key]; throws when j is not an object or key is absent.
inline const json& required(const json& j, const std::string& key, const std::string& where) {
  if (!j.is_object()) throw input_error(where, "expected an object");
  auto it = j.find(key);
  if (it == j.end()) throw input_error(member_path(where, key), "missing");
  return *it;
}

// Returns j[key] as a T, or fallback when absent or null.
template <typename T>
T optional(const json& j, const std::string& key, const std::string& where, T fallback) {
  if (!j.is_object()) throw input_error(where, "expected an object");
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return convert<T>(*it, member_path(where, key));
}

// Returns j[key] as a T; throws when absent or mistyped.
template <typename T>
T get(const json& j, const std::string& key, const std::string& where) {
  return convert<T>(required(j, key, where), member_path(where, key));
}

// Calls fn(element, path) for each element of the array j[key] ("where.key[i]").
template <typename Fn>
void for_each_element(const json& j, const std::string& key, const std::string& where, Fn&& fn) {
  const json& list = required(j, key, where);
  const std::string path = member_path(where, key);
  if (!list.is_array()) throw input_error(path, "expected an array");
  for (size_t i = 0; i < list.size(); ++i) fn(list[i], path + "[" + std::to_string(i) + "]");
}

}  // namespace lmk::json_util
