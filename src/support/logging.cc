//===- support/logging.cc - Log output format -------------------------------===//
#include "support/logging.h"

#include <nlohmann/json.hpp>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace rs {
namespace {

/// Writes each record as one JSON object per line to stderr.
class JsonStderrSink final : public spdlog::sinks::base_sink<std::mutex> {
protected:
  void sink_it_(const spdlog::details::log_msg &msg) override {
    using namespace std::chrono;
    const auto since = msg.time.time_since_epoch();
    const std::time_t secs = duration_cast<seconds>(since).count();
    const int64_t millis = duration_cast<milliseconds>(since).count() % 1000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char ts[64];
    std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03lldZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<long long>(millis));
    nlohmann::json line = {{"ts", ts},
                           {"level", std::string(spdlog::level::to_string_view(msg.level).data(),
                                                 spdlog::level::to_string_view(msg.level).size())},
                           {"msg", std::string(msg.payload.data(), msg.payload.size())}};
    const std::string text =
        line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

} // namespace

Result<LogFormat> parseLogFormat(std::string_view s) {
  if (s == "text")
    return LogFormat::kText;
  if (s == "json")
    return LogFormat::kJson;
  return invalidArgument() << "logging.format must be text or json, got '" << s << "'";
}

Status configureLogging(LogFormat format, std::string_view level) {
  const auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off")
    return invalidArgument() << "unknown log level '" << level << "'";
  std::shared_ptr<spdlog::logger> logger;
  if (format == LogFormat::kJson)
    logger = std::make_shared<spdlog::logger>("reactant", std::make_shared<JsonStderrSink>());
  else
    logger = std::make_shared<spdlog::logger>("reactant",
                                              std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_level(lvl);
  spdlog::set_default_logger(logger);
  return Status::ok();
}

} // namespace rs
