#include "core/util/toml_config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>

#include "core/util/error.h"

namespace lmk {

struct TomlConfig::Impl {
  std::string path, profile;
  toml::table root;
  std::vector<std::string> profiles;

  // The node of section.key: the profile's when it has one, else the section's.
  toml::node_view<const toml::node> find(const char* section, const char* key) const {
    if (!profile.empty()) {
      const auto node = root["profile"][profile][section][key];
      if (node) return node;
    }
    return root[section][key];
  }
  // "section.key", or "profile.NAME.section.key" when the profile's value is the one read.
  std::string key_path(const char* section, const char* key) const {
    if (!profile.empty() && root["profile"][profile][section][key])
      return "profile." + profile + "." + section + "." + key;
    return std::string(section) + "." + key;
  }
};

namespace {

void check_keys(const toml::table& table, const std::string& path, const std::string& prefix,
                const std::map<std::string, std::vector<std::string>>& known) {
  std::string sections;
  for (const auto& [name, keys] : known) sections += (sections.empty() ? "" : ", ") + name;
  for (const auto& [section, node] : table) {
    const std::string name(section.str());
    if (!known.count(name) || !node.is_table())
      throw input_error(path + ": [" + prefix + name + "]", "unknown section (" + sections + ")");
    const auto& keys = known.at(name);
    for (const auto& [key, value] : *node.as_table()) {
      (void)value;
      if (std::find(keys.begin(), keys.end(), std::string(key.str())) == keys.end())
        throw input_error(path + ": " + prefix + name + "." + std::string(key.str()),
                          "unknown key");
    }
  }
}

}  // namespace

TomlConfig::TomlConfig(const std::string& path,
                       const std::map<std::string, std::vector<std::string>>& known,
                       const std::vector<std::string>& profiles)
    : impl_(std::make_unique<Impl>()) {
  impl_->profiles = profiles;
  impl_->path = path;
  try {
    impl_->root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw input_error(path + ":" + std::to_string(e.source().begin.line),
                      std::string(e.description()));
  }
  toml::table sections = impl_->root;
  if (!profiles.empty() && sections.contains("profile")) {
    const toml::node* node = sections.get("profile");
    if (!node->is_table()) throw input_error(path + ": profile", "must be a table");
    std::string names;
    for (const auto& p : profiles) names += (names.empty() ? "" : ", ") + p;
    for (const auto& [name, table] : *node->as_table()) {
      const std::string profile(name.str());
      if (std::find(profiles.begin(), profiles.end(), profile) == profiles.end() ||
          !table.is_table())
        throw input_error(path + ": [profile." + profile + "]", "unknown profile (" + names + ")");
      check_keys(*table.as_table(), path, "profile." + profile + ".", known);
    }
    sections.erase("profile");
  }
  check_keys(sections, path, "", known);
}

TomlConfig::~TomlConfig() = default;

void TomlConfig::use_profile(const std::string& name) {
  if (std::find(impl_->profiles.begin(), impl_->profiles.end(), name) == impl_->profiles.end()) {
    std::string names;
    for (const auto& p : impl_->profiles) names += (names.empty() ? "" : ", ") + p;
    throw input_error("--profile", "unknown profile '" + name + "' (" + names + ")");
  }
  impl_->profile = name;
}

std::string TomlConfig::where(const char* section, const char* key) const {
  return impl_->path + ": " + impl_->key_path(section, key);
}

void TomlConfig::boolean(const char* section, const char* key, bool& out) const {
  const auto node = impl_->find(section, key);
  if (!node) return;
  if (!node.is_boolean()) throw input_error(where(section, key), "must be true or false");
  out = node.value<bool>().value();
}

void TomlConfig::texts(const char* section, const char* key, std::vector<std::string>& out) const {
  const auto node = impl_->find(section, key);
  if (!node) return;
  if (!node.is_array() || node.as_array()->empty())
    throw input_error(where(section, key), "must be a non-empty array of strings");
  std::vector<std::string> values;
  for (const auto& item : *node.as_array()) {
    if (!item.is_string()) throw input_error(where(section, key), "must hold strings only");
    values.push_back(item.value<std::string>().value());
  }
  out = std::move(values);
}

void TomlConfig::integers(const char* section, const char* key, std::vector<int64_t>& out,
                          int64_t min) const {
  const auto node = impl_->find(section, key);
  if (!node) return;
  if (!node.is_array() || node.as_array()->empty())
    throw input_error(where(section, key), "must be a non-empty array of integers");
  std::vector<int64_t> values;
  for (const auto& item : *node.as_array()) {
    if (!item.is_integer()) throw input_error(where(section, key), "must hold integers only");
    values.push_back(item.value<int64_t>().value());
    if (values.back() < min)
      throw input_error(where(section, key), "values must be >= " + std::to_string(min));
  }
  out = std::move(values);
}

void TomlConfig::text(const char* section, const char* key, std::string& out) const {
  const auto node = impl_->find(section, key);
  if (!node) return;
  if (!node.is_string()) throw input_error(where(section, key), "must be a string");
  out = node.value<std::string>().value();
}

void TomlConfig::integer(const char* section, const char* key, int64_t& out, int64_t min) const {
  const auto node = impl_->find(section, key);
  if (!node) return;
  if (!node.is_integer()) throw input_error(where(section, key), "must be an integer");
  out = node.value<int64_t>().value();
  if (out < min) throw input_error(where(section, key), "must be >= " + std::to_string(min));
}

void TomlConfig::number(const char* section, const char* key, double& out, double min,
                        double max) const {
  const auto node = impl_->find(section, key);
  if (!node) return;
  if (!node.is_number()) throw input_error(where(section, key), "must be a number");
  out = node.value<double>().value();
  if (!(out >= min && out <= max))
    throw input_error(where(section, key),
                      "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
}

std::string TomlConfig::resolve(const std::string& path) const {
  namespace fs = std::filesystem;
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(impl_->path).parent_path() / path).lexically_normal().string();
}

}  // namespace lmk
