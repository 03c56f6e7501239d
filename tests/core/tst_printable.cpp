// printable(): labels and device names from a store, shown in a terminal.
#include <gtest/gtest.h>

#include "core/lab.h"

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
