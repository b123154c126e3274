//===- hooks/hook_frames.h - Frames and shared tensors of the hook channel ---===//
//
// The channel between the server and one hook process (python/reactant_hooks/runner.py has
// the same description from the other side): a connected unix stream socket carrying
// frames, each a 4-byte little-endian length and that many bytes of JSON. A frame that
// carries tensors also carries one file descriptor (SCM_RIGHTS): a memfd holding only
// that frame's tensors back to back, described in the JSON by
// {"name", "datatype", "shape", "offset", "nbytes"}. Numeric tensors are row-major, little
// endian; BYTES tensors are in the KServe serialized form (protocol/bytes_tensor.h).
//
// One memfd per request and per answer, sized by its tensors: the hook process sees the
// request's tensors and nothing else of the server, and the server checks every
// descriptor of the answer (range, datatype, size) against its memfd before it copies the
// tensor out with pread (readSharedTensors; no mapping, so a hook cannot change bytes the
// server has read).
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

/// One received frame: its JSON and the descriptor it carried (invalid when none).
struct Frame {
  nlohmann::json body;
  UniqueFd fd;
};

/// The largest frame body either side sends (a descriptor list, not tensor data).
inline constexpr uint32_t kMaxFrameBytes = 64u << 20;

/// Sends `body` as one frame on `sock`, with descriptor `fd` attached when >= 0.
/// Unavailable when the peer has gone.
Status sendFrame(int sock, const nlohmann::json &body, int fd = -1);

/// Receives one frame from `sock`, waiting until `deadline`.
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

/// The tensors `descriptors` describes in memfd `fd`, copied out of it. `what` names the sender in
/// errors ("postprocess of model 'm'"): Internal for a descriptor that is not an object with a
/// known datatype, a valid shape and a range inside the memfd whose size matches the shape, or a
/// name given twice.
Result<std::vector<protocol::NamedTensor>>
readSharedTensors(int fd, const nlohmann::json &descriptors, std::string_view what);

} // namespace rs::hooks
