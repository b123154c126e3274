//===- server/process_stats.cc - The process_* series of /metrics -----------===//
#include "server/process_stats.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace rs::server {
namespace {

/// Seconds since the epoch at which the machine booted (/proc/stat `btime`), or 0.
double bootTime() {
  std::ifstream in("/proc/stat");
  std::string key;
  while (in >> key) {
    if (key == "btime") {
      double t = 0;
      in >> t;
      return t;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

} // namespace

ProcessStats readProcessStats() {
  ProcessStats s;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (std::getline(stat, line)) {
    // Fields after the command name, which is in parentheses and may hold spaces.
    size_t close = line.rfind(')');
    if (close != std::string::npos) {
      std::istringstream rest(line.substr(close + 2));
      std::string f[22];
      for (int i = 0; i < 22 && rest >> f[i]; ++i) {
      }
      // f[i] is field i + 3 of proc(5): utime 14, stime 15, starttime 22, vsize 23, rss 24
      // (pages).
      auto num = [&](int field) { return std::strtod(f[field - 3].c_str(), nullptr); };
      if (ticks > 0) {
        s.cpu_seconds = (num(14) + num(15)) / ticks;
        const double boot = bootTime();
        if (boot > 0)
          s.start_time_seconds = boot + num(22) / ticks;
      }
      s.virtual_bytes = num(23);
      s.resident_bytes = num(24) * page;
    }
  }
  if (DIR *d = opendir("/proc/self/fd")) {
    int n = 0;
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.')
        ++n;
    closedir(d);
    s.open_fds = n - 1; // the descriptor of the listing itself
  }
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    s.max_fds = static_cast<double>(lim.rlim_cur);
  return s;
}

} // namespace rs::server
