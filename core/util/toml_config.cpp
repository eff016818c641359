#include "core/util/toml_config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <set>
#include <sstream>

#include "core/util/error.h"
#include "core/util/file.h"
#include "core/util/toml_guard.h"

namespace lmk {

std::string toml_string(const std::string& text) {
  std::string quoted = "\"";
  for (char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      quoted += '\\';
      quoted += ch;
    } else if (byte < 0x20 || byte == 0x7f) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", byte);
      quoted += escape;
    } else {
      quoted += ch;
    }
  }
  return quoted + "\"";
}

std::string toml_number(double value) {
  char text[32];
  for (int digits = 10; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

struct TomlConfig::Impl {
  std::string path, profile;
  toml::table root;
  std::vector<std::string> profiles;
  std::vector<toml::table> cells;  // per cell: [section] key = value
  std::vector<std::string> cell_names;
  std::vector<std::vector<std::pair<std::string, std::string>>> cell_values;
  std::map<std::string, std::string> cell_keys;     // "section.key" -> "sweep..." for messages
  std::map<std::string, std::string> sweep_labels;  // "section.key" -> its label in cell names
  int cell = -1;

  // The node of section.key: the sweep cell's, else the profile's, else the section's.
  toml::node_view<const toml::node> find(const char* section, const char* key) const {
    if (cell >= 0) {
      const auto node = cells[static_cast<size_t>(cell)][section][key];
      if (node) return node;
    }
    if (!profile.empty()) {
      const auto node = root["profile"][profile][section][key];
      if (node) return node;
    }
    return root[section][key];
  }
  // "section.key", or "profile.NAME.section.key" when the profile's value is the one read.
  std::string key_path(const char* section, const char* key) const {
    if (cell >= 0 && cells[static_cast<size_t>(cell)][section][key])
      return cell_keys.at(std::string(section) + "." + key) + " (sweep cell " +
             cell_names[static_cast<size_t>(cell)] + ")";
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

// A value as a cell's name shows it: 16, 0.001, lmk:fixed:32, [128,512].
std::string value_text(const toml::node& node) {
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* a = node.as_array()) {
    std::string out;
    for (const auto& item : *a) out += (out.empty() ? "" : ",") + value_text(item);
    return "[" + out + "]";
  }
  std::ostringstream out;
  if (const auto* d = node.as_floating_point()) {
    out << std::setprecision(10) << d->get();
  } else if (const auto* i = node.as_integer()) {
    out << i->get();
  } else if (const auto* b = node.as_boolean()) {
    out << (b->get() ? "true" : "false");
  } else {
    out << "(" << node.type() << ")";  // dates and tables have no short form
  }
  return out.str();
}

// A table's entries in the order they appear in the file (toml++ keeps them sorted by name).
std::vector<std::pair<std::string, const toml::node*>> in_file_order(const toml::table& table) {
  std::vector<std::pair<std::string, const toml::node*>> entries;
  std::vector<std::pair<uint64_t, uint64_t>> where;
  for (const auto& [key, value] : table) {
    entries.emplace_back(std::string(key.str()), &value);
    where.emplace_back(key.source().begin.line, key.source().begin.column);
  }
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return where[a] < where[b]; });
  std::vector<std::pair<std::string, const toml::node*>> sorted;
  for (size_t i : order) sorted.push_back(entries[i]);
  return sorted;
}

}  // namespace

