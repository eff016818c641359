// A comparison table as text, CSV, LaTeX and Markdown (core/eval/comparison_report.h), from a
// table built here with known cells and one known test: each cell's mean ± half its interval,
// the letters of the rows it beats (or ▲ / ▼ against a baseline), the significant best in bold,
// N in the header when the column shares it, the escapes of each format, the paired tests on
// request; the format names and the row letters.
#include "core/eval/comparison_report.h"

#include <gtest/gtest.h>

#include "core/util/error.h"

namespace lmk {
namespace {

// Rows cls (a) and lmk_32 (b), columns corpus and passkey. corpus: 40 queries each, cls 0.25 in
// [0.2, 0.3], lmk_32 0.5 in [0.45, 0.55], lmk_32 − cls = 0.25 significant (p 0.0002, Holm
// 0.0004). passkey: cls's stored mean 0.125 only, no lmk_32 result.
ComparisonTable two_rows() {
  ComparisonTable table;
  table.rows = {"cls", "lmk_32"};
  table.columns = {"corpus", "passkey"};
  const CellSummary cls{40, 0.25, {0.2, 0.3}, true}, lmk{40, 0.5, {0.45, 0.55}, true},
      stored{0, 0.125, {}, false};
  table.cells = {{cls, stored}, {lmk, CellSummary{}}};
  table.present = {{true, true}, {true, false}};
  ComparisonTest test;
  test.row = 1;
  test.other = 0;
  test.column = 0;
  test.result.n = 40;
  test.result.difference = 0.25;
  test.result.difference_interval = {0.2, 0.3};
  test.result.difference_bca = {0.19, 0.31};
  test.result.p_value = 0.0002;
  test.result.effect_size = 1.5;
  test.p_adjusted = 0.0004;
  test.significant = true;
  table.tests = {test};
  return table;
}

std::string render(const ComparisonTable& table, ReportFormat format, bool paired_tests = false,
                   const std::string& title = "") {
  ReportOptions options;
  options.format = format;
  options.paired_tests = paired_tests;
  options.title = title;
  return render_comparison(table, options);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The fields joined as one CSV line.
std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + fields[i];
  return line + "\n";
}

// The four format names (and md) parse; another is an InputError naming where it came from and
// the choices.
TEST(ComparisonReportTest, FormatNamesParseAndOthersNameWhere) {
  EXPECT_EQ(parse_report_format("text", "--format"), ReportFormat::Text);
  EXPECT_EQ(parse_report_format("csv", "--format"), ReportFormat::Csv);
  EXPECT_EQ(parse_report_format("latex", "--format"), ReportFormat::Latex);
  EXPECT_EQ(parse_report_format("markdown", "--format"), ReportFormat::Markdown);
  EXPECT_EQ(parse_report_format("md", "--format"), ReportFormat::Markdown);
  try {
    parse_report_format("HTML", "--format");
    ADD_FAILURE() << "parsed HTML";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--format: unknown format 'HTML' (text, csv, latex, markdown)");
  }
}

// Letters count in bijective base 26: a..z, then aa..az, ba.., zz, aaa.
TEST(ComparisonReportTest, RowKeysAreLettersThenPairsOfLetters) {
  EXPECT_EQ(row_key(0), "a");
  EXPECT_EQ(row_key(25), "z");
  EXPECT_EQ(row_key(26), "aa");
  EXPECT_EQ(row_key(27), "ab");
  EXPECT_EQ(row_key(51), "az");
  EXPECT_EQ(row_key(52), "ba");
  EXPECT_EQ(row_key(26 + 26 * 26 - 1), "zz");
  EXPECT_EQ(row_key(26 + 26 * 26), "aaa");
}

// Text: the title first, the shared N in the header, "mean ± half-width" with the beaten rows'
// superscript letters, "-" for no result, bold only on a terminal and only for a significant
// best (a column of one present row has none), then the legend.
TEST(ComparisonReportTest, TextShowsIntervalsLettersAndTheSignificantBest) {
  const ComparisonTable table = two_rows();
  const std::string text = render(table, ReportFormat::Text, false, "Table 1");
  EXPECT_EQ(text.rfind("Table 1\n", 0), 0u) << text;
  EXPECT_TRUE(contains(text, "corpus (N 40)")) << text;
  EXPECT_FALSE(contains(text, "passkey (N")) << text;
  EXPECT_TRUE(contains(text, "0.500 ± 0.050 ᵃ")) << text;
  EXPECT_TRUE(contains(text, "0.250 ± 0.050")) << text;
  EXPECT_FALSE(contains(text, "0.250 ± 0.050 ᵇ")) << text;
  EXPECT_TRUE(contains(text, "0.125")) << text;
  EXPECT_FALSE(contains(text, "0.125 ±")) << "a stored mean has no interval";
  EXPECT_FALSE(contains(text, "\x1b[")) << "no escapes off a terminal";
  EXPECT_TRUE(contains(text, "Superscripts: the rows a cell beats significantly")) << text;
  EXPECT_TRUE(contains(text, "bold (on a terminal) only where it beats every other row")) << text;
  EXPECT_TRUE(contains(text, table.legend()[0])) << text;
  EXPECT_FALSE(contains(text, "Paired tests")) << "not asked for";

  ReportOptions terminal;
  terminal.terminal = true;
  const std::string bold = render_comparison(table, terminal);
  EXPECT_TRUE(contains(bold, "\x1b[1m0.500 ± 0.050 ᵃ\x1b[0m")) << bold;
  EXPECT_FALSE(contains(bold, "\x1b[1m0.125")) << "a best without another row is no winner";
  EXPECT_FALSE(contains(bold, "\x1b[1m0.250")) << bold;

  // Two decimals.
  terminal.digits = 2;
  EXPECT_TRUE(contains(render_comparison(table, terminal), "0.50 ± 0.05"));
}

// Without a significant win the best is not bold: with the test not significant, no letters.
TEST(ComparisonReportTest, NoSignificantTestNoLettersAndNoBold) {
  ComparisonTable table = two_rows();
  table.tests[0].significant = false;
  ReportOptions terminal;
  terminal.terminal = true;
  const std::string text = render_comparison(table, terminal);
  EXPECT_FALSE(contains(text, "ᵃ")) << text;
  EXPECT_FALSE(contains(text, "\x1b[1m")) << text;
}

// Cells of one column with different N: no N in the header, each cell its own "(n ...)".
TEST(ComparisonReportTest, DifferentQueryCountsAreShownPerCell) {
  ComparisonTable table = two_rows();
  table.cells[1][0].n = 38;
  const std::string text = render(table, ReportFormat::Text);
  EXPECT_FALSE(contains(text, "(N ")) << text;
  EXPECT_TRUE(contains(text, "0.250 ± 0.050 (n 40)")) << text;
  EXPECT_TRUE(contains(text, "0.500 ± 0.050 (n 38) ᵃ")) << text;
  EXPECT_TRUE(contains(render(table, ReportFormat::Latex), "$0.250 \\pm 0.050$ (40)"));
  EXPECT_TRUE(contains(render(table, ReportFormat::Markdown), "0.250 ± 0.050 (n 40) |"));
}

// Against a baseline: the baseline's row says so, a cell significantly above it gets ▲, below
// it ▼ (whichever way round the test was run), no bold sentence (only baseline pairs are
// tested) and the arrows explained.
TEST(ComparisonReportTest, BaselineModeMarksCellsAboveAndBelow) {
  ComparisonTable table = two_rows();
  table.options.baseline = 0;
  // The test as cls − lmk_32: lmk_32 is still above.
  table.tests[0].row = 0;
  table.tests[0].other = 1;
  table.tests[0].result.difference = -0.25;
  std::string text = render(table, ReportFormat::Text);
  EXPECT_TRUE(contains(text, "cls (baseline)")) << text;
  EXPECT_TRUE(contains(text, "0.500 ± 0.050 ▲")) << text;
  EXPECT_EQ(text.find("▼"), text.rfind("▼")) << "the legend's only";
  EXPECT_FALSE(contains(text, "ᵃ")) << text;
  EXPECT_TRUE(contains(text, "▲ / ▼: significantly above / below the baseline.")) << text;
  EXPECT_FALSE(contains(text, "bold")) << text;
  EXPECT_TRUE(
      contains(render(table, ReportFormat::Latex), "$\\mathbf{0.500} \\pm 0.050^{\\uparrow}$"));
  EXPECT_TRUE(contains(render(table, ReportFormat::Markdown), "**0.500** ± 0.050 ▲ |"));

  table.cells[1][0].mean = 0.1;
  table.tests[0].result.difference = 0.15;  // cls − lmk_32: lmk_32 below
  text = render(table, ReportFormat::Text);
  EXPECT_TRUE(contains(text, "0.100 ± 0.050 ▼")) << text;
  EXPECT_TRUE(contains(render(table, ReportFormat::Latex), "0.100 \\pm 0.050^{\\downarrow}$"));
}

// CSV: one line per present cell, then one per test, 26 fields each; numbers written exactly,
// "nan" for a cell without an interval, empty fields where a line kind has none.
TEST(ComparisonReportTest, CsvHasOneLinePerCellAndTest) {
  const std::string csv = render(two_rows(), ReportFormat::Csv);
  const std::string header =
      "kind,row_key,row,other_key,other,column,n,mean,ci_low,ci_high,per_query,beats,"
      "versus_baseline,best,difference,difference_low,difference_high,difference_bca_low,"
      "difference_bca_high,p_value,p_holm,significant,effect_size_dz,test,correction,alpha\n";
  const std::vector<std::string> no_test(9, "");
  auto cell = [&](std::vector<std::string> fields) {
    fields.insert(fields.end(), no_test.begin(), no_test.end());
    fields.insert(fields.end(), {"fisher", "holm", "0.05"});
    return csv_line(fields);
  };
  const std::string expected =
      header +
      cell({"cell", "a", "cls", "", "", "corpus", "40", "0.25", "0.2", "0.3", "true", "", "0",
            "false"}) +
      cell({"cell", "a", "cls", "", "", "passkey", "", "0.125", "nan", "nan", "false", "", "0",
            "false"}) +
      cell({"cell", "b", "lmk_32", "", "", "corpus", "40", "0.5", "0.45", "0.55", "true", "a", "0",
            "true"}) +
      csv_line({"test", "b",      "lmk_32", "a",    "cls", "corpus", "40",   "",    "",
                "",     "",       "",       "",     "",    "0.25",   "0.2",  "0.3", "0.19",
                "0.31", "0.0002", "0.0004", "true", "1.5", "fisher", "holm", "0.05"});
  EXPECT_EQ(csv, expected);
  size_t fields = 1;
  for (const char c : header) fields += c == ',';
  EXPECT_EQ(fields, 26u);

  ComparisonTable quoted = two_rows();
  quoted.rows[0] = "cls, g=0";
  EXPECT_TRUE(contains(render(quoted, ReportFormat::Csv), "\ncell,a,\"cls, g=0\",,,corpus,40,"));
}

// LaTeX: booktabs with one c column per column, LaTeX's special characters escaped, the best in
// \mathbf, the beaten letters as a superscript, "--" for no result, the title and legend as
// the caption, and the paired tests as comments.
TEST(ComparisonReportTest, LatexEscapesAndTypesetsTheCells) {
  const std::string latex = render(two_rows(), ReportFormat::Latex, true, "R&D_1");
  EXPECT_TRUE(contains(latex, "\\begin{tabular}{llcc}\n\\toprule\n")) << latex;
  EXPECT_TRUE(contains(latex, " & run & corpus (N 40) & passkey \\\\\n\\midrule\n")) << latex;
  EXPECT_TRUE(contains(latex, "a & cls & $0.250 \\pm 0.050$ & $0.125$ \\\\\n")) << latex;
  EXPECT_TRUE(contains(latex, "b & lmk\\_32 & $\\mathbf{0.500} \\pm 0.050^{a}$ & -- \\\\\n"))
      << latex;
  EXPECT_TRUE(contains(latex, "\\caption{R\\&D\\_1. Cells: the mean")) << latex;
  EXPECT_TRUE(contains(latex, "\\end{table}\n")) << latex;
  EXPECT_TRUE(contains(latex,
                       "% corpus, b − a, 40, +0.2500 [+0.2000, +0.3000], 2.00e-04, "
                       "4.00e-04, 1.50\n"))
      << latex;
}

// Markdown: a right-aligned column per column, '_' and '|' escaped, the best in bold, the
// letters in <sup>, and the paired tests as a second table with a significant Holm p in bold.
TEST(ComparisonReportTest, MarkdownEscapesAndTypesetsTheCells) {
  ComparisonTable table = two_rows();
  table.columns[1] = "pass|key";
  const std::string markdown = render(table, ReportFormat::Markdown, true, "R&D_1");
  EXPECT_EQ(markdown.rfind("**R&D\\_1**\n\n", 0), 0u) << markdown;
  EXPECT_TRUE(contains(markdown, "| | run | corpus (N 40) | pass\\|key |\n|---|---|---:|---:|\n"))
      << markdown;
  EXPECT_TRUE(contains(markdown, "| a | cls | 0.250 ± 0.050 | 0.125 |\n")) << markdown;
  EXPECT_TRUE(contains(markdown, "| b | lmk\\_32 | **0.500** ± 0.050 <sup>a</sup> | - |\n"))
      << markdown;
  EXPECT_TRUE(contains(markdown,
                       "| corpus | b − a | 40 | +0.2500 | [+0.2000, +0.3000] | "
                       "2.00e-04 | **4.00e-04** | 1.50 |\n"))
      << markdown;
}

// The paired tests under a text table: pair by letters, difference and intervals with one more
// decimal and a sign, small p-values in exponent form, the effect size, significance.
TEST(ComparisonReportTest, TextListsThePairedTestsOnRequest) {
  const std::string text = render(two_rows(), ReportFormat::Text, true);
  const size_t tests =
      text.find("Paired tests (difference = first − second row, by their letters):");
  ASSERT_NE(tests, std::string::npos) << text;
  const std::string list = text.substr(tests);
  EXPECT_TRUE(contains(list, "95 % CI")) << list;
  for (const char* part : {"corpus", "b − a", "40", "+0.2500", "[+0.2000, +0.3000]",
                           "[+0.1900, +0.3100]", "2.00e-04", "4.00e-04", "1.50", "yes"})
    EXPECT_TRUE(contains(list, part)) << part << "\n" << list;
}

}  // namespace
}  // namespace lmk
