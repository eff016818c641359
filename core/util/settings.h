#pragma once

// A config's settings as one table. Each entry names a TOML key (section.key), the member of
// the config struct that holds it, and its checks; the table is the one place that drives
//   - the keys TomlConfig accepts (setting_keys),
//   - reading them with their range and value checks, required keys and relative paths
//     (read_settings),
//   - the JSON a run records of them (settings_json: the entries marked recorded),
//   - the workbench's designer form (label, hint; the default shown is the struct's own,
//     setting_default_text),
//   - the TOML a study writes of them for the commands it runs (settings_toml).
// An entry whose reading needs more than one key (defaults computed from other keys, built-in
// names) holds no member: its config's reader reads it, and the table still lists it.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/util/error.h"
#include "core/util/text_table.h"
#include "core/util/toml_config.h"

namespace lmk {

template <class Config>
struct Setting {
  using Member =
      std::variant<std::monostate, std::string Config::*, int64_t Config::*, uint64_t Config::*,
                   double Config::*, bool Config::*, std::vector<std::string> Config::*,
                   std::vector<int64_t> Config::*, std::vector<double> Config::*>;
  // Checks one text value (each element of a list of texts); throws an InputError naming where.
  using Check = void (*)(const std::string& value, const std::string& where);

  Setting(const char* section_, const char* key_, Member member_ = std::monostate{})
      : section(section_), key(key_), member(member_) {}

  const char* section;
  const char* key;
  Member member;            // monostate: read by the config's own reader
  double min = 0, max = 0;  // integers: the least value (range: and the most); numbers: the range
  bool ranged = false;      // at_least or range declared (every numeric entry has one)
  bool is_recorded = false, is_path = false, is_required = false, one_or_many = false,
       empty_ok = false;
  Check check = nullptr;
  const char* label = nullptr;  // the designer's label; none: not in the form
  const char* hint = nullptr;   // the designer's placeholder; none: the default value

  // Integers (and lists of them) at least `least`; numbers (and lists), and single integers,
  // within [low, high].
  Setting at_least(double least) const {
    return with([&](Setting& s) { s.min = least, s.ranged = true; });
  }
  Setting range(double low, double high) const {
    return with([&](Setting& s) { s.min = low, s.max = high, s.ranged = true; });
  }
  // The run records it (settings_json): it changes what a run computes.
  Setting recorded() const {
    return with([](Setting& s) { s.is_recorded = true; });
  }
  // A path, resolved against the config's folder.
  Setting path() const {
    return with([](Setting& s) { s.is_path = true; });
  }
  // Must be present and not empty.
  Setting required() const {
    return with([](Setting& s) { s.is_required = true; });
  }
  // A list of texts that may also be written as one text (recorded as one text then).
  Setting one_text_or_many() const {
    return with([](Setting& s) { s.one_or_many = true; });
  }
  // A list that may be empty ([]: none); lists are non-empty otherwise.
  Setting may_be_empty() const {
    return with([](Setting& s) { s.empty_ok = true; });
  }
  Setting checked(Check c) const {
    return with([&](Setting& s) { s.check = c; });
  }
  Setting form(const char* label_, const char* hint_ = nullptr) const {
    return with([&](Setting& s) { s.label = label_, s.hint = hint_; });
  }