// Expands [sweep] into impl_->cells (see the header).
void TomlConfig::read_sweep(const std::map<std::string, std::vector<std::string>>& known) {
  const toml::node* node = impl_->root.get("sweep");
  if (node == nullptr) return;
  const std::string& path = impl_->path;
  if (!node->is_table()) throw input_error(path + ": sweep", "must be a table");
  struct Axis {
    std::vector<std::pair<std::string, const toml::array*>> keys;  // "section.key", values
    std::vector<std::string> where;
  };
  std::vector<Axis> axes;
  std::set<std::string> seen;
  auto add_key = [&](Axis& axis, const std::string& name, const toml::node& values,
                     const std::string& where) {
    const size_t dot = name.find('.');
    const std::string section = name.substr(0, dot == std::string::npos ? 0 : dot);
    const std::string key = dot == std::string::npos ? "" : name.substr(dot + 1);
    const auto it = known.find(section);
    if (it == known.end() ||
        std::find(it->second.begin(), it->second.end(), key) == it->second.end())
      throw input_error(where, "'" + name + "' is not a key of this config (\"section.key\")");
    if (!seen.insert(name).second) throw input_error(where, "'" + name + "' is swept twice");
    if (!values.is_array() || values.as_array()->empty())
      throw input_error(where, "must be a non-empty array of the values '" + name + "' takes");
    axis.keys.emplace_back(name, values.as_array());
    axis.where.push_back(where);
  };
  for (const auto& [name, value_node] : in_file_order(*node->as_table())) {
    const toml::node& value = *value_node;
    if (name == "zip") {
      if (!value.is_array_of_tables())
        throw input_error(path + ": sweep.zip", "must be [[sweep.zip]] tables");
      size_t z = 0;
      for (const auto& table : *value.as_array()) {
        Axis axis;
        const std::string where = path + ": sweep.zip[" + std::to_string(z++) + "]";
        for (const auto& [zk, zv] : in_file_order(*table.as_table()))
          add_key(axis, zk, *zv, where + ".\"" + zk + "\"");
        if (axis.keys.empty()) throw input_error(where, "is empty");
        for (const auto& [zname, values] : axis.keys) {
          if (values->size() != axis.keys.front().second->size())
            throw input_error(where, "its arrays must have equal lengths ('" + zname + "' has " +
                                         std::to_string(values->size()) + ", '" +
                                         axis.keys.front().first + "' " +
                                         std::to_string(axis.keys.front().second->size()) + ")");
        }
        axes.push_back(std::move(axis));
      }
    } else {
      Axis axis;
      add_key(axis, name, value, path + ": sweep.\"" + name + "\"");
      axes.push_back(std::move(axis));
    }
  }
  if (axes.empty()) return;
  // Labels: the key's last part unless two swept keys share it.
  std::map<std::string, int> last_parts;
  for (const Axis& axis : axes)
    for (const auto& [name, values] : axis.keys) ++last_parts[name.substr(name.find('.') + 1)];
  size_t count = 1;
  for (const Axis& axis : axes) count *= axis.keys.front().second->size();
  if (count > 10000) throw input_error(path + ": sweep", "more than 10000 cells");
  for (const Axis& axis : axes)
    for (size_t k = 0; k < axis.keys.size(); ++k)
      impl_->cell_keys[axis.keys[k].first] = axis.where[k].substr(path.size() + 2);
  for (size_t cell = 0; cell < count; ++cell) {
    toml::table table;
    std::string name;
    std::vector<std::pair<std::string, std::string>> values_of_cell;
    size_t rest = cell;
    std::vector<size_t> index(axes.size());
    for (size_t a = axes.size(); a-- > 0;) {
      const size_t n = axes[a].keys.front().second->size();
      index[a] = rest % n;
      rest /= n;
    }
    for (size_t a = 0; a < axes.size(); ++a) {
      for (const auto& [key_name, values] : axes[a].keys) {
        const size_t dot = key_name.find('.');
        const std::string section = key_name.substr(0, dot), key = key_name.substr(dot + 1);
        if (!table.contains(section)) table.insert(section, toml::table{});
        const toml::node& value = *values->get(index[a]);
        table[section].as_table()->insert(key, value);
        values_of_cell.emplace_back(last_parts[key] > 1 ? key_name : key, value_text(value));
        impl_->sweep_labels[key_name] = values_of_cell.back().first;
        name += (name.empty() ? "" : ",") + values_of_cell.back().first + "=" +
                values_of_cell.back().second;
      }
    }
    impl_->cells.push_back(std::move(table));
    impl_->cell_names.push_back(name);
    impl_->cell_values.push_back(std::move(values_of_cell));
  }
}

