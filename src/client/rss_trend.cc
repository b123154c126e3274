//===- client/rss_trend.cc - A server's resident memory over a load run -----===//
#include "client/rss_trend.h"

#include <algorithm>
#include <climits>
#include <map>
#include <sstream>

namespace rs::client {

namespace {

/// The lower middle sample of `values` (sorted in place); `values` is not empty.
int64_t lowerMedian(std::vector<int64_t> &values) {
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

} // namespace

RssTrend rssTrend(const std::vector<std::pair<double, int64_t>> &samples) {
  std::map<int, std::vector<int64_t>> by_minute;
  for (const auto &[t, bytes] : samples)
    if (t >= 0)
      by_minute[static_cast<int>(t / 60)].push_back(bytes);
  RssTrend trend;
  for (auto &[minute, values] : by_minute) {
    const int64_t median = lowerMedian(values);
    trend.minutes.push_back(
        {minute, static_cast<int>(values.size()), values.front(), median, values.back()});
  }
  auto base = std::find_if(trend.minutes.begin(), trend.minutes.end(),
                           [](const RssMinute &m) { return m.minute == 1; });
  const double last_t = samples.empty() ? 0 : samples.back().first;
  if (base == trend.minutes.end() || base->lowest <= 0 || last_t < 120)
    return trend;
  int64_t last_lowest = INT64_MAX;
  int64_t peak = 0;
  for (const auto &[t, bytes] : samples) {
    if (t > last_t - 60)
      last_lowest = std::min(last_lowest, bytes);
    if (t >= 60)
      peak = std::max(peak, bytes);
  }
  const auto ratio = [&](int64_t v) {
    return static_cast<double>(v) / static_cast<double>(base->lowest) - 1;
  };
  trend.growth = ratio(last_lowest);
  trend.peak_over_floor = ratio(peak);
  return trend;
}

std::string rssTrendText(const RssTrend &trend) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  const auto mib = [](int64_t v) { return static_cast<double>(v) / (1 << 20); };
  for (size_t i = 0; i < trend.minutes.size(); ++i) {
    const RssMinute &m = trend.minutes[i];
    os << (i ? ", " : "") << "minute " << m.minute << ": " << mib(m.lowest) << "/" << mib(m.median)
       << "/" << mib(m.highest);
  }
  os << " MiB (lowest/median/highest)";
  return os.str();
}

} // namespace rs::client
