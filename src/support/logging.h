//===- support/logging.h - Log output format --------------------------------===//
//
// The server logs through spdlog. configureLogging() chooses the format once at startup:
// `text` (default; "[2026-11-29 15:04:05.123] [info] model loaded name=..." on stderr) or
// `json` (`logging.format: json`; one JSON object per line on stderr with the keys `ts`
// (ISO-8601 UTC with milliseconds), `level` and `msg`). Startup evidence lines keep their
// names in both formats. Thread safety: call once before other threads log.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <string_view>

namespace rs {

enum class LogFormat { kText, kJson };

/// Parses "text" or "json". InvalidArgument otherwise.
Result<LogFormat> parseLogFormat(std::string_view s);

/// Installs the default logger with `format` at `level` ("trace", "debug", "info", "warn",
/// "error"). InvalidArgument for an unknown level.
Status configureLogging(LogFormat format, std::string_view level = "info");

} // namespace rs