std::string TomlConfig::sweep_label(const char* section, const char* key) const {
  const auto found = impl_->sweep_labels.find(std::string(section) + "." + key);
  return found == impl_->sweep_labels.end() ? "" : found->second;
}

size_t TomlConfig::cell_count() const {
  return impl_->cells.empty() ? 1 : impl_->cells.size();
}

std::string TomlConfig::cell_name(size_t index) const {
  return index < impl_->cell_names.size() ? impl_->cell_names[index] : "";
}

std::vector<std::pair<std::string, std::string>> TomlConfig::cell_values(size_t index) const {
  return index < impl_->cell_values.size() ? impl_->cell_values[index]
                                           : std::vector<std::pair<std::string, std::string>>{};
}

void TomlConfig::use_cell(size_t index) {
  if (impl_->cells.empty()) return;
  if (index >= impl_->cells.size()) throw std::out_of_range("TomlConfig::use_cell");
  impl_->cell = static_cast<int>(index);
}

TomlConfig::TomlConfig(const std::string& path,
                       const std::map<std::string, std::vector<std::string>>& known,
                       const std::vector<std::string>& profiles, bool sweep)
    : impl_(std::make_unique<Impl>()) {
  impl_->profiles = profiles;
  impl_->path = path;
  const std::string text = read_file(path);
  if (const std::string unsafe = toml_unsafe_text(text); !unsafe.empty())
    throw input_error(path, unsafe);
  try {
    impl_->root = toml::parse(text, path);
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
  if (sweep && sections.contains("sweep")) {
    sections.erase("sweep");
    read_sweep(known);
  }
  check_keys(sections, path, "", known);
}

TomlConfig::~TomlConfig() = default;

void TomlConfig::use_profile(const std::string& name) {
  if (std::find(impl_->profiles.begin(), impl_->profiles.end(), name) == impl_->profiles.end()) {
    std::string names;
    for (const auto& p : impl_->profiles) names += (names.empty() ? "" : ", ") + p;
    throw FieldError("profile", "unknown profile '" + name + "' (" + names + ")");
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

void TomlConfig::texts(const char* section, const char* key, std::vector<std::string>& out,
                       bool empty_ok) const {
  const auto node = impl_->find(section, key);
  if (!node) return;
  if (!node.is_array() || (node.as_array()->empty() && !empty_ok))
    throw input_error(where(section, key), empty_ok ? "must be an array of strings"
                                                    : "must be a non-empty array of strings");
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

void TomlConfig::numbers(const char* section, const char* key, std::vector<double>& out, double min,
                         double max) const {
  const auto node = impl_->find(section, key);
  if (!node) return;
  if (!node.is_array() || node.as_array()->empty())
    throw input_error(where(section, key), "must be a non-empty array of numbers");
  std::vector<double> values;
  for (const auto& item : *node.as_array()) {
    if (!item.is_number()) throw input_error(where(section, key), "must hold numbers only");
    const double value = item.value<double>().value();
    if (!(value >= min && value <= max)) {
      std::ostringstream range;
      range << "each must be in [" << min << ", " << max << "]";
      throw input_error(where(section, key), range.str());
    }
    values.push_back(value);
  }
  out = std::move(values);
}

void TomlConfig::text_or_texts(const char* section, const char* key, std::vector<std::string>& out,
                               bool empty_ok) const {
  const auto node = impl_->find(section, key);
  if (!node) return;
  if (node.is_string()) {
    out = {node.value<std::string>().value()};
    return;
  }
  if (!node.is_array())
    throw input_error(where(section, key), "must be a string or an array of strings");
  texts(section, key, out, empty_ok);
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
