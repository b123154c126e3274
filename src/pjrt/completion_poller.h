//===- pjrt/completion_poller.h - Seeing a program finish without the plugin's callback -===//
//
// A PJRT event of the GPU plugin turns ready only after the plugin's host callback has run
// on one of its own threads (../shared/reference/pjrt-fast-path.md §0, §2.4): after a short
// program that thread has slept, and waking it costs more than the program. A
// CompletionPoller sees the same completion on the calling thread instead: it makes a
// stream of its own wait, on the device, for the results' definition events (the plugin's
// stream extension) and polls a device event recorded behind them. A vendor profile
// provides one where its driver allows it (VendorProfile::completionPoller); without one
// the client waits on the PJRT events as before.
//
// Thread safety: waitDefined() may be called from any number of threads at once (each
// thread polls on its own stream and event).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pjrt/pjrt_c_api.h"

#include <chrono>
#include <span>
#include <string>

namespace rs::pjrt {

class CompletionPoller {
public:
  virtual ~CompletionPoller() = default;
  /// Waits, polling for at most `spin`, until every buffer of `buffers` is defined on the
  /// device (the program that produces them has finished, its copies into host memory
  /// included). True when they are; false when the spin ran out or the driver reported an
  /// error, in which case the caller waits on the PJRT event, which carries the error.
  virtual bool waitDefined(std::span<capi::PJRT_Buffer *const> buffers,
                           std::chrono::microseconds spin) const = 0;
  /// How completions are seen, for the startup log: "cuda event polling (libcuda.so.1)".
  virtual std::string describe() const = 0;
};

} // namespace rs::pjrt
