//===- pjrt/host_staging.cc - Pinned host blocks for request uploads ------===//
#include "pjrt/host_staging.h"

#include <cstdlib>

namespace rs::pjrt {

using namespace capi;

namespace {

constexpr size_t kPage = 4096;

/// The size class of a request of `bytes`: the next power of two, at least a page.
size_t sizeClass(size_t bytes) {
  size_t size = kPage;
  while (size < bytes)
    size *= 2;
  return size;
}

} // namespace

HostStaging::HostStaging(const Plugin &plugin, PJRT_Client *client, size_t max_bytes)
    : plugin_(plugin), client_(client), max_bytes_(max_bytes) {
  unavailable_ = !plugin_.has(Slot::kClientDmaMap) || !plugin_.has(Slot::kClientDmaUnmap);
}

HostStaging::~HostStaging() {
  for (const StagingBlock &b : all_) {
    PJRT_Client_DmaUnmap_Args args{};
    args.struct_size = sizeof args;
    args.client = client_;
    args.data = b.data;
    (void)plugin_.call(Slot::kClientDmaUnmap, &args, "PJRT_Client_DmaUnmap");
    std::free(b.data);
  }
}

StagingBlock HostStaging::acquire(size_t bytes) {
  const size_t size = sizeClass(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = free_.find(size);
  if (it != free_.end() && !it->second.empty()) {
    void *data = it->second.back();
    it->second.pop_back();
    return {data, size};
  }
  if (unavailable_ || mapped_ + size > max_bytes_)
    return {};
  void *data = std::aligned_alloc(kPage, size);
  if (data == nullptr)
    return {};
  PJRT_Client_DmaMap_Args args{};
  args.struct_size = sizeof args;
  args.client = client_;
  args.data = data;
  args.size = size;
  // Registering under the lock: it happens once per block, while the pool warms up.
  if (!plugin_.call(Slot::kClientDmaMap, &args, "PJRT_Client_DmaMap").isOk()) {
    std::free(data);
    unavailable_ = true; // e.g. UNIMPLEMENTED, or the host's locked-memory limit
    return {};
  }
  mapped_ += size;
  all_.push_back({data, size});
  return {data, size};
}

void HostStaging::release(StagingBlock block) {
  if (block.data == nullptr)
    return;
  std::lock_guard<std::mutex> lock(mu_);
  free_[block.size].push_back(block.data);
}

size_t HostStaging::mappedBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mapped_;
}

bool HostStaging::unavailable() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unavailable_;
}

} // namespace rs::pjrt
