#pragma once

// Text output of tables: aligned text tables for terminals and logs (columns two spaces apart,
// numbers right-aligned, widths in display columns, bold cells on a terminal), CSV fields and
// numbers written exactly.

#include <string>
#include <vector>

namespace lmk {

// Display width of UTF-8 text: its code points (continuation bytes take no column).
size_t display_width(const std::string& text);

// A CSV field, quoted when it holds a comma, quote or line break (RFC 4180).
std::string csv_field(const std::string& text);

// The shortest text that reads back as the same double; "nan", "inf", "-inf" otherwise.
std::string exact_number(double value);

// A metric (or seconds) as reports print it: four decimals ("%.4f"), "nan" for NaN.
std::string format_metric(double value);

class TextTable {
 public:
  struct Cell {
    std::string text;
    bool bold = false;
  };

  // right_aligned: one flag per column (numbers).
  TextTable(std::vector<std::string> header, std::vector<bool> right_aligned);

  void add_row(std::vector<Cell> cells);
  // The header, a rule, then the rows; bold as ANSI escapes when `terminal`.
  std::string render(bool terminal) const;

 private:
  std::vector<bool> right_aligned_;
  std::vector<std::vector<Cell>> rows_;
};

}  // namespace lmk
