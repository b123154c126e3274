//===- node/output_pump.cc - Child output, one prefixed line at a time -------===//
#include "node/output_pump.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace rs::node {

OutputPump::OutputPump() {
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0)
    wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { loop(); });
}

OutputPump::~OutputPump() { stop(); }

void OutputPump::add(int fd, std::string name, int out_fd) {
  {
    std::lock_guard lock(mu_);
    added_.push_back(Source{fd, "[" + name + "] ", out_fd, ""});
  }
  if (wake_[1] >= 0) {
    const char c = 'a';
    [[maybe_unused]] ssize_t n = write(wake_[1], &c, 1);
  }
}

void OutputPump::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_)
      return;
    stopping_ = true;
  }
  if (wake_[1] >= 0) {
    const char c = 's';
    [[maybe_unused]] ssize_t n = write(wake_[1], &c, 1);
  }
  if (thread_.joinable())
    thread_.join();
  for (int &fd : wake_)
    if (fd >= 0) {
      close(fd);
      fd = -1;
    }
}

void OutputPump::emit(const Source &s, std::string_view line) {
  std::string out = s.prefix;
  out.append(line);
  out.push_back('\n');
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = write(s.out_fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    done += static_cast<size_t>(n);
  }
}

void OutputPump::loop() {
  std::vector<Source> sources;
  char buf[65536];
  // Reads what `s` has; false at end of file (the partial line is written then).
  auto drain = [&](Source &s) {
    while (true) {
      ssize_t n = read(s.fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return true;
      if (n <= 0) {
        if (!s.partial.empty())
          emit(s, s.partial);
        s.partial.clear();
        return false;
      }
      s.partial.append(buf, static_cast<size_t>(n));
      size_t start = 0, nl;
      while ((nl = s.partial.find('\n', start)) != std::string::npos) {
        emit(s, std::string_view(s.partial).substr(start, nl - start));
        start = nl + 1;
      }
      s.partial.erase(0, start);
    }
  };
  while (true) {
    bool stopping;
    {
      std::lock_guard lock(mu_);
      for (Source &s : added_) {
        fcntl(s.fd, F_SETFL, fcntl(s.fd, F_GETFL) | O_NONBLOCK);
        sources.push_back(std::move(s));
      }
      added_.clear();
      stopping = stopping_;
    }
    if (stopping) {
      for (Source &s : sources) {
        drain(s);
        if (!s.partial.empty())
          emit(s, s.partial);
        close(s.fd);
      }
      return;
    }
    std::vector<pollfd> fds;
    fds.push_back({wake_[0], POLLIN, 0});
    for (const Source &s : sources)
      fds.push_back({s.fd, POLLIN, 0});
    int r = poll(fds.data(), fds.size(), 1000);
    if (r < 0 && errno != EINTR)
      return;
    if (fds[0].revents & POLLIN) {
      char tmp[64];
      while (read(wake_[0], tmp, sizeof(tmp)) > 0) {
      }
    }
    for (size_t i = sources.size(); i-- > 0;) {
      if (!(fds[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      if (!drain(sources[i])) {
        close(sources[i].fd);
        sources.erase(sources.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
  }
}

} // namespace rs::node
