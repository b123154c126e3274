//===- hooks/hook_segment.h - The shared memory of one hook process --------===//
//
// A HookSegment is the shared memory a hook process keeps between calls (docs/hooks.md,
// "Process model"): one memfd, mapped once by the server and once by the process, cut into a
// request area [0, replyOffset()) that the server fills with a frame's tensors and a reply
// area [replyOffset(), size) that the process fills with the results. Mapping it once saves
// the memfd, its sizing and its reads on every frame.
//
// The memfd is sealed (F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL) before the process receives
// it: the process cannot shrink it under the server's mapping (which would turn a server
// read into SIGBUS). The process may still write any byte of it at any time, so the server
// copies what it reads out of the reply area before it checks it (hooks/hook_binary.h) and
// never keeps a pointer into it.
//
// Errors: Internal when the memfd cannot be made, sized, sealed or mapped.
// Thread safety: one owner (the HookProcess) uses it at a time.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "hooks/hook_frames.h"

#include <cstdint>

namespace rs::hooks {

class HookSegment {
public:
  /// The smallest area either side gets (memfd pages cost memory only once touched).
  static constexpr uint64_t kMinAreaBytes = 1u << 20;
  /// The largest area a segment is made with: a frame above it is refused.
  static constexpr uint64_t kMaxAreaBytes = uint64_t{16} << 30;

  /// A sealed, mapped memfd with a request area of at least `request_bytes` and a reply
  /// area of at least `reply_bytes` (each rounded up to a power of two, at least
  /// kMinAreaBytes). Internal above kMaxAreaBytes.
  static Result<HookSegment> create(uint64_t request_bytes, uint64_t reply_bytes);

  HookSegment() = default;
  HookSegment(HookSegment &&other) noexcept;
  HookSegment &operator=(HookSegment &&other) noexcept;
  HookSegment(const HookSegment &) = delete;
  HookSegment &operator=(const HookSegment &) = delete;
  ~HookSegment();

  bool valid() const { return base_ != nullptr; }
  /// The memfd, to pass to the process once; -1 after releaseFd().
  int fd() const { return fd_.get(); }
  /// Closes the server's descriptor (the mapping stays) once the process holds its own.
  void releaseFd() { fd_.reset(); }

  uint8_t *requestArea() { return base_; }
  uint64_t requestBytes() const { return reply_offset_; }
  uint64_t replyOffset() const { return reply_offset_; }
  /// The reply area: the peer may change these bytes at any time.
  const uint8_t *replyArea() const { return base_ + reply_offset_; }
  uint64_t replyBytes() const { return size_ - reply_offset_; }

private:
  UniqueFd fd_;
  uint8_t *base_ = nullptr;
  uint64_t size_ = 0;
  uint64_t reply_offset_ = 0;
};

} // namespace rs::hooks
