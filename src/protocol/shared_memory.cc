//===- protocol/shared_memory.cc - Triton system shared memory regions ------===//
//
// The regions of protocol/shared_memory.h: a registered window of a POSIX shared memory
// object, read and written within its bounds, and the registry that checks, opens, lists,
// finds and closes them per owner.
//
//===----------------------------------------------------------------------===//
#include "protocol/shared_memory.h"

#include "protocol/shared_memory_impl.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rs::protocol {

std::string shm_detail::jsonQuoted(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace {

using shm_detail::jsonQuoted;

/// Longest region name accepted (names appear in URLs and logs).
constexpr size_t kMaxRegionName = 256;
/// NAME_MAX of the shared-memory file system, the leading '/' included.
constexpr size_t kMaxKey = 255;

std::string errnoText(int err) { return std::strerror(err); }

Status checkKey(const std::string &region, const std::string &key) {
  const std::string what = "shared memory region " + jsonQuoted(region);
  if (key.size() < 2 || key[0] != '/')
    return invalidArgument() << what << ": key " << jsonQuoted(key)
                             << " is not a POSIX shared memory object name ('/' followed by a "
                                "name without '/')";
  if (key.size() > kMaxKey)
    return invalidArgument() << what << ": key has " << key.size() << " characters, at most "
                             << kMaxKey << " are allowed";
  if (key.find('/', 1) != std::string::npos || key.find('\0') != std::string::npos || key == "/." ||
      key == "/..")
    return invalidArgument() << what << ": key " << jsonQuoted(key)
                             << " is not a POSIX shared memory object name ('/' followed by a "
                                "name without '/')";
  return Status::ok();
}

/// offset + size without overflow, or nullopt.
std::optional<uint64_t> checkedEnd(uint64_t offset, uint64_t size) {
  if (size > std::numeric_limits<uint64_t>::max() - offset)
    return std::nullopt;
  return offset + size;
}

} // namespace

// ---- SharedMemoryRegion -------------------------------------------------------

SharedMemoryRegion::~SharedMemoryRegion() {
  if (fd_ >= 0)
    ::close(fd_);
}

Status SharedMemoryRegion::checkWindow(uint64_t offset, uint64_t size) const {
  std::optional<uint64_t> end = checkedEnd(offset, size);
  if (!end || *end > info_.byte_size)
    return invalidArgument() << "shared memory region " << jsonQuoted(info_.name) << ": " << size
                             << " bytes at offset " << offset << " run past the region's "
                             << info_.byte_size << " bytes";
  return Status::ok();
}

Status SharedMemoryRegion::read(uint64_t offset, std::span<uint8_t> out) const {
  RS_RETURN_IF_ERROR(checkWindow(offset, out.size()));
  // The window lies inside [0, byte_size) and registration checked offset + byte_size, so
  // the file position below cannot overflow off_t.
  uint64_t pos = info_.offset + offset;
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(pos + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return internalError() << "shared memory region " << jsonQuoted(info_.name)
                             << ": read failed: " << errnoText(errno);
    if (n == 0)
      return invalidArgument() << "shared memory region " << jsonQuoted(info_.name) << ": object "
                               << jsonQuoted(info_.key) << " ends before byte "
                               << (pos + out.size()) << " (it was shrunk after registration)";
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

Status SharedMemoryRegion::write(uint64_t offset, std::span<const uint8_t> bytes) const {
  RS_RETURN_IF_ERROR(checkWindow(offset, bytes.size()));
  uint64_t pos = info_.offset + offset;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n =
        ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(pos + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return internalError() << "shared memory region " << jsonQuoted(info_.name)
                             << ": write failed: " << errnoText(n < 0 ? errno : EIO);
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

// ---- SharedMemoryRegistry -----------------------------------------------------

SharedMemoryRegistry::SharedMemoryRegistry(SharedMemoryRegistryOptions options)
    : options_(options) {}

Status SharedMemoryRegistry::registerRegion(const std::string &owner,
                                            const SharedMemoryRegionInfo &info,
                                            std::string *cause) {
  std::string ignored;
  if (!cause)
    cause = &ignored;
  if (info.name.empty())
    return invalidArgument() << "shared memory region name is empty";
  if (info.name.size() > kMaxRegionName)
    return invalidArgument() << "shared memory region name has " << info.name.size()
                             << " characters, at most " << kMaxRegionName << " are allowed";
  const std::string what = "shared memory region " + jsonQuoted(info.name);
  RS_RETURN_IF_ERROR(checkKey(info.name, info.key));
  if (info.byte_size == 0)
    return invalidArgument() << what << ": byte_size must be positive";
  std::optional<uint64_t> end = checkedEnd(info.offset, info.byte_size);
  if (!end || *end > static_cast<uint64_t>(std::numeric_limits<off_t>::max()))
    return invalidArgument() << what << ": offset " << info.offset << " + byte_size "
                             << info.byte_size << " overflows";
  const std::pair<std::string, std::string> slot{owner, info.name};
  {
    std::lock_guard lock(mu_);
    if (regions_.count(slot))
      return Status(StatusCode::kAlreadyExists, what + " is already registered");
    if (regions_.size() >= options_.max_regions)
      return resourceExhausted() << what << ": " << options_.max_regions
                                 << " regions are registered, the most allowed";
  }
  // Whatever keeps the object from being used (outside the prefix, missing, not an object,
  // another user's, too small) gets this one answer: a client learns nothing about objects
  // it may not use. The cause goes to `*cause` for the server log.
  const Status refused = invalidArgument()
                         << what << ": cannot use key " << jsonQuoted(info.key)
                         << " (it must name a POSIX shared memory object under "
                         << jsonQuoted(options_.key_prefix)
                         << " owned by an allowed user that holds offset + byte_size)";
  if (!info.key.starts_with(options_.key_prefix)) {
    *cause = "key outside the prefix";
    return refused;
  }
  // shm_open resolves the name inside the shared-memory file system only (glibc adds
  // O_NOFOLLOW and O_CLOEXEC).
  int fd = ::shm_open(info.key.c_str(), O_RDWR, 0);
  if (fd < 0) {
    *cause = "cannot open: " + errnoText(errno);
    return refused;
  }
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const std::vector<uint32_t> &uids = options_.allowed_uids;
  const bool allowed_owner =
      regular && (uids.empty() ? st.st_uid == ::geteuid()
                               : std::find(uids.begin(), uids.end(), st.st_uid) != uids.end());
  if (!regular || !allowed_owner || static_cast<uint64_t>(st.st_size) < *end) {
    *cause = !regular         ? "not a regular object"
             : !allowed_owner ? "owned by uid " + std::to_string(st.st_uid)
                              : "object of " + std::to_string(st.st_size) +
                                    " bytes, the window needs " + std::to_string(*end);
    ::close(fd);
    return refused;
  }
  std::shared_ptr<const SharedMemoryRegion> region(new SharedMemoryRegion(info, fd));
  std::lock_guard lock(mu_);
  if (regions_.count(slot)) // registered meanwhile by another call
    return Status(StatusCode::kAlreadyExists, what + " is already registered");
  if (regions_.size() >= options_.max_regions)
    return resourceExhausted() << what << ": " << options_.max_regions
                               << " regions are registered, the most allowed";
  regions_.emplace(slot, std::move(region));
  return Status::ok();
}

void SharedMemoryRegistry::unregisterRegion(const std::string &owner, const std::string &name) {
  // Regions are destroyed outside the lock (closing a descriptor may take a while).
  std::vector<std::shared_ptr<const SharedMemoryRegion>> gone;
  std::lock_guard lock(mu_);
  for (auto it = regions_.lower_bound({owner, name});
       it != regions_.end() && it->first.first == owner;) {
    if (!name.empty() && it->first.second != name)
      break;
    gone.push_back(std::move(it->second));
    it = regions_.erase(it);
  }
}

Result<std::vector<SharedMemoryRegionInfo>>
SharedMemoryRegistry::status(const std::string &owner, const std::string &name) const {
  std::lock_guard lock(mu_);
  std::vector<SharedMemoryRegionInfo> out;
  if (name.empty()) {
    for (auto it = regions_.lower_bound({owner, ""});
         it != regions_.end() && it->first.first == owner; ++it)
      out.push_back(it->second->info());
    return out;
  }
  auto it = regions_.find({owner, name});
  if (it == regions_.end())
    return notFound() << "shared memory region " << jsonQuoted(name) << " is not registered";
  out.push_back(it->second->info());
  return out;
}

Result<std::shared_ptr<const SharedMemoryRegion>>
SharedMemoryRegistry::find(const std::string &owner, const std::string &name) const {
  std::lock_guard lock(mu_);
  auto it = regions_.find({owner, name});
  if (it == regions_.end())
    return failedPrecondition() << "shared memory region " << jsonQuoted(name)
                                << " is not registered";
  return it->second;
}

size_t SharedMemoryRegistry::regionCount() const {
  std::lock_guard lock(mu_);
  return regions_.size();
}

uint64_t SharedMemoryRegistry::registeredBytes() const {
  std::lock_guard lock(mu_);
  uint64_t total = 0;
  for (const auto &[name, region] : regions_)
    total += region->info().byte_size;
  return total;
}

} // namespace rs::protocol
