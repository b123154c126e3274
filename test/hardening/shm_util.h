//===- test/hardening/shm_util.h - POSIX shared memory objects for tests ----===//
//
// A client-side POSIX shared memory object (shm_open + ftruncate), unlinked when the
// ShmObject is destroyed. Names are unique per process and object.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rs::testing {

/// The shared-memory owner of a loopback IPv4 peer (frontend/peer.h): the identity the
/// tests register regions under when they call the registry themselves.
inline const std::string kPeer = "127.0.0.1";

class ShmObject {
public:
  explicit ShmObject(size_t size) {
    static std::atomic<int> counter{0};
    key_ = "/rs_hardening_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    fd_ = ::shm_open(key_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd_ >= 0 && ::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~ShmObject() {
    if (fd_ >= 0)
      ::close(fd_);
    ::shm_unlink(key_.c_str());
  }
  ShmObject(const ShmObject &) = delete;
  ShmObject &operator=(const ShmObject &) = delete;

  bool ok() const { return fd_ >= 0; }
  const std::string &key() const { return key_; }

  void write(size_t offset, const void *data, size_t n) {
    if (::pwrite(fd_, data, n, static_cast<off_t>(offset)) != static_cast<ssize_t>(n))
      std::abort();
  }
  std::vector<uint8_t> read(size_t offset, size_t n) const {
    std::vector<uint8_t> out(n);
    if (::pread(fd_, out.data(), n, static_cast<off_t>(offset)) != static_cast<ssize_t>(n))
      std::abort();
    return out;
  }
  template <typename T> void writeValues(size_t offset, const std::vector<T> &values) {
    write(offset, values.data(), values.size() * sizeof(T));
  }
  template <typename T> std::vector<T> readValues(size_t offset, size_t count) const {
    std::vector<uint8_t> bytes = read(offset, count * sizeof(T));
    std::vector<T> out(count);
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
  void truncate(size_t size) {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
      std::abort();
  }

private:
  std::string key_;
  int fd_ = -1;
};

} // namespace rs::testing
