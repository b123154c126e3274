//===- hooks/hook_segment.cc - The shared memory of one hook process -------===//
#include "hooks/hook_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

namespace rs::hooks {
namespace {

uint64_t areaSize(uint64_t wanted) {
  return std::bit_ceil(std::max<uint64_t>(HookSegment::kMinAreaBytes, wanted));
}

} // namespace

Result<HookSegment> HookSegment::create(uint64_t request_bytes, uint64_t reply_bytes) {
  if (request_bytes > HookSegment::kMaxAreaBytes || reply_bytes > HookSegment::kMaxAreaBytes)
    return internalError() << "hook tensors of " << std::max(request_bytes, reply_bytes)
                           << " bytes exceed the shared memory limit of "
                           << HookSegment::kMaxAreaBytes;
  HookSegment s;
  s.reply_offset_ = areaSize(request_bytes);
  s.size_ = s.reply_offset_ + areaSize(reply_bytes);
  s.fd_.reset(::memfd_create("reactant_hook_segment", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!s.fd_.valid())
    return internalError() << "memfd_create for a hook segment: " << std::strerror(errno);
  if (::ftruncate(s.fd_.get(), static_cast<off_t>(s.size_)) != 0)
    return internalError() << "sizing a hook segment of " << s.size_
                           << " bytes: " << std::strerror(errno);
  if (::fcntl(s.fd_.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    return internalError() << "sealing a hook segment: " << std::strerror(errno);
  void *p = ::mmap(nullptr, s.size_, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd_.get(), 0);
  if (p == MAP_FAILED)
    return internalError() << "mapping a hook segment of " << s.size_
                           << " bytes: " << std::strerror(errno);
  s.base_ = static_cast<uint8_t *>(p);
  return s;
}

HookSegment::HookSegment(HookSegment &&other) noexcept { *this = std::move(other); }

HookSegment &HookSegment::operator=(HookSegment &&other) noexcept {
  if (this == &other)
    return *this;
  if (base_)
    ::munmap(base_, size_);
  fd_ = std::move(other.fd_);
  base_ = std::exchange(other.base_, nullptr);
  size_ = std::exchange(other.size_, 0);
  reply_offset_ = std::exchange(other.reply_offset_, 0);
  return *this;
}

HookSegment::~HookSegment() {
  if (base_)
    ::munmap(base_, size_);
}

} // namespace rs::hooks