 private:
  template <class F>
  Setting with(F&& change) const {
    Setting copy = *this;
    change(copy);
    return copy;
  }
};

template <class Config>
using SettingsTable = std::vector<Setting<Config>>;

// Whether the entry's member holds numbers (integers, numbers, lists of them): such an entry
// declares its range (at_least / range; SettingsRangesTest checks every table).
template <class Config>
bool is_numeric_setting(const Setting<Config>& s) {
  return std::visit(
      [](auto member) {
        using M = decltype(member);
        if constexpr (std::is_same_v<M, std::monostate>) {
          return false;
        } else {
          using T = std::decay_t<decltype(std::declval<Config>().*member)>;
          return std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t> ||
                 std::is_same_v<T, double> || std::is_same_v<T, std::vector<int64_t>> ||
                 std::is_same_v<T, std::vector<double>>;
        }
      },
      s.member);
}

// Adds every entry's key to TomlConfig's list of known keys per section.
template <class Config>
void add_setting_keys(std::map<std::string, std::vector<std::string>>& known,
                      const SettingsTable<Config>& table) {
  for (const Setting<Config>& s : table) known[s.section].push_back(s.key);
}

namespace settings_detail {

template <class Config>
void read_value(const TomlConfig& toml, const Setting<Config>& s, std::string& out) {
  toml.text(s.section, s.key, out);
  if (s.is_path) out = toml.resolve(out);
  if (s.check) s.check(out, toml.where(s.section, s.key));
}
template <class Config>
void read_value(const TomlConfig& toml, const Setting<Config>& s, int64_t& out) {
  toml.integer(s.section, s.key, out, static_cast<int64_t>(s.min));
  if (s.max > s.min && static_cast<double>(out) > s.max)
    throw input_error(toml.where(s.section, s.key),
                      "must be <= " + std::to_string(static_cast<int64_t>(s.max)));
}
template <class Config>
void read_value(const TomlConfig& toml, const Setting<Config>& s, uint64_t& out) {
  auto value = static_cast<int64_t>(out);
  toml.integer(s.section, s.key, value, std::max<int64_t>(0, static_cast<int64_t>(s.min)));
  out = static_cast<uint64_t>(value);
}
template <class Config>
void read_value(const TomlConfig& toml, const Setting<Config>& s, double& out) {
  toml.number(s.section, s.key, out, s.min, s.max);
}
template <class Config>
void read_value(const TomlConfig& toml, const Setting<Config>& s, bool& out) {
  toml.boolean(s.section, s.key, out);
}
template <class Config>
void read_value(const TomlConfig& toml, const Setting<Config>& s, std::vector<std::string>& out) {
  if (s.one_or_many)
    toml.text_or_texts(s.section, s.key, out, s.empty_ok);
  else
    toml.texts(s.section, s.key, out, s.empty_ok);
  for (std::string& value : out) {
    if (s.is_path) value = toml.resolve(value);
    if (s.check) s.check(value, toml.where(s.section, s.key));
  }
}
template <class Config>
void read_value(const TomlConfig& toml, const Setting<Config>& s, std::vector<int64_t>& out) {
  toml.integers(s.section, s.key, out, static_cast<int64_t>(s.min));
}
template <class Config>
void read_value(const TomlConfig& toml, const Setting<Config>& s, std::vector<double>& out) {
  toml.numbers(s.section, s.key, out, s.min, s.max);
}

template <class T>
bool is_empty(const T& value) {
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<std::string>>)
    return value.empty();
  return false;
}

}  // namespace settings_detail

// Reads every entry that holds a member; a key the file leaves out keeps the member's value.
template <class Config>
void read_settings(const TomlConfig& toml, const SettingsTable<Config>& table, Config& config) {
  for (const Setting<Config>& s : table) {
    std::visit(
        [&](auto member) {
          if constexpr (!std::is_same_v<decltype(member), std::monostate>) {
            auto& value = config.*member;
            settings_detail::read_value(toml, s, value);
            if (s.is_required && settings_detail::is_empty(value))
              throw input_error(toml.where(s.section, s.key), "required");
          }
        },
        s.member);
  }
}

