//===- frontend/request_log.cc - One rate-limited log line per failed request -===//
#include "frontend/request_log.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>

namespace rs::frontend {
namespace {

constexpr size_t kMaxField = 128;
constexpr size_t kMaxReason = 1024;

/// `s` cut to `limit` bytes (with "...") and JSON-quoted; invalid UTF-8 is replaced.
std::string field(std::string_view s, size_t limit) {
  std::string v(s.substr(0, limit));
  if (s.size() > limit)
    v += "...";
  return nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool serverFault(StatusCode code) {
  return code == StatusCode::kInternal || code == StatusCode::kUnknown ||
         code == StatusCode::kDataLoss;
}

} // namespace

std::string formatFailedRequest(const FailedRequest &request, const Status &status) {
  std::string line = "request failed protocol=";
  line += request.protocol;
  line += " model=" + field(request.model, kMaxField);
  line += " id=" + field(request.id, kMaxField);
  line += " code=";
  line += statusCodeName(status.code());
  line += " reason=" + field(status.message(), kMaxReason);
  return line;
}

RequestErrorLog::RequestErrorLog(RequestLogOptions options)
    : options_(std::move(options)), tokens_(options_.burst), last_(options_.now()) {}

std::string RequestErrorLog::log(const FailedRequest &request, const Status &status) {
  uint64_t suppressed = 0;
  {
    std::lock_guard lock(mu_);
    const auto now = options_.now();
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    if (elapsed > 0)
      tokens_ = std::min(options_.burst, tokens_ + elapsed * options_.lines_per_second);
    if (tokens_ < 1) {
      ++suppressed_total_;
      ++suppressed_since_;
      return "";
    }
    tokens_ -= 1;
    ++logged_;
    suppressed = suppressed_since_;
    suppressed_since_ = 0;
  }
  std::string line = formatFailedRequest(request, status);
  if (suppressed > 0)
    line += " suppressed=" + std::to_string(suppressed);
  if (serverFault(status.code()))
    spdlog::error("{}", line);
  else
    spdlog::warn("{}", line);
  return line;
}

uint64_t RequestErrorLog::logged() const {
  std::lock_guard lock(mu_);
  return logged_;
}

uint64_t RequestErrorLog::suppressed() const {
  std::lock_guard lock(mu_);
  return suppressed_total_;
}

} // namespace rs::frontend
