//===- hooks/hook_frames.h - Frames and shared tensors of the hook channel ---===//
//
// The channel between the server and one hook process (python/reactant_hooks/runner.py has
// the same description from the other side): a connected unix stream socket carrying
// frames, each a 4-byte little-endian length and that many bytes of body. A body that opens
// with '{' is JSON (the hello, a meta model's sub-calls and their answers, a whole-frame
// error); any other is a binary calls or results frame (hooks/hook_binary.h), whose tensors
// lie in the process's shared segment (hooks/hook_segment.h). A frame may carry one file
// descriptor (SCM_RIGHTS): a new segment, or a memfd holding that frame's tensors back to back.
// In JSON a tensor is described by {"name", "datatype", "shape", "offset", "nbytes"}. Numeric
// tensors are row-major, little endian; BYTES tensors are in the KServe serialized form
// (protocol/bytes_tensor.h).
//
// The server checks every described tensor of an answer (range, datatype, size) against the
// bytes that hold it before it copies the tensor out (readTensors): with pread from a memfd,
// with memcpy from the mapped reply area, never leaving a view of the hook's memory in a
// tensor, so a hook cannot change bytes the server has read.
//
// Errors: Unavailable when the peer closed the socket, DeadlineExceeded when the deadline
// passes before a frame arrives, Internal for a malformed frame or descriptor (naming
// the tensor and what was wrong).
//
// Thread safety: free functions; a socket is used by one thread at a time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "support/status.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string_view>
#include <vector>

namespace rs::hooks {

using Clock = std::chrono::steady_clock;

/// An owned file descriptor, closed on destruction (-1: none).
class UniqueFd {
public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd &&other) noexcept : fd_(other.release()) {}
  UniqueFd &operator=(UniqueFd &&other) noexcept;
  UniqueFd(const UniqueFd &) = delete;
  UniqueFd &operator=(const UniqueFd &) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void reset(int fd = -1);

private:
  int fd_ = -1;
};

/// One received frame: its JSON (when it is JSON) or its binary body, and the descriptor it
/// carried (invalid when none).
struct Frame {
  bool json = true;
  nlohmann::json body; // a JSON object when `json`
  std::string binary;  // the body when not `json`
  UniqueFd fd;
};

/// The largest frame body either side sends (a descriptor list, not tensor data).
inline constexpr uint32_t kMaxFrameBytes = 64u << 20;

/// Sends `body` as one frame on `sock`, with descriptor `fd` attached when >= 0.
/// Unavailable when the peer has gone.
Status sendFrame(int sock, const nlohmann::json &body, int fd = -1);

/// Sends `body` (JSON text or a binary frame) as one frame on `sock`, with descriptor `fd`
/// attached when >= 0. Unavailable when the peer has gone.
Status sendFrameBytes(int sock, std::string_view body, int fd = -1);

/// Receives one frame from `sock`, waiting until `deadline`. Internal for a frame above
/// kMaxFrameBytes or a JSON body that is not an object.
Result<Frame> receiveFrame(int sock, Clock::time_point deadline);

/// Tensors laid out in a fresh memfd: the descriptor and their JSON descriptions.
struct SharedTensors {
  UniqueFd fd;
  nlohmann::json descriptors = nlohmann::json::array();
};

/// Copies `tensors` into a memfd sized exactly for them.
Result<SharedTensors> writeSharedTensors(const std::vector<protocol::NamedTensor> &tensors);

/// Copies the tensors of several calls into one memfd sized exactly for them; the
/// descriptors are one JSON array per call.
Result<SharedTensors>
writeSharedCalls(const std::vector<const std::vector<protocol::NamedTensor> *> &calls);

/// Where one tensor of an answer lies, as the peer described it (checked by readTensors).
struct TensorRecord {
  std::string name;
  std::string datatype; // KServe V2 name ("FP32", "BYTES")
  Shape shape;
  uint64_t offset = 0; // from the start of the source
  uint64_t nbytes = 0;
};

/// The bytes an answer's tensors lie in: a mapped range (copied with memcpy), or a memfd
/// (read with pread) when `base` is null.
struct SharedSource {
  const uint8_t *base = nullptr;
  uint64_t size = 0;
  int fd = -1;
};

/// The tensors `records` describe in `source`, copied out of it. `what` names the sender
/// in errors ("postprocess result"): Internal for an unknown datatype, an invalid shape, a
/// range outside the source, a size that does not match the shape, malformed BYTES
/// elements, or a name given twice.
Result<std::vector<protocol::NamedTensor>> readTensors(const std::vector<TensorRecord> &records,
                                                       const SharedSource &source,
                                                       std::string_view what);

/// The tensors `descriptors` describes in memfd `fd`, copied out of it. `what` names the sender in
/// errors ("postprocess of model 'm'"): Internal for a descriptor that is not an object with a
/// known datatype, a valid shape and a range inside the memfd whose size matches the shape, or a
/// name given twice.
Result<std::vector<protocol::NamedTensor>>
readSharedTensors(int fd, const nlohmann::json &descriptors, std::string_view what);

} // namespace rs::hooks
