//===- client/rss_trend.h - A server's resident memory over a load run ------===//
//
// A soak samples the server's resident memory every few seconds. Whether it grows is read per
// minute of the run: each minute's lowest, median and highest sample. Requests in flight when a
// sample is taken (a body near the request limit, a refused bomb being decoded) raise that one
// sample; a leak or retained memory raises every later one. So the growth figure compares the
// median of the run's last 60 s of samples with the median of its second minute (the first is
// warm-up: caches, arenas and thread stacks settle), and the peaks are reported beside it.
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
  /// Median of the samples in the last 60 s (after the last sample's time minus 60 s) over
  /// the median of minute 1 (the second), minus 1; unset when minute 1 has no sample or the
  /// last sample is before 120 s.
  std::optional<double> growth;
  /// Highest sample after the first minute over minute 1's median, minus 1; unset as above.
  std::optional<double> peak_over_median;
};

/// Summarises `samples` ((seconds since the start, resident bytes), in time order). The median
/// of an even count is the lower of the two middle samples (a sample that was taken).
RssTrend rssTrend(const std::vector<std::pair<double, int64_t>> &samples);

/// "minute 1: 43.4/43.5/44.0 MiB, ..." (lowest/median/highest per minute).
std::string rssTrendText(const RssTrend &trend);

} // namespace rs::client
