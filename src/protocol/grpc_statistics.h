//===- protocol/grpc_statistics.h - ModelStatistics <-> its gRPC message ----===//
//
// Triton's statistics extension over gRPC (inference.ModelStatisticsResponse) to and from
// protocol::ModelStatistics (protocol/service.h says what each field counts): the worker
// encodes its statistics, the gateway decodes its workers' answers to sum them
// (gateway/statistics_sum.h). Counts and cumulative durations in nanoseconds pass as they
// are.
//
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/proto/grpc_service.pb.h"
#include "protocol/service.h"

#include <vector>

namespace rs::protocol {

/// Fills `out` (cleared first) with `stats` in their order; batch_stats as listed.
void encodeModelStatistics(const std::vector<ModelStatistics> &stats,
                           inference::ModelStatisticsResponse *out);

/// The statistics of `msg`, in its order (the reverse of encodeModelStatistics). The
/// cache_hit and cache_miss durations, which ModelStatistics does not hold (there is no
/// response cache), are dropped. Never fails: every field is a count.
std::vector<ModelStatistics> decodeModelStatistics(const inference::ModelStatisticsResponse &msg);

} // namespace rs::protocol
