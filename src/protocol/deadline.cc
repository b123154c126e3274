//===- protocol/deadline.cc - Request deadlines from wire values -----------===//
#include "protocol/deadline.h"

#include <limits>

namespace rs::protocol {

Clock::time_point deadlineAfter(int64_t budget_ns, Clock::time_point now) {
  if (budget_ns <= 0)
    return now;
  using Rep = Clock::duration::rep;
  Rep now_ticks = now.time_since_epoch().count();
  // Clock ticks are nanoseconds on every platform we build for; convert generally anyway.
  auto budget = std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(budget_ns));
  if (budget.count() > std::numeric_limits<Rep>::max() - now_ticks)
    return Clock::time_point::max();
  return now + budget;
}

std::optional<Clock::time_point> steadyDeadline(std::chrono::system_clock::time_point deadline,
                                                std::chrono::system_clock::time_point system_now,
                                                Clock::time_point now) {
  if (deadline == std::chrono::system_clock::time_point::max())
    return std::nullopt;
  if (deadline <= system_now)
    return now;
  // Both are system_clock points, so the difference cannot overflow unless the deadline is
  // absurdly far; cap at ~292 years by going through nanoseconds with a check.
  auto remaining = deadline - system_now;
  using SysRep = std::chrono::system_clock::duration::rep;
  constexpr SysRep kMaxNsInSysTicks =
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds::max())
          .count();
  if (remaining.count() >= kMaxNsInSysTicks)
    return Clock::time_point::max();
  return deadlineAfter(std::chrono::duration_cast<std::chrono::nanoseconds>(remaining).count(),
                       now);
}

std::optional<Clock::time_point> tighterDeadline(std::optional<Clock::time_point> a,
                                                 std::optional<Clock::time_point> b) {
  if (!a)
    return b;
  if (!b)
    return a;
  return std::min(*a, *b);
}

} // namespace rs::protocol
