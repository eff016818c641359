#pragma once

// A TOML config file read key by key with checks: unknown sections and keys, wrong types and
// out-of-range values are InputErrors naming "file: section.key" (syntax errors "file:LINE").

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace lmk {

class TomlConfig {
 public:
  // Parses path; `known` lists every allowed key per section. With `profiles`, the file may
  // also hold [profile.NAME.SECTION] tables (NAME one of them) with the same keys; after
  // use_profile(NAME) a key there overrides the one of [SECTION].
  TomlConfig(const std::string& path, const std::map<std::string, std::vector<std::string>>& known,
             const std::vector<std::string>& profiles = {});
  void use_profile(const std::string& name);
  ~TomlConfig();

  // Each reader leaves `out` as it is when the key is absent.
  void text(const char* section, const char* key, std::string& out) const;
  void integer(const char* section, const char* key, int64_t& out, int64_t min) const;
  void number(const char* section, const char* key, double& out, double min, double max) const;
  void boolean(const char* section, const char* key, bool& out) const;
  // Arrays: every element must have the type (an empty array is an error).
  void texts(const char* section, const char* key, std::vector<std::string>& out) const;
  void integers(const char* section, const char* key, std::vector<int64_t>& out, int64_t min) const;
  // A path relative to the config's folder (absolute ones and "" are kept).
  std::string resolve(const std::string& path) const;
  // "file: section.key", for messages about a value.
  std::string where(const char* section, const char* key) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lmk
