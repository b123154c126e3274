//===- test/common/ports.cc - Loopback ports that parallel tests never share ===//
#include "common/ports.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace rs::testing {
namespace {

// Below the usual ephemeral range (/proc/sys/net/ipv4/ip_local_port_range, 32768-60999).
constexpr int kFirstPort = 20000, kLastPort = 32000;

/// Whether a loopback TCP socket can bind `port` now.
bool bindable(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return false;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

/// Locks `port`'s file; the descriptor stays open (and the lock held) until exit.
bool lockPort(const std::filesystem::path &dir, int port, std::vector<int> *fds) {
  const std::string file = (dir / std::to_string(port)).string();
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    return false;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;
  }
  fds->push_back(fd);
  return true;
}

} // namespace

int reservePorts(int n) {
  static std::mutex mu;
  static int next = kFirstPort + static_cast<int>(::getpid() % (kLastPort - kFirstPort));
  std::lock_guard<std::mutex> lock(mu);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "rs_test_ports";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (int tries = 0; tries < kLastPort - kFirstPort; ++tries) {
    const int base = next;
    next = base + n > kLastPort ? kFirstPort : base + n;
    if (base + n > kLastPort)
      continue;
    std::vector<int> fds;
    bool ok = true;
    for (int i = 0; ok && i < n; ++i)
      ok = lockPort(dir, base + i, &fds) && bindable(base + i);
    if (ok)
      return base; // the descriptors stay open: the lock lasts until this process exits
    for (int fd : fds)
      ::close(fd);
  }
  return 0;
}

} // namespace rs::testing
