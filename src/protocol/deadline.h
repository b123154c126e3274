//===- protocol/deadline.h - Request deadlines from wire values ------------===//
//
// Clients give a deadline two ways (reference-system.md section 5.2): the request
// parameter `reactant_timeout_ns` (int64, a relative budget in nanoseconds, on gRPC and
// HTTP) and, on gRPC, the call deadline (`grpc-timeout`). The effective deadline is the
// tighter of the two. Hostile values saturate instead of wrapping: a negative budget is an
// already-expired deadline, a huge one is clamped to the clock's maximum.
//
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"

#include <chrono>
#include <cstdint>
#include <optional>

namespace rs::protocol {

/// Name of the request parameter carrying the relative budget in nanoseconds.
inline constexpr const char *kTimeoutParameter = "reactant_timeout_ns";

/// `now + budget_ns`, saturating at the clock's range (budget_ns < 0 gives `now`).
Clock::time_point deadlineAfter(int64_t budget_ns, Clock::time_point now);

/// A system_clock deadline (as gRPC reports it) on the steady clock; nullopt when the
/// deadline is infinite (system_clock::time_point::max()). Saturates like deadlineAfter.
std::optional<Clock::time_point> steadyDeadline(std::chrono::system_clock::time_point deadline,
                                                std::chrono::system_clock::time_point system_now,
                                                Clock::time_point now);

/// The earlier of two optional deadlines (nullopt means none).
std::optional<Clock::time_point> tighterDeadline(std::optional<Clock::time_point> a,
                                                 std::optional<Clock::time_point> b);

} // namespace rs::protocol
