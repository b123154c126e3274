//===- pjrt/host_staging.h - Pinned host blocks for request uploads -------===//
//
// Page-aligned host memory registered with the device once (PJRT_Client_DmaMap, which
// page-locks it: `../shared/reference/pjrt-fast-path.md` 1.2), reused for every upload of a
// request tensor. The GPU plugin DMAs straight from registered memory; from ordinary
// (pageable) memory it first copies the bytes into a staging buffer of its own on a
// worker thread, one copy and one thread hop more per upload (same page, 1.1).
//
// Blocks come in power-of-two sizes from 4 KiB; a released block is kept for the next
// upload of its size class, never unmapped before the staging pool is destroyed (mapping
// costs hundreds of microseconds, so it must not happen per request). The pool maps at
// most `max_bytes` in all; past that, or where the plugin has no DmaMap or refuses it,
// acquire() returns an empty block and the caller uploads from its own memory.
//
// Thread safety: acquire() and release() may be called concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "pjrt/plugin.h"

#include <cstddef>
#include <map>
#include <mutex>
#include <vector>

namespace rs::pjrt {

/// One registered block: `size` bytes at `data` (page-aligned); empty when data is null.
struct StagingBlock {
  void *data = nullptr;
  size_t size = 0;
};

class HostStaging {
public:
  /// A pool for `client` of `plugin` that maps at most `max_bytes`.
  HostStaging(const Plugin &plugin, capi::PJRT_Client *client, size_t max_bytes);
  /// Unmaps and frees every block. No transfer from a block may still run.
  ~HostStaging();
  HostStaging(const HostStaging &) = delete;
  HostStaging &operator=(const HostStaging &) = delete;

  /// A registered block of at least `bytes` (> 0), or an empty one (see the file comment).
  StagingBlock acquire(size_t bytes);
  /// Returns a block from acquire() for reuse; empty blocks are ignored.
  void release(StagingBlock block);

  /// Bytes mapped so far, and whether mapping is known not to work with this plugin.
  size_t mappedBytes() const;
  bool unavailable() const;

private:
  const Plugin &plugin_;
  capi::PJRT_Client *client_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::map<size_t, std::vector<void *>> free_; // GUARDED_BY(mu_), by block size
  std::vector<StagingBlock> all_;              // GUARDED_BY(mu_)
  size_t mapped_ = 0;                          // GUARDED_BY(mu_)
  bool unavailable_ = false;                   // GUARDED_BY(mu_)
};

/// Holds blocks of a HostStaging and releases them when it goes out of scope.
class StagingLease {
public:
  explicit StagingLease(HostStaging *staging) : staging_(staging) {}
  ~StagingLease() {
    for (const StagingBlock &b : blocks_)
      staging_->release(b);
  }
  StagingLease(const StagingLease &) = delete;
  StagingLease &operator=(const StagingLease &) = delete;
  /// acquire() on the pool; a non-empty block is released with the lease.
  StagingBlock acquire(size_t bytes) {
    StagingBlock b = staging_ == nullptr ? StagingBlock{} : staging_->acquire(bytes);
    if (b.data != nullptr)
      blocks_.push_back(b);
    return b;
  }

private:
  HostStaging *staging_;
  std::vector<StagingBlock> blocks_;
};

} // namespace rs::pjrt
