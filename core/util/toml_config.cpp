#include "core/util/toml_config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>

#include "core/util/error.h"

namespace lmk {

struct TomlConfig::Impl {
  std::string path;
  toml::table root;
};

TomlConfig::TomlConfig(const std::string& path,
                       const std::map<std::string, std::vector<std::string>>& known)
    : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  try {
    impl_->root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw input_error(path + ":" + std::to_string(e.source().begin.line),
                      std::string(e.description()));
  }
  std::string sections;
  for (const auto& [name, keys] : known) sections += (sections.empty() ? "" : ", ") + name;
  for (const auto& [section, node] : impl_->root) {
    const std::string name(section.str());
    if (!known.count(name) || !node.is_table())
      throw input_error(path + ": [" + name + "]", "unknown section (" + sections + ")");
    const auto& keys = known.at(name);
    for (const auto& [key, value] : *node.as_table()) {
      (void)value;
      if (std::find(keys.begin(), keys.end(), std::string(key.str())) == keys.end())
        throw input_error(path + ": " + name + "." + std::string(key.str()), "unknown key");
    }
  }
}

TomlConfig::~TomlConfig() = default;

std::string TomlConfig::where(const char* section, const char* key) const {
  return impl_->path + ": " + section + "." + key;
}

void TomlConfig::text(const char* section, const char* key, std::string& out) const {
  const auto node = impl_->root[section][key];
  if (!node) return;
  if (!node.is_string()) throw input_error(where(section, key), "must be a string");
  out = node.value<std::string>().value();
}

void TomlConfig::integer(const char* section, const char* key, int64_t& out, int64_t min) const {
  const auto node = impl_->root[section][key];
  if (!node) return;
  if (!node.is_integer()) throw input_error(where(section, key), "must be an integer");
  out = node.value<int64_t>().value();
  if (out < min) throw input_error(where(section, key), "must be >= " + std::to_string(min));
}

void TomlConfig::number(const char* section, const char* key, double& out, double min,
                        double max) const {
  const auto node = impl_->root[section][key];
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
