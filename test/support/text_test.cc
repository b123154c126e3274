//===- test/support/text_test.cc - ASCII text helpers ------------------------===//
#include "support/text.h"

#include <gtest/gtest.h>

namespace rs {
namespace {

TEST(Text, LowerChangesOnlyAsciiCapitals) {
  EXPECT_EQ(lower("Round_Robin-2 TRUE"), "round_robin-2 true");
  EXPECT_EQ(lower(""), "");
  EXPECT_EQ(lower("\xC3\x89t\xC3\xA9"), "\xC3\x89t\xC3\xA9"); // UTF-8 bytes stay as they are
}

TEST(Text, TrimRemovesSurroundingWhitespaceOnly) {
  EXPECT_EQ(trim("  a b\t\r\n"), "a b");
  EXPECT_EQ(trim("\v\f"), "");
  EXPECT_EQ(trim("x"), "x");
  const std::string_view s = " keep ";
  EXPECT_EQ(trim(s).data(), s.data() + 1); // a view into the same characters
}

TEST(Text, EqualsIgnoreCaseComparesAsciiOnly) {
  EXPECT_TRUE(equalsIgnoreCase("Content-Length", "content-LENGTH"));
  EXPECT_FALSE(equalsIgnoreCase("chunked", "chunked "));
  EXPECT_FALSE(equalsIgnoreCase("\xC3\x89", "\xC3\xA9"));
  EXPECT_TRUE(equalsIgnoreCase("", ""));
}

TEST(Text, HexDigitValue) {
  EXPECT_EQ(hexDigitValue('0'), 0);
  EXPECT_EQ(hexDigitValue('9'), 9);
  EXPECT_EQ(hexDigitValue('a'), 10);
  EXPECT_EQ(hexDigitValue('F'), 15);
  EXPECT_EQ(hexDigitValue('g'), -1);
  EXPECT_EQ(hexDigitValue('%'), -1);
}

} // namespace
} // namespace rs
