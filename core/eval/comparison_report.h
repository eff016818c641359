#pragma once

// A comparison table (core/eval/comparison.h) as text, CSV, LaTeX or Markdown: runs × metric
// columns, each cell the mean ± half the width of its confidence interval, with ranx-style
// markers — in all-pairs mode each row gets a letter and a cell lists, as superscripts, the
// letters of the rows it beats significantly; against a baseline, ▲ / ▼ mark cells
// significantly above / below it — the significant best of a column in bold, and under the
// table the interval, the test and the correction by name. The list of paired tests (difference,
// its interval, p, Holm-adjusted p, effect size) follows on request.

#include <string>

#include "core/eval/comparison.h"

namespace lmk {

enum class ReportFormat { Text, Csv, Latex, Markdown };

// "text" | "csv" | "latex" | "markdown"; an InputError names `where` otherwise.
ReportFormat parse_report_format(const std::string& text, const std::string& where);

struct ReportOptions {
  ReportFormat format = ReportFormat::Text;
  bool paired_tests = false;  // list every paired test under the table
  bool terminal = false;      // text: bold as ANSI escapes
  std::string row_header = "run";
  std::string title;  // LaTeX caption / a heading line before the table
  int digits = 3;     // decimals of means and half-widths
};

// The letter key of row i: a, b, ..., z, aa, ab, ...
std::string row_key(size_t row);

std::string render_comparison(const ComparisonTable& table, const ReportOptions& options);

}  // namespace lmk
