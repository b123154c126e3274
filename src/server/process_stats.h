//===- server/process_stats.h - The process_* series of /metrics ------------===//
//
// The standard Prometheus process metrics (the client libraries' "process collector"),
// read from Linux /proc/self: CPU seconds (user + system), resident and virtual memory in
// bytes, open and maximum file descriptors, and the start time in seconds since the epoch.
// A value that cannot be read is left at 0.
// Thread safety: readProcessStats() may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace rs::server {

struct ProcessStats {
  double cpu_seconds = 0;        // process_cpu_seconds_total
  double resident_bytes = 0;     // process_resident_memory_bytes
  double virtual_bytes = 0;      // process_virtual_memory_bytes
  double open_fds = 0;           // process_open_fds
  double max_fds = 0;            // process_max_fds
  double start_time_seconds = 0; // process_start_time_seconds
};

ProcessStats readProcessStats();

} // namespace rs::server
