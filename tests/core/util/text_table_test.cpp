// Text output of tables (core/util/text_table.h): widths in display columns, CSV quoting
// (RFC 4180), numbers that read back exactly, metrics at four decimals, and aligned tables with
// bold cells only on a terminal.
#include "core/util/text_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace lmk {
namespace {

// One column per code point: continuation bytes of multi-byte UTF-8 take none.
TEST(TextTableTest, DisplayWidthCountsCodePoints) {
  EXPECT_EQ(display_width(""), 0u);
  EXPECT_EQ(display_width("plain"), 5u);
  EXPECT_EQ(display_width("caf\xc3\xa9"), 4u);               // café: é is 2 bytes
  EXPECT_EQ(display_width("\xe6\x97\xa5\xe6\x9c\xac"), 2u);  // 日本: 3 bytes each
  EXPECT_EQ(display_width("\xf0\x9f\xa4\xb7 ok"), 4u);       // 🤷 (4 bytes), space, o, k
}

// A field is quoted only when it holds a comma, a quote or a line break, with quotes doubled.
TEST(TextTableTest, CsvFieldQuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("lmk:fixed:16 pooling"), "lmk:fixed:16 pooling");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(csv_field("\""), "\"\"\"\"");
}

// exact_number reads back as the same double with no more digits than that needs; NaN and the
// infinities have names.
TEST(TextTableTest, ExactNumberReadsBackAsTheSameDouble) {
  EXPECT_EQ(exact_number(0.1), "0.1");
  EXPECT_EQ(exact_number(-2.5), "-2.5");
  EXPECT_EQ(exact_number(0.1 + 0.2), "0.30000000000000004");  // 17 digits needed here
  EXPECT_EQ(exact_number(std::nan("")), "nan");
  EXPECT_EQ(exact_number(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(exact_number(-std::numeric_limits<double>::infinity()), "-inf");
  for (const double value :
       {1.0 / 3, 2.0 / 3, 1e-300, 2.2250738585072014e-308, 1.7976931348623157e308, 123456.789,
        -0.000123, 0.0, 42.0, 0.9999999999999999}) {
    const std::string text = exact_number(value);
    EXPECT_EQ(std::stod(text), value) << text;
    EXPECT_LE(text.size(), 24u) << text;
  }
}

// Four decimals, rounded, "nan" for NaN.
TEST(TextTableTest, FormatMetricPrintsFourDecimals) {
  EXPECT_EQ(format_metric(2.0 / 3), "0.6667");
  EXPECT_EQ(format_metric(1), "1.0000");
  EXPECT_EQ(format_metric(-0.5), "-0.5000");
  EXPECT_EQ(format_metric(12.3), "12.3000");
  EXPECT_EQ(format_metric(0.00004), "0.0000");
  EXPECT_EQ(format_metric(std::nan("")), "nan");
}

// Columns are as wide as their widest cell in display columns, two spaces apart; right-aligned
// columns pad on the left; a rule of dashes follows the header; short rows get empty cells;
// lines lose trailing spaces; bold is ANSI escapes on a terminal only, outside the padding.
TEST(TextTableTest, RendersAlignedColumnsAndBoldOnlyOnATerminal) {
  // Only the second column is flagged: the third (unflagged) is left-aligned.
  TextTable table({"name", "score", "note"}, {false, true});
  table.add_row({{"caf\xc3\xa9"}, {"0.5000"}, {"best"}});
  table.add_row({{"x", true}, {"12.0000", true}, {""}});
  table.add_row({{"\xe6\x97\xa5\xe6\x9c\xac"}});  // 日本, the other cells empty
  // Widths: name 4 (name, café), score 7 (12.0000), note 4.
  const std::string plain =
      "name    score  note\n"
      "----  -------  ----\n"
      "caf\xc3\xa9   0.5000  best\n"
      "x     12.0000\n"
      "\xe6\x97\xa5\xe6\x9c\xac\n";
  EXPECT_EQ(table.render(false), plain);
  const std::string terminal =
      "name    score  note\n"
      "----  -------  ----\n"
      "caf\xc3\xa9   0.5000  best\n"
      "\x1b[1mx\x1b[0m     \x1b[1m12.0000\x1b[0m\n"
      "\xe6\x97\xa5\xe6\x9c\xac\n";
  EXPECT_EQ(table.render(true), terminal);
}

// A table with no rows is its header and rule.
TEST(TextTableTest, AnEmptyTableIsItsHeaderAndRule) {
  const TextTable table({"a", "bb"}, {true, true});
  EXPECT_EQ(table.render(false), "a  bb\n-  --\n");
}

}  // namespace
}  // namespace lmk
