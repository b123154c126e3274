//===- server/worker_metrics_impl.h - Private: shared metrics parts -------===//
//
// Used by worker_metrics.cc (the families and the scrape) and worker_metrics_series.cc
// (the per-model series that requests and dispatches update, and their removal). Not
// part of the public API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <prometheus/summary.h>

namespace rs::server::detail {

/// The values of worker_model_state's `state` label (the repository index's states).
inline constexpr const char *kModelStates[] = {"READY", "UNAVAILABLE"};

/// The reference's queue-wait quantiles (0.5 and 0.99), over a one-minute window.
const prometheus::Summary::Quantiles &waitQuantiles();

} // namespace rs::server::detail
