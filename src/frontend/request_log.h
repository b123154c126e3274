//===- frontend/request_log.h - One rate-limited log line per failed request ---===//
//
// Every inference request that is answered with an error is logged once (docs/operations.md,
// "Request error logs"), through spdlog, so it follows the text or JSON log format:
//
//   request failed protocol=grpc model="digits" id="7" code=INVALID_ARGUMENT
//     reason="model 'digits', request '7': input 'image': ..."
//
// (one line; values are JSON-quoted so a newline or quote sent by a client cannot forge a
// log line; the model and id are cut to 128 bytes and the reason to 1024, with "...").
// Client errors (codes a client can cause: INVALID_ARGUMENT, NOT_FOUND, ...) log at warn,
// server faults (INTERNAL, UNKNOWN, DATA_LOSS) at error.
//
// A token bucket bounds the rate: `burst` lines at once, refilled at `lines_per_second`.
// A line over the rate is dropped and counted; the next line that is logged carries
// `suppressed=N` (lines dropped since the last one logged), so a flood of bad requests
// costs a bounded amount of disk per second and nothing is lost silently.
//
// Thread safety: log() may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace rs::frontend {

struct RequestLogOptions {
  /// Sustained lines per second.
  double lines_per_second = 20;
  /// Lines allowed at once after a quiet period.
  double burst = 50;
  /// Tests only: the clock.
  std::function<std::chrono::steady_clock::time_point()> now = [] {
    return std::chrono::steady_clock::now();
  };
};

/// Where a failed request came in and what it was.
struct FailedRequest {
  std::string_view protocol; // "grpc" or "http"
  std::string_view model;
  std::string_view id;
};

/// What the protocol front-ends tell the worker about each failed inference request, so
/// that it is logged once and counted: the front-ends see every answer (decoding errors
/// included) and call this before replying.
class RequestReporter {
public:
  virtual ~RequestReporter() = default;
  /// `request` failed with `status`. `in_service` when the InferenceService answered it
  /// (and so already counted it in the metrics); false for errors before it (decoding).
  virtual void requestFailed(const FailedRequest &request, const Status &status,
                             bool in_service) = 0;
};

class RequestErrorLog {
public:
  explicit RequestErrorLog(RequestLogOptions options = {});

  /// Logs `status` (not OK) for `request`, or counts it as suppressed. Returns the line
  /// logged ("" when suppressed).
  std::string log(const FailedRequest &request, const Status &status);

  /// Lines logged / dropped since construction.
  uint64_t logged() const;
  uint64_t suppressed() const;

private:
  RequestLogOptions options_;
  mutable std::mutex mu_;
  double tokens_;                              // GUARDED_BY(mu_)
  std::chrono::steady_clock::time_point last_; // GUARDED_BY(mu_)
  uint64_t logged_ = 0;                        // GUARDED_BY(mu_)
  uint64_t suppressed_total_ = 0;              // GUARDED_BY(mu_)
  uint64_t suppressed_since_ = 0;              // GUARDED_BY(mu_)
};

/// The line log() writes, without the `suppressed=` suffix (exposed for tests).
std::string formatFailedRequest(const FailedRequest &request, const Status &status);

} // namespace rs::frontend
