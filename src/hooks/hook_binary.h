//===- hooks/hook_binary.h - The binary calls and results frames -----------===//
//
// The hot path of the hook channel (hooks/hook_frames.h; python/reactant_hooks/runner.py
// reads and writes the same layout): a frame of calls from the server and a frame of results
// back, as compact little-endian binary bodies (no JSON to write or parse), their tensors in the
// process's segment (hooks/hook_segment.h).
//
//   calls frame (server -> process), header of 32 bytes:
//     u8 kind = 1, u8 stage (0 preprocess, 1 postprocess, 2 run), u8 flags (bit 0: a new
//     segment is attached), u8 0, u32 call count, u64 request bytes used, u64 reply area
//     offset, u64 reply area size
//     per call: u32 tensor count, then that many tensor records
//   results frame (process -> server), header of 8 bytes:
//     u8 kind = 2, u8 flags (bit 0: the tensors lie in an attached memfd, not the reply
//     area), u16 0, u32 result count (one per call, in order)
//     per result: u8 status (0 ok, 1 the hook raised, 2 a result the server cannot carry),
//     u32 n, then n tensor records (ok) or n bytes of UTF-8 error text
//   tensor record: u8 datatype code, u8 rank, u16 name length, u64 offset, u64 nbytes,
//     rank x i64 dims, the name's bytes. Offsets count from the start of the request area
//     (calls) or of the reply area or memfd (results). Codes: 1 BOOL, 2 UINT8, 3 UINT16,
//     4 UINT32, 5 UINT64, 6 INT8, 7 INT16, 8 INT32, 9 INT64, 10 FP16, 11 FP32, 12 FP64,
//     13 BYTES.
//
// decodeResults checks the frame's structure (every count and length against the bytes
// left, the datatype codes) and readTensors (hooks/hook_frames.h) every record's range and
// size against the reply area or memfd, so no value the process sends makes the server read
// or write outside the bytes it owns.
//
// Thread safety: free functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hooks/hook_frames.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rs::hooks {

/// The first byte of a calls frame's and of a results frame's body.
inline constexpr uint8_t kCallsFrame = 1;
inline constexpr uint8_t kResultsFrame = 2;
/// Calls flag: a new segment (hooks/hook_segment.h) is attached to this frame.
inline constexpr uint8_t kSegmentAttached = 1;
/// Results flag: the tensors lie in an attached memfd (the reply area is too small for them).
inline constexpr uint8_t kResultsInMemfd = 1;
/// Tensors start at multiples of this many bytes in the request area.
inline constexpr uint64_t kTensorAlignment = 64;

/// Bytes the request area needs for the tensors of `calls` (each aligned).
uint64_t callsBytes(const std::vector<const std::vector<protocol::NamedTensor> *> &calls);

/// Where the tensors of a calls frame go and what the process is told about its segment.
struct CallsLayout {
  uint8_t stage = 0;
  uint8_t flags = 0;
  uint8_t *request_area = nullptr; // at least callsBytes(calls) bytes
  uint64_t reply_offset = 0;
  uint64_t reply_bytes = 0;
};

/// Copies the tensors of `calls` into the request area and returns the frame's body.
std::string encodeCalls(const std::vector<const std::vector<protocol::NamedTensor> *> &calls,
                        const CallsLayout &layout);

/// One call's result as the process described it.
struct ResultRecord {
  uint8_t status = 0; // 0 ok, 1 raised, 2 bad result
  std::string error;  // status != 0
  std::vector<TensorRecord> tensors;
};

/// A decoded results frame.
struct ResultsFrame {
  bool in_memfd = false;
  std::vector<ResultRecord> results;
  /// The end of the furthest tensor (what the reply area would need).
  uint64_t extent = 0;
};

/// Decodes a results frame body. Internal for a body that is not one: a wrong kind, a
/// count or length past the end, an unknown datatype code or status, bytes left over.
Result<ResultsFrame> decodeResults(std::string_view body);

} // namespace rs::hooks