// The recorded entries as {"section": {"key": value}} (merged into `into`).
template <class Config>
void add_settings_json(nlohmann::json& into, const SettingsTable<Config>& table,
                       const Config& config) {
  for (const Setting<Config>& s : table) {
    if (!s.is_recorded) continue;
    std::visit(
        [&](auto member) {
          if constexpr (!std::is_same_v<decltype(member), std::monostate>) {
            const auto& value = config.*member;
            if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::vector<std::string>>) {
              // One text stays a string, as configs written before lists were allowed had it.
              if (s.one_or_many && value.size() == 1) {
                into[s.section][s.key] = value.front();
                return;
              }
            }
            into[s.section][s.key] = value;
          }
        },
        s.member);
  }
}

namespace settings_detail {

template <class T>
std::string toml_value(const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    return toml_string(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_same_v<T, double>) {
    return toml_number(value);
  } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
    return std::to_string(value);
  } else {
    std::string list = "[";
    for (const auto& element : value) list += (list.size() > 1 ? ", " : "") + toml_value(element);
    return list + "]";
  }
}

// "key = value\n" of the entry section.key of `table` into `out`; false when the table has none.
template <class Config, class Base>
bool put_toml_entry(std::string& out, const Config& config, const std::string& section,
                    const std::string& key, const SettingsTable<Base>& table) {
  for (const Setting<Base>& s : table) {
    if (section != s.section || key != s.key) continue;
    std::visit(
        [&](auto member) {
          if constexpr (std::is_same_v<decltype(member), std::monostate>) {
            throw std::logic_error("settings_toml: " + section + "." + key +
                                   " is read by its config's reader, not the table");
          } else {
            out += key + " = " + toml_value(static_cast<const Base&>(config).*member) + "\n";
          }
        },
        s.member);
    return true;
  }
  return false;
}

}  // namespace settings_detail

// The entries `keys` ("section.key", in that order) of `config` as TOML text, each taken from
// the first of `tables` (the config's table and those of its bases) that lists it, with a
// [section] header before each section's first key. One section's keys come together (a section
// named again after another would be a table TOML reads as defined twice: a logic_error, as is
// a key no table lists).
template <class Config, class... Bases>
std::string settings_toml(const Config& config, const std::vector<std::string>& keys,
                          const SettingsTable<Bases>&... tables) {
  std::string out, section;
  std::vector<std::string> done;  // sections written
  for (const std::string& name : keys) {
    const size_t dot = name.find('.');
    const std::string entry_section = name.substr(0, dot), key = name.substr(dot + 1);
    if (entry_section != section) {
      if (std::find(done.begin(), done.end(), entry_section) != done.end())
        throw std::logic_error("settings_toml: [" + entry_section + "] named twice");
      section = entry_section;
      done.push_back(section);
      out += "[" + section + "]\n";
    }
    if (!(settings_detail::put_toml_entry(out, config, section, key, tables) || ...))
      throw std::logic_error("settings_toml: no setting " + name);
  }
  return out;
}

// The value a default-constructed Config holds for the entry, as the designer shows it ("" for
// entries without a member).
template <class Config>
std::string setting_default_text(const Setting<Config>& s) {
  static const Config defaults{};
  return std::visit(
      [&](auto member) -> std::string {
        using M = decltype(member);
        if constexpr (std::is_same_v<M, std::monostate>) {
          return "";
        } else {
          const auto& value = defaults.*member;
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, std::string>) return value;
          if constexpr (std::is_same_v<T, bool>) return value ? "true" : "false";
          if constexpr (std::is_same_v<T, double>) return exact_number(value);
          if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>)
            return std::to_string(value);
          if constexpr (std::is_same_v<T, std::vector<std::string>> ||
                        std::is_same_v<T, std::vector<int64_t>> ||
                        std::is_same_v<T, std::vector<double>>) {
            std::string text;
            for (const auto& element : value) {
              if (!text.empty()) text += ", ";
              if constexpr (std::is_same_v<T, std::vector<std::string>>)
                text += element;
              else if constexpr (std::is_same_v<T, std::vector<double>>)
                text += exact_number(element);
              else
                text += std::to_string(element);
            }
            return text;
          }
        }
      },
      s.member);
}

}  // namespace lmk
