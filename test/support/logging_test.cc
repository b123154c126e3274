//===- test/support/logging_test.cc - Log format selection -----------------===//
#include "support/logging.h"

#include <gtest/gtest.h>

namespace rs {
namespace {

TEST(Logging, ParsesFormats) {
  EXPECT_EQ(*parseLogFormat("text"), LogFormat::kText);
  EXPECT_EQ(*parseLogFormat("json"), LogFormat::kJson);
  Result<LogFormat> bad = parseLogFormat("xml");
  EXPECT_EQ(bad.status().message(), "logging.format must be text or json, got 'xml'");
}

TEST(Logging, RejectsUnknownLevel) {
  EXPECT_FALSE(configureLogging(LogFormat::kText, "loud").isOk());
  EXPECT_TRUE(configureLogging(LogFormat::kJson, "info").isOk());
  EXPECT_TRUE(configureLogging(LogFormat::kText, "info").isOk());
}

} // namespace
} // namespace rs
