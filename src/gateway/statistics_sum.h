//===- gateway/statistics_sum.h - One model's statistics over its workers ---===//
//
// The gateway answers Triton's ModelStatistics for a model with the sum of the statistics
// of the workers that serve it (docs/gateway.md "Statistics"). Every field of Triton's
// ModelStatistics is a count or a cumulative duration in nanoseconds, so the sum over
// workers is the statistics the fleet would have kept as one server: inference_count,
// execution_count and every duration's count and ns are added; batch_stats are added per
// batch size; last_inference (milliseconds since the Unix epoch) is the latest of them.
//
// Thread safety: a pure function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/service.h"

#include <vector>

namespace rs::gateway {

/// The per-model sum of `per_worker` (each worker's ModelStatistics answer): one entry per
/// model name that any worker lists, sorted by name, with the version of the first worker
/// that lists it; batch_stats in ascending batch size. Counts add without a check for
/// overflow (uint64 nanoseconds hold 584 years).
std::vector<protocol::ModelStatistics>
sumModelStatistics(const std::vector<std::vector<protocol::ModelStatistics>> &per_worker);

} // namespace rs::gateway
