#include "core/eval/comparison_report.h"

#include <cmath>
#include <cstdio>

#include "core/util/error.h"
#include "core/util/text_table.h"

namespace lmk {

namespace {

// Superscript forms of a-z (q has none in common fonts' basic blocks: U+107A5).
const char* const kSuperscripts[] = {"ᵃ", "ᵇ", "ᶜ", "ᵈ", "ᵉ", "ᶠ", "ᵍ", "ʰ",    "ⁱ",
                                     "ʲ", "ᵏ", "ˡ", "ᵐ", "ⁿ", "ᵒ", "ᵖ", "𐞥", "ʳ",
                                     "ˢ", "ᵗ", "ᵘ", "ᵛ", "ʷ", "ˣ", "ʸ", "ᶻ"};

std::string fixed(double value, int digits) {
  if (std::isnan(value)) return "nan";
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string signed_fixed(double value, int digits) {
  if (std::isnan(value)) return "nan";
  char text[48];
  std::snprintf(text, sizeof text, "%+.*f", digits, value);
  return text;
}

// p-values: 4 significant digits, small ones in exponent form.
std::string p_text(double p) {
  if (std::isnan(p)) return "nan";
  char text[32];
  std::snprintf(text, sizeof text, p < 1e-3 ? "%.2e" : "%.4f", p);
  return text;
}

std::string latex_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '\\':
        out += "\\textbackslash{}";
        break;
      case '_':
      case '%':
      case '&':
      case '#':
      case '$':
      case '{':
      case '}':
        out += '\\';
        out += c;
        break;
      case '~':
        out += "\\textasciitilde{}";
        break;
      case '^':
        out += "\\textasciicircum{}";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string markdown_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '|' || c == '*' || c == '_' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// The N every present per-query cell of a column shares, or 0 when they differ.
size_t common_n(const ComparisonTable& table, size_t column) {
  size_t n = 0;
  for (size_t r = 0; r < table.rows.size(); ++r) {
    const CellSummary& cell = table.cells[r][column];
    if (!table.present[r][column] || !cell.per_query) continue;
    if (n != 0 && cell.n != n) return 0;
    n = cell.n;
  }
  return n;
}

// What a cell shows, split into its parts so each format can typeset them.
struct CellText {
  std::string mean, half_width, n, markers;  // markers: beaten row keys, or "+" / "-"
  bool present = false, best = false;
};

CellText cell_text(const ComparisonTable& table, size_t row, size_t column, int digits) {
  CellText text;
  const CellSummary& cell = table.cells[row][column];
  text.present = table.present[row][column];
  if (!text.present) return text;
  text.mean = fixed(cell.mean, digits);
  if (cell.per_query && !std::isnan(cell.interval.low))
    text.half_width = fixed(cell.interval.half_width(), digits);
  if (cell.per_query && common_n(table, column) == 0) text.n = std::to_string(cell.n);
  if (table.options.baseline) {
    const int versus = table.versus_baseline(row, column);
    text.markers = versus > 0 ? "+" : versus < 0 ? "-" : "";
  } else {
    for (size_t beaten : table.beaten_rows(row, column)) text.markers += row_key(beaten);
  }
  text.best = table.best_is_significant(column) && table.best_row(column) == row;
  return text;
}

std::string column_header(const ComparisonTable& table, size_t column) {
  const size_t n = common_n(table, column);
  return table.columns[column] + (n ? " (N " + std::to_string(n) + ")" : "");
}

std::string row_label(const ComparisonTable& table, size_t row) {
  return table.rows[row] +
         (table.options.baseline && *table.options.baseline == row ? " (baseline)" : "");
}

// Sentences under the table: what the cells and the markers mean, then the table's legend.
std::vector<std::string> legend_lines(const ComparisonTable& table, ReportFormat format) {
  std::vector<std::string> lines = table.legend();
  const bool markdown = format == ReportFormat::Markdown, latex = format == ReportFormat::Latex;
  std::string markers;
  if (table.options.baseline) {
    markers = latex ? "$\\uparrow$ / $\\downarrow$" : "▲ / ▼";
    markers += ": significantly above / below the baseline.";
  } else if (table.rows.size() > 1) {
    markers = "Superscripts: the rows a cell beats significantly (by their letters).";
  }
  if (!markers.empty()) lines.insert(lines.begin() + 1, markers);
  // Against a baseline only the baseline pairs are tested: no row can be shown best.
  if ((table.options.baseline && !table.options.all_pairs) || table.rows.size() < 2) return lines;
  if (latex || markdown)
    lines.push_back(
        "Bold: the highest mean of a column where it beats every other row "
        "significantly (a best that does not is a tie, not bold).");
  else
    lines.push_back(
        "The highest mean of a column is bold (on a terminal) only where it beats "
        "every other row significantly.");
  return lines;
}

struct TestRow {
  std::string column, pair, n, difference, interval, bca, p, p_holm, effect, significant;
};

std::vector<TestRow> test_rows(const ComparisonTable& table, int digits) {
  std::vector<TestRow> rows;
  for (const ComparisonTest& test : table.tests) {
    const stats::PairedComparison& r = test.result;
    rows.push_back({table.columns[test.column], row_key(test.row) + " − " + row_key(test.other),
                    std::to_string(r.n), signed_fixed(r.difference, digits + 1),
                    "[" + signed_fixed(r.difference_interval.low, digits + 1) + ", " +
                        signed_fixed(r.difference_interval.high, digits + 1) + "]",
                    "[" + signed_fixed(r.difference_bca.low, digits + 1) + ", " +
                        signed_fixed(r.difference_bca.high, digits + 1) + "]",
                    p_text(r.p_value), p_text(test.p_adjusted), fixed(r.effect_size, 2),
                    test.significant ? "yes" : "no"});
  }
  return rows;
}

std::string confidence_text(const ComparisonTable& table) {
  char text[16];
  std::snprintf(text, sizeof text, "%g", 100 * table.options.resampling.confidence);
  return text;
}

std::string render_text(const ComparisonTable& table, const ReportOptions& options) {
  std::string out;
  if (!options.title.empty()) out += options.title + "\n";
  std::vector<std::string> header = {"", options.row_header};
  for (size_t c = 0; c < table.columns.size(); ++c) header.push_back(column_header(table, c));
  std::vector<bool> right(header.size(), true);
  right[0] = right[1] = false;
  TextTable text(header, right);
  for (size_t r = 0; r < table.rows.size(); ++r) {
    std::vector<TextTable::Cell> cells = {{row_key(r)}, {row_label(table, r)}};
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const CellText cell = cell_text(table, r, c, options.digits);
      if (!cell.present) {
        cells.push_back({"-"});
        continue;
      }
      std::string shown = cell.mean;
      if (!cell.half_width.empty()) shown += " ± " + cell.half_width;
      if (!cell.n.empty()) shown += " (n " + cell.n + ")";
      if (table.options.baseline) {
        shown += cell.markers == "+" ? " ▲" : cell.markers == "-" ? " ▼" : "  ";
      } else if (table.rows.size() > 1) {
        std::string superscripts;
        for (size_t beaten : table.beaten_rows(r, c)) {
          const std::string key = row_key(beaten);
          superscripts += key.size() == 1 ? kSuperscripts[key[0] - 'a'] : "^" + key;
        }
        shown += superscripts.empty() ? "" : " " + superscripts;
      }
      cells.push_back({shown, cell.best});
    }
    text.add_row(std::move(cells));
  }
  out += text.render(options.terminal);
  for (const std::string& line : legend_lines(table, ReportFormat::Text)) out += line + "\n";
  if (options.paired_tests && !table.tests.empty()) {
    TextTable tests({"column", "pair", "N", "difference", confidence_text(table) + " % CI", "BCa",
                     "p", "p (Holm)", "d_z", "significant"},
                    {false, false, true, true, true, true, true, true, true, false});
    for (const TestRow& t : test_rows(table, options.digits)) {
      tests.add_row({{t.column},
                     {t.pair},
                     {t.n},
                     {t.difference},
                     {t.interval},
                     {t.bca},
                     {t.p},
                     {t.p_holm},
                     {t.effect},
                     {t.significant, t.significant == "yes"}});
    }
    out += "\nPaired tests (difference = first − second row, by their letters):\n" +
           tests.render(options.terminal);
  }
  return out;
}

std::string render_csv(const ComparisonTable& table) {
  std::string out =
      "kind,row_key,row,other_key,other,column,n,mean,ci_low,ci_high,per_query,beats,"
      "versus_baseline,best,difference,difference_low,difference_high,difference_bca_low,"
      "difference_bca_high,p_value,p_holm,significant,effect_size_dz,test,correction,alpha\n";
  const std::string test_name = stats::paired_test_name(table.options.test);
  char alpha[16];
  std::snprintf(alpha, sizeof alpha, "%g", table.options.alpha);
  for (size_t r = 0; r < table.rows.size(); ++r) {
    for (size_t c = 0; c < table.columns.size(); ++c) {
      if (!table.present[r][c]) continue;
      const CellSummary& cell = table.cells[r][c];
      std::string beats;
      for (size_t beaten : table.beaten_rows(r, c)) beats += row_key(beaten);
      out += "cell," + row_key(r) + "," + csv_field(table.rows[r]) + ",,," +
             csv_field(table.columns[c]) + "," + (cell.per_query ? std::to_string(cell.n) : "") +
             "," + exact_number(cell.mean) + "," + exact_number(cell.interval.low) + "," +
             exact_number(cell.interval.high) + "," + (cell.per_query ? "true" : "false") + "," +
             beats + "," + std::to_string(table.versus_baseline(r, c)) + "," +
             (table.best_is_significant(c) && table.best_row(c) == r ? "true" : "false") +
             ",,,,,,,,,," + test_name + ",holm," + alpha + "\n";
    }
  }
  for (const ComparisonTest& test : table.tests) {
    const stats::PairedComparison& p = test.result;
    out += "test," + row_key(test.row) + "," + csv_field(table.rows[test.row]) + "," +
           row_key(test.other) + "," + csv_field(table.rows[test.other]) + "," +
           csv_field(table.columns[test.column]) + "," + std::to_string(p.n) + ",,,,,,,," +
           exact_number(p.difference) + "," + exact_number(p.difference_interval.low) + "," +
           exact_number(p.difference_interval.high) + "," + exact_number(p.difference_bca.low) +
           "," + exact_number(p.difference_bca.high) + "," + exact_number(p.p_value) + "," +
           exact_number(test.p_adjusted) + "," + (test.significant ? "true" : "false") + "," +
           exact_number(p.effect_size) + "," + test_name + ",holm," + alpha + "\n";
  }
  return out;
}

std::string render_latex(const ComparisonTable& table, const ReportOptions& options) {
  std::string out =
      "% lmk: booktabs table (\\usepackage{booktabs})\n\\begin{table}[t]\n"
      "\\centering\n\\begin{tabular}{ll" +
      std::string(table.columns.size(), 'c') + "}\n\\toprule\n & " +
      latex_escape(options.row_header);
  for (size_t c = 0; c < table.columns.size(); ++c)
    out += " & " + latex_escape(column_header(table, c));
  out += " \\\\\n\\midrule\n";
  for (size_t r = 0; r < table.rows.size(); ++r) {
    out += row_key(r) + " & " + latex_escape(row_label(table, r));
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const CellText cell = cell_text(table, r, c, options.digits);
      if (!cell.present) {
        out += " & --";
        continue;
      }
      std::string math = cell.best ? "\\mathbf{" + cell.mean + "}" : cell.mean;
      if (!cell.half_width.empty()) math += " \\pm " + cell.half_width;
      if (table.options.baseline)
        math += cell.markers == "+" ? "^{\\uparrow}" : cell.markers == "-" ? "^{\\downarrow}" : "";
      else if (!cell.markers.empty())
        math += "^{" + cell.markers + "}";
      out += " & $" + math + "$" + (cell.n.empty() ? "" : " (" + cell.n + ")");
    }
    out += " \\\\\n";
  }
  std::string caption = options.title.empty() ? "" : latex_escape(options.title) + ". ";
  for (const std::string& line : legend_lines(table, ReportFormat::Latex)) {
    // The marker sentence is LaTeX already; the rest is text.
    caption +=
        line.find("$\\uparrow$") != std::string::npos ? line + " " : latex_escape(line) + " ";
  }
  while (!caption.empty() && caption.back() == ' ') caption.pop_back();
  out += "\\bottomrule\n\\end{tabular}\n\\caption{" + caption + "}\n\\end{table}\n";
  if (options.paired_tests && !table.tests.empty()) {
    out += "% paired tests: column, pair, N, difference [" + confidence_text(table) +
           " % CI], p, p (Holm), d_z\n";
    for (const TestRow& t : test_rows(table, options.digits))
      out += "% " + t.column + ", " + t.pair + ", " + t.n + ", " + t.difference + " " + t.interval +
             ", " + t.p + ", " + t.p_holm + ", " + t.effect + "\n";
  }
  return out;
}

std::string render_markdown(const ComparisonTable& table, const ReportOptions& options) {
  std::string out = options.title.empty() ? "" : "**" + markdown_escape(options.title) + "**\n\n";
  out += "| | " + markdown_escape(options.row_header) + " |";
  for (size_t c = 0; c < table.columns.size(); ++c)
    out += " " + markdown_escape(column_header(table, c)) + " |";
  out += "\n|---|---|" + [&] {
    std::string rule;
    for (size_t c = 0; c < table.columns.size(); ++c) rule += "---:|";
    return rule;
  }() + "\n";
  for (size_t r = 0; r < table.rows.size(); ++r) {
    out += "| " + row_key(r) + " | " + markdown_escape(row_label(table, r)) + " |";
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const CellText cell = cell_text(table, r, c, options.digits);
      if (!cell.present) {
        out += " - |";
        continue;
      }
      std::string shown = cell.best ? "**" + cell.mean + "**" : cell.mean;
      if (!cell.half_width.empty()) shown += " ± " + cell.half_width;
      if (!cell.n.empty()) shown += " (n " + cell.n + ")";
      if (table.options.baseline)
        shown += cell.markers == "+" ? " ▲" : cell.markers == "-" ? " ▼" : "";
      else if (!cell.markers.empty())
        shown += " <sup>" + cell.markers + "</sup>";
      out += " " + shown + " |";
    }
    out += "\n";
  }
  out += "\n";
  for (const std::string& line : legend_lines(table, ReportFormat::Markdown))
    out += markdown_escape(line) + "\n";
  if (options.paired_tests && !table.tests.empty()) {
    out += "\n| column | pair | N | difference | " + confidence_text(table) +
           " % CI | p | p (Holm) | d_z |\n|---|---|---:|---:|---:|---:|---:|---:|\n";
    for (const TestRow& t : test_rows(table, options.digits)) {
      out += "| " + markdown_escape(t.column) + " | " + t.pair + " | " + t.n + " | " +
             t.difference + " | " + t.interval + " | " + t.p + " | " +
             (t.significant == "yes" ? "**" + t.p_holm + "**" : t.p_holm) + " | " + t.effect +
             " |\n";
    }
  }
  return out;
}

}  // namespace

ReportFormat parse_report_format(const std::string& text, const std::string& where) {
  if (text == "text") return ReportFormat::Text;
  if (text == "csv") return ReportFormat::Csv;
  if (text == "latex") return ReportFormat::Latex;
  if (text == "markdown" || text == "md") return ReportFormat::Markdown;
  throw input_error(where, "unknown format '" + text + "' (text, csv, latex, markdown)");
}

std::string row_key(size_t row) {
  std::string key;
  for (size_t n = row + 1; n > 0; n = (n - 1) / 26)
    key.insert(key.begin(), static_cast<char>('a' + (n - 1) % 26));
  return key;
}

std::string render_comparison(const ComparisonTable& table, const ReportOptions& options) {
  switch (options.format) {
    case ReportFormat::Text:
      return render_text(table, options);
    case ReportFormat::Csv:
      return render_csv(table);
    case ReportFormat::Latex:
      return render_latex(table, options);
    case ReportFormat::Markdown:
      return render_markdown(table, options);
  }
  return "";
}

}  // namespace lmk
