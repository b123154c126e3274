//===- pjrt/cuda_completion.h - Completion polling through the CUDA driver --------===//
//
// The CUDA profile's CompletionPoller (pjrt/completion_poller.h): the driver API
// (libcuda.so.1, opened with dlopen, so the server builds and runs without CUDA) on the
// device's primary context, which XLA uses too, and the plugin's stream extension
// (PJRT_Extension_Type_Stream, `wait_stream`). Per calling thread one non-blocking stream
// and one event without timing, made on first use: waitDefined() makes the stream wait for
// each buffer's definition event, records the event behind that and polls cuEventQuery
// (../shared/reference/pjrt-fast-path.md §2.4, §7.4).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pjrt/completion_poller.h"
#include "pjrt/plugin.h"

#include <memory>
#include <string>

namespace rs::pjrt {

/// The poller for the device with CUDA ordinal `cuda_ordinal` (its PJRT local hardware
/// id) of `plugin`'s client, or nullptr with `*why` set when it cannot work here: no
/// libcuda.so.1, a driver entry point missing, no stream extension in the plugin, or the
/// driver refusing the device's primary context.
std::unique_ptr<CompletionPoller> makeCudaCompletionPoller(const Plugin &plugin, int cuda_ordinal,
                                                           std::string *why);

} // namespace rs::pjrt
