//===- client/rss_trend.cc - A server's resident memory over a load run -----===//
#include "client/rss_trend.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace rs::client {

RssTrend rssTrend(const std::vector<std::pair<double, int64_t>> &samples) {
  std::map<int, std::vector<int64_t>> by_minute;
  for (const auto &[t, bytes] : samples)
    if (t >= 0)
      by_minute[static_cast<int>(t / 60)].push_back(bytes);
  RssTrend trend;
  for (auto &[minute, values] : by_minute) {
    std::sort(values.begin(), values.end());
    trend.minutes.push_back({minute, static_cast<int>(values.size()), values.front(),
                             values[(values.size() - 1) / 2], values.back()});
  }
  auto base = std::find_if(trend.minutes.begin(), trend.minutes.end(),
                           [](const RssMinute &m) { return m.minute == 1; });
  if (base == trend.minutes.end() || base->median <= 0 || base + 1 == trend.minutes.end())
    return trend;
  int64_t peak = 0;
  for (auto it = base; it != trend.minutes.end(); ++it)
    peak = std::max(peak, it->highest);
  const auto ratio = [&](int64_t v) {
    return static_cast<double>(v) / static_cast<double>(base->median) - 1;
  };
  trend.growth = ratio(trend.minutes.back().median);
  trend.peak_over_median = ratio(peak);
  return trend;
}

std::string rssTrendText(const RssTrend &trend) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  const auto mib = [](int64_t v) { return static_cast<double>(v) / (1 << 20); };
  for (size_t i = 0; i < trend.minutes.size(); ++i) {
    const RssMinute &m = trend.minutes[i];
    os << (i ? ", " : "") << "minute " << m.minute << ": " << mib(m.lowest) << "/"
       << mib(m.median) << "/" << mib(m.highest);
  }
  os << " MiB (lowest/median/highest)";
  return os.str();
}

} // namespace rs::client
