#pragma once

// A TOML config file read key by key with checks: unknown sections and keys, wrong types and
// out-of-range values are InputErrors naming "file: section.key" (syntax errors "file:LINE").

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lmk {

// TOML values as text, for what writes a config (settings_toml, core/util/settings.h):
// a basic string ("..." with \" and \\ escaped, control characters as \uXXXX), and a number
// in at most 10 significant digits where that reads back exactly, else in the shortest form
// that does (1e-05, 0.0003, 1000000).
std::string toml_string(const std::string& text);
std::string toml_number(double value);

class TomlConfig {
 public:
  // Parses path; `known` lists every allowed key per section. With `profiles`, the file may
  // also hold [profile.NAME.SECTION] tables (NAME one of them) with the same keys; after
  // use_profile(NAME) a key there overrides the one of [SECTION].
  //
  // With `sweep`, the file may also hold a [sweep] table: each key names another key as
  // "section.key" (quoted) and holds the array of values it takes; the grid is the product of
  // these axes, in file order, the first varying slowest. [[sweep.zip]] tables are axes of
  // their own whose arrays (of equal length) advance together. Every cell's values are checked
  // by the same readers as the file's, after use_cell().
  TomlConfig(const std::string& path, const std::map<std::string, std::vector<std::string>>& known,
             const std::vector<std::string>& profiles = {}, bool sweep = false);
  void use_profile(const std::string& name);
  // The grid's cells (1 without a [sweep] table).
  size_t cell_count() const;
  // "granularity=16,seed=1": each axis key (its last part, or the whole "section.key" when two
  // axes share it) = the cell's value; "" without a sweep.
  std::string cell_name(size_t index) const;
  // The cell's (label, value) pairs, in axis order (cell_name joins them).
  std::vector<std::pair<std::string, std::string>> cell_values(size_t index) const;
  // The label of section.key in the cells' (label, value) pairs; "" when no axis sweeps it.
  std::string sweep_label(const char* section, const char* key) const;
  // From now on the keys of cell `index` override the profile's and the sections' values.
  void use_cell(size_t index);
  ~TomlConfig();

  // Each reader leaves `out` as it is when the key is absent.
  void text(const char* section, const char* key, std::string& out) const;
  void integer(const char* section, const char* key, int64_t& out, int64_t min) const;
  void number(const char* section, const char* key, double& out, double min, double max) const;
  void boolean(const char* section, const char* key, bool& out) const;
  // Arrays: every element must have the type (an empty array is an error, unless empty_ok).
  void texts(const char* section, const char* key, std::vector<std::string>& out,
             bool empty_ok = false) const;
  void integers(const char* section, const char* key, std::vector<int64_t>& out, int64_t min) const;
  void numbers(const char* section, const char* key, std::vector<double>& out, double min,
               double max) const;
  // A string or a non-empty array of strings (one path, or several; [] too when empty_ok).
  void text_or_texts(const char* section, const char* key, std::vector<std::string>& out,
                     bool empty_ok = false) const;
  // A path relative to the config's folder (absolute ones and "" are kept).
  std::string resolve(const std::string& path) const;
  // "file: section.key", for messages about a value.
  std::string where(const char* section, const char* key) const;

 private:
  void read_sweep(const std::map<std::string, std::vector<std::string>>& known);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lmk
