#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/util/error.h"

// Typed access to fields of untrusted JSON: a missing or mistyped field is an InputError that
// names its path ("tokenizer.json: model.vocab: ...").
namespace lmk::json_util {

using nlohmann::json;

// Path of a member below `where`.
inline std::string member_path(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
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
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw input_error(member_path(where, key),
                      "has the wrong type (" + std::string(it->type_name()) + ")");
  }
}

// Returns j[key] as a T; throws when absent or mistyped.
template <typename T>
T get(const json& j, const std::string& key, const std::string& where) {
  const json& value = required(j, key, where);
  try {
    return value.get<T>();
  } catch (const json::exception&) {
    throw input_error(member_path(where, key),
                      "has the wrong type (" + std::string(value.type_name()) + ")");
  }
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
