//===- gateway/metrics_merge.h - One exposition from the gateway and workers ===//
//
// The gateway's /metrics (reference-system.md section 6): its own series followed by
// every worker's /metrics, merged into one valid Prometheus text exposition (format
// 0.0.4). Samples are grouped by metric family so each family has one `# HELP` and one
// `# TYPE` line (the first seen) and all its samples together, in the order the families
// first appear. Every worker sample gets the label worker="<name>" (the gateway's name for
// that worker); a `worker` label of the sample's own is kept when it has that value and
// renamed `exported_worker` otherwise (Prometheus' rule for a conflicting target label).
//
// A sample belongs to the family named by the closest preceding `# TYPE` line when its
// name is that family's name or the name plus a histogram/summary suffix (_bucket, _sum,
// _count, _created); otherwise it is its own untyped family. Lines that are neither
// comments nor samples are dropped.
//
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rs::gateway {

/// Merges `own` (the gateway's exposition, labels kept as they are) with each
/// (worker name, exposition) of `workers`.
std::string mergeExpositions(std::string_view own,
                             const std::vector<std::pair<std::string, std::string>> &workers);

} // namespace rs::gateway
