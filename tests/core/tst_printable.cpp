// printable(): labels and device names from a store, shown in a terminal.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>

#include "core/lab.h"
#include "core/table.h"

TEST(Printable, PlainTextAndUnicodeUnchanged) {
    EXPECT_EQ(ts::printable("fp32 vs bf16, ±2 ms — größer"), "fp32 vs bf16, ±2 ms — größer");
    EXPECT_EQ(ts::printable("C:\\path"), "C:\\path");
}

TEST(Printable, ControlCharactersAreEscaped) {
    EXPECT_EQ(ts::printable("a\nb\tc\rd"), "a\\nb\\tc\\rd");
    EXPECT_EQ(ts::printable("\x1b[2J\x07\x7f"), "\\x1b[2J\\x07\\x7f");
    EXPECT_EQ(ts::printable(std::string("nul\0end", 7)), "nul\\x00end");
    EXPECT_EQ(ts::printable("\xc2\x9b"
                            "31m"),
              "\\u009b31m");  // C1 CSI as UTF-8
}

TEST(Printable, BytesThatAreNotUtf8AreEscaped) {
    EXPECT_EQ(ts::printable("\x9b"
                            "31m"),
              "\\x9b31m");  // a raw 8-bit CSI
    EXPECT_EQ(ts::printable("bad \xff\xfe"), "bad \\xff\\xfe");
    EXPECT_EQ(ts::printable("cut \xe2\x82"), "cut \\xe2\\x82");
    EXPECT_EQ(ts::printable("\xc0\xaf"), "\\xc0\\xaf");  // overlong '/'
}

TEST(Printable, LinesKeepTheirNewlines) {
    EXPECT_EQ(ts::printableLines("a\tb\nc\x1b[0m\n"), "a\\tb\nc\\x1b[0m\n");
    EXPECT_EQ(ts::printableLines(""), "");
    EXPECT_EQ(ts::printableLines("\n\n"), "\n\n");
    EXPECT_EQ(ts::printableLines(ts::printableLines("x\x07\n")), "x\\x07\n")
        << "escaping twice changes nothing";
}

// See Note [tables other programs read]: Markdown shows a label as written, a CSV header is
// snake_case with its unit, a number reads back as itself and "not measured" is empty.
TEST(Tables, MarkdownTextEscapesWhatMarkdownWouldRead) {
    EXPECT_EQ(ts::markdownText("a|b <b>x</b> #1"), "a\\|b \\<b\\>x\\</b\\> \\#1");
    EXPECT_EQ(ts::markdownText("*x* [y](z) `c` ~~s~~"), "\\*x\\* \\[y\\](z) \\`c\\` \\~\\~s\\~\\~");
    EXPECT_EQ(ts::markdownText("d_model _x_"), "d_model \\_x\\_") << "only emphasis escaped";
    EXPECT_EQ(ts::markdownText("A & B &lt; x&y"), "A & B \\&lt; x\\&y") << "entities only";
    EXPECT_EQ(ts::markdownText("two\nlines\r"), "two lines ");
    EXPECT_EQ(ts::markdownText("C:\\x"), "C:\\\\x");
}

TEST(Tables, CsvNamesAreSnakeCaseWithTheirUnits) {
    EXPECT_EQ(ts::csvName("Forward (ms)"), "forward_ms");
    EXPECT_EQ(ts::csvName("algbw GB/s"), "algbw_gb_per_s");
    EXPECT_EQ(ts::csvName("% peak"), "percent_peak");
    EXPECT_EQ(ts::csvName("B − A"), "b_minus_a");
    EXPECT_EQ(ts::csvName("Total (µs)"), "total_us");
    EXPECT_EQ(ts::csvName("Max Δ loss vs fp32"), "max_delta_loss_vs_fp32");
    EXPECT_EQ(ts::csvName("ranks' means ms"), "ranks_means_ms");
    EXPECT_EQ(ts::csvName("&Attention"), "and_attention");
    EXPECT_EQ(ts::csvName("2nd"), "n2nd");
    EXPECT_EQ(ts::csvName("±"), "std");
    EXPECT_EQ(ts::csvName("—"), "column");
}

TEST(Tables, CsvNumbersReadBackAndNothingIsEmpty) {
    EXPECT_EQ(ts::csvNumber(0.1), "0.1");
    EXPECT_EQ(std::stod(ts::csvNumber(1.0 / 3)), 1.0 / 3);
    EXPECT_EQ(ts::csvNumber(1e-5), "1e-05");
    EXPECT_EQ(ts::csvNumber(std::numeric_limits<double>::quiet_NaN()), "");
    EXPECT_EQ(ts::csvNumber(std::numeric_limits<double>::infinity()), "");
    EXPECT_EQ(ts::csvNumber(std::optional<double>()), "");
    EXPECT_EQ(ts::csvNumber(std::optional<double>(2.5)), "2.5");
}

TEST(Tables, MarkdownTablesKeepTheirColumns) {
    ts::TextTable t{{"name", "ms"}, {false, true}, {{"a|b", "1.5"}, {"<b>", "2"}, {"short"}}};
    const std::string md = ts::renderTable(t, ts::TableFormat::Markdown);
    EXPECT_NE(md.find("| a\\|b  |"), std::string::npos) << md;
    EXPECT_NE(md.find("| \\<b\\> |"), std::string::npos) << md;
    EXPECT_NE(md.find("| short |     |"), std::string::npos)
        << "a short row gets empty cells: " << md;
    t.compact = true;
    EXPECT_EQ(ts::renderTable(t, ts::TableFormat::Markdown),
              "| name | ms |\n|---|--:|\n| a\\|b | 1.5 |\n| \\<b\\> | 2 |\n| short |  |\n");
    EXPECT_EQ(ts::renderTable(t, ts::TableFormat::Csv), "name,ms\na|b,1.5\n<b>,2\nshort\n");
}
