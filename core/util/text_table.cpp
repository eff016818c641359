#include "core/util/text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace lmk {

size_t display_width(const std::string& text) {
  size_t width = 0;
  for (const unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string exact_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return nlohmann::json(value).dump();  // nlohmann writes the shortest round-trip form
}

std::string format_metric(double value) {
  if (std::isnan(value)) return "nan";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

TextTable::TextTable(std::vector<std::string> header, std::vector<bool> right_aligned)
    : right_aligned_(std::move(right_aligned)) {
  right_aligned_.resize(header.size(), false);
  std::vector<Cell> cells;
  for (auto& title : header) cells.push_back({std::move(title)});
  rows_.push_back(std::move(cells));
}

void TextTable::add_row(std::vector<Cell> cells) {
  cells.resize(rows_[0].size());
  rows_.push_back(std::move(cells));
}

std::string TextTable::render(bool terminal) const {
  std::vector<size_t> widths(rows_[0].size(), 0);
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], display_width(row[c].text));
  }
  std::string out;
  auto add_line = [&](const std::vector<Cell>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string padding(widths[c] - display_width(row[c].text), ' ');
      const std::string text =
          terminal && row[c].bold ? "\x1b[1m" + row[c].text + "\x1b[0m" : row[c].text;
      if (c) line += "  ";
      line += right_aligned_[c] ? padding + text : text + padding;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  add_line(rows_[0]);
  std::vector<Cell> rule;
  for (const size_t width : widths) rule.push_back({std::string(width, '-')});
  add_line(rule);
  for (size_t r = 1; r < rows_.size(); ++r) add_line(rows_[r]);
  return out;
}

}  // namespace lmk
