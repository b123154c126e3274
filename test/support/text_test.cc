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

} // namespace
} // namespace rs
