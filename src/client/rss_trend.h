//===- client/rss_trend.h - A server's resident memory over a load run ------===//
//
// A soak samples the server's resident memory every few seconds. Whether it grows is read per
// minute of the run: each minute's lowest, median and highest sample. Requests in flight when a
// sample is taken (a body near the request limit, a refused bomb being decoded) raise that one
// sample by their transient memory; a leak or memory the server keeps raises every later
// sample, the lowest ones included. So the growth figure compares the lowest sample of the
// run's last 60 s (what the server holds between requests at the end) with the lowest of its
// second minute (the first is warm-up: caches, arenas and thread stacks settle), and the peaks
// are reported beside it. Under a load that keeps large requests in flight at every sample
// the lowest sample is itself raised, so the figure errs towards growth, never away from it.
// A median would not do: when about half the samples catch a large request, the median of a
// window lands on either level by chance.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rs::client {

/// Resident-memory samples of one minute of a run, bytes.
struct RssMinute {
  int minute = 0; // 0 for [0, 60) s, 1 for [60, 120) s, ...; the last may be partial
  int samples = 0;
  int64_t lowest = 0, median = 0, highest = 0;
};

/// The per-minute summary of a run's samples and its growth figure.
struct RssTrend {
  std::vector<RssMinute> minutes; // ascending, minutes without samples left out
  /// Lowest sample in the last 60 s (after the last sample's time minus 60 s) over the lowest
  /// of minute 1 (the second), minus 1; unset when minute 1 has no sample or the last sample
  /// is before 120 s.
  std::optional<double> growth;
  /// Highest sample after the first minute over minute 1's lowest, minus 1; unset as above.
  std::optional<double> peak_over_floor;
};

/// Summarises `samples` ((seconds since the start, resident bytes), in time order). The median
/// of an even count is the lower of the two middle samples (a sample that was taken).
RssTrend rssTrend(const std::vector<std::pair<double, int64_t>> &samples);

/// "minute 1: 43.4/43.5/44.0 MiB, ..." (lowest/median/highest per minute).
std::string rssTrendText(const RssTrend &trend);

} // namespace rs::client
