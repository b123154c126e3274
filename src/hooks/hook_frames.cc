//===- hooks/hook_frames.cc - Frames and shared tensors of the hook channel -===//
#include "hooks/hook_frames.h"

#include "protocol/wire_tensor.h"

#include <poll.h>
#include <sys/mman.h> // memfd_create
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>

namespace rs::hooks {

UniqueFd &UniqueFd::operator=(UniqueFd &&other) noexcept {
  if (this != &other)
    reset(other.release());
  return *this;
}

int UniqueFd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::reset(int fd) {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = fd;
}

namespace {

/// Waits until `sock` is readable or `deadline` passes.
Status waitReadable(int sock, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      return deadlineExceeded() << "no answer before the deadline";
    pollfd p{sock, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1 << 30)));
    if (n > 0)
      return Status::ok();
    if (n < 0 && errno != EINTR)
      return internalError() << "poll on the hook socket: " << std::strerror(errno);
  }
}

/// Reads exactly `n` bytes into `out`, the first read also taking an attached descriptor.
/// With `poll_first` it waits for data before the first read; otherwise it reads what is
/// there and waits only when nothing is (the rest of a frame usually is).
Status readExact(int sock, char *out, size_t n, Clock::time_point deadline, UniqueFd *fd,
                 bool poll_first) {
  size_t got = 0;
  bool wait = poll_first;
  while (got < n) {
    if (wait)
      RS_RETURN_IF_ERROR(waitReadable(sock, deadline));
    iovec iov{out + got, n - got};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (fd) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
    }
    const ssize_t r = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      wait = true;
      continue;
    }
    if (r < 0)
      return unavailable() << "the hook process's socket failed: " << std::strerror(errno);
    if (r == 0)
      return unavailable() << "the hook process closed its socket";
    if (fd)
      for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
          // One descriptor is taken; any others the peer attached are closed.
          const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
          for (size_t k = 0; k < count; ++k) {
            int received = -1;
            std::memcpy(&received, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
            if (!fd->valid())
              fd->reset(received);
            else
              ::close(received);
          }
        }
    fd = nullptr; // a descriptor comes with the frame's first byte only
    got += static_cast<size_t>(r);
    wait = false;
  }
  return Status::ok();
}

/// Reads `n` bytes at `offset` of `fd` into `out` (the range was checked against its size).
Status readAll(int fd, uint8_t *out, size_t n, off_t offset) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, out, n, offset);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return internalError() << "reading hook tensors from shared memory: "
                             << (r < 0 ? std::strerror(errno) : "it shrank");
    out += r;
    n -= static_cast<size_t>(r);
    offset += r;
  }
  return Status::ok();
}

Status writeAll(int fd, std::string_view bytes, off_t offset) {
  while (!bytes.empty()) {
    const ssize_t w = ::pwrite(fd, bytes.data(), bytes.size(), offset);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return internalError() << "writing hook tensors to shared memory: " << std::strerror(errno);
    bytes.remove_prefix(static_cast<size_t>(w));
    offset += w;
  }
  return Status::ok();
}

/// A JSON integer >= 0.
bool nonNegative(const nlohmann::json &v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
}

} // namespace

Status sendFrame(int sock, const nlohmann::json &body, int fd) {
  return sendFrameBytes(sock, body.dump(), fd);
}

Status sendFrameBytes(int sock, std::string_view body, int fd) {
  const uint32_t n = static_cast<uint32_t>(body.size());
  const unsigned char head[4] = {static_cast<unsigned char>(n), static_cast<unsigned char>(n >> 8),
                                 static_cast<unsigned char>(n >> 16),
                                 static_cast<unsigned char>(n >> 24)};
  const size_t total = 4 + body.size();
  size_t sent = 0;
  bool attach = fd >= 0;
  while (sent < total) {
    iovec iov[2];
    int count = 0;
    if (sent < 4)
      iov[count++] = {const_cast<unsigned char *>(head) + sent, 4 - sent};
    const size_t body_sent = sent < 4 ? 0 : sent - 4;
    if (body_sent < body.size())
      iov[count++] = {const_cast<char *>(body.data()) + body_sent, body.size() - body_sent};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = count;
    if (attach) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr *c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    const ssize_t w = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return unavailable() << "the hook process's socket failed: " << std::strerror(errno);
    attach = false;
    sent += static_cast<size_t>(w);
  }
  return Status::ok();
}

Result<Frame> receiveFrame(int sock, Clock::time_point deadline) {
  Frame frame;
  unsigned char head[4];
  RS_RETURN_IF_ERROR(readExact(sock, reinterpret_cast<char *>(head), 4, deadline, &frame.fd, true));
  const uint32_t n = head[0] | (head[1] << 8) | (head[2] << 16) | (uint32_t(head[3]) << 24);
  if (n > kMaxFrameBytes)
    return internalError() << "the hook process sent a frame of " << n << " bytes (at most "
                           << kMaxFrameBytes << ")";
  std::string text(n, '\0');
  RS_RETURN_IF_ERROR(readExact(sock, text.data(), n, deadline, nullptr, false));
  if (text.empty() || text[0] != '{') {
    frame.json = false;
    frame.binary = std::move(text);
    return frame;
  }
  frame.body = nlohmann::json::parse(text, nullptr, false);
  if (frame.body.is_discarded() || !frame.body.is_object())
    return internalError() << "the hook process sent a frame that is not a JSON object";
  return frame;
}

Result<SharedTensors>
writeSharedCalls(const std::vector<const std::vector<protocol::NamedTensor> *> &calls) {
  SharedTensors out;
  out.fd.reset(::memfd_create("reactant_hook_in", MFD_CLOEXEC));
  if (!out.fd.valid())
    return internalError() << "memfd_create for hook tensors: " << std::strerror(errno);
  uint64_t total = 0;
  for (const std::vector<protocol::NamedTensor> *tensors : calls)
    for (const protocol::NamedTensor &t : *tensors)
      total += t.wireByteSize();
  if (::ftruncate(out.fd.get(), static_cast<off_t>(total)) != 0)
    return internalError() << "sizing " << total
                           << " bytes of shared memory for hook tensors: " << std::strerror(errno);
  uint64_t offset = 0;
  for (const std::vector<protocol::NamedTensor> *tensors : calls) {
    nlohmann::json descriptors = nlohmann::json::array();
    for (const protocol::NamedTensor &t : *tensors) {
      const uint64_t size = t.wireByteSize();
      if (t.isBytes()) {
        RS_RETURN_IF_ERROR(
            writeAll(out.fd.get(), t.bytes->serialized(), static_cast<off_t>(offset)));
      } else {
        const auto bytes = t.tensor.bytes();
        RS_RETURN_IF_ERROR(
            writeAll(out.fd.get(),
                     std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()),
                     static_cast<off_t>(offset)));
      }
      descriptors.push_back({{"name", t.name},
                             {"datatype", std::string(t.datatype())},
                             {"shape", t.shape()},
                             {"offset", offset},
                             {"nbytes", size}});
      offset += size;
    }
    out.descriptors.push_back(std::move(descriptors));
  }
  return out;
}

Result<SharedTensors> writeSharedTensors(const std::vector<protocol::NamedTensor> &tensors) {
  RS_ASSIGN_OR_RETURN(SharedTensors out, writeSharedCalls({&tensors}));
  nlohmann::json only = std::move(out.descriptors[0]);
  out.descriptors = std::move(only);
  return out;
}

Result<std::vector<protocol::NamedTensor>> readTensors(const std::vector<TensorRecord> &records,
                                                       const SharedSource &source,
                                                       std::string_view what) {
  std::vector<protocol::NamedTensor> out;
  out.reserve(records.size());
  std::set<std::string_view> names;
  for (const TensorRecord &r : records) {
    if (!names.insert(r.name).second)
      return internalError() << what << ": tensor '" << r.name << "' given twice";
    const std::string tensor_what = std::string(what) + ": tensor '" + r.name + "'";
    Result<protocol::WireTensorLayout> layout =
        protocol::checkWireTensor(tensor_what, r.datatype, r.shape);
    if (!layout.isOk())
      return Status(StatusCode::kInternal, layout.status().message());
    if (r.offset > source.size || r.nbytes > source.size - r.offset)
      return internalError() << tensor_what << ": bytes [" << r.offset << ", "
                             << r.offset + r.nbytes << ") lie outside its shared memory of "
                             << source.size << " bytes";
    if (!layout->bytes && static_cast<int64_t>(r.nbytes) != layout->byte_size)
      return internalError() << tensor_what << ": " << r.nbytes << " bytes for "
                             << protocol::describeLayout(*layout) << " (" << layout->byte_size
                             << " expected)";
    // Copied out before anything reads it: the peer may change the source meanwhile.
    auto copy = [&](uint8_t *to) {
      if (source.base) {
        std::memcpy(to, source.base + r.offset, static_cast<size_t>(r.nbytes));
        return Status::ok();
      }
      return readAll(source.fd, to, static_cast<size_t>(r.nbytes), static_cast<off_t>(r.offset));
    };
    if (layout->bytes) {
      std::string serialized(static_cast<size_t>(r.nbytes), '\0');
      RS_RETURN_IF_ERROR(copy(reinterpret_cast<uint8_t *>(serialized.data())));
      Result<protocol::BytesTensor> bytes =
          protocol::BytesTensor::parseSerialized(tensor_what, *layout, serialized);
      if (!bytes.isOk())
        return Status(StatusCode::kInternal, bytes.status().message());
      out.push_back(protocol::NamedTensor::ofBytes(r.name, std::move(*bytes)));
      continue;
    }
    Tensor tensor = Tensor::zeros(layout->dtype, layout->shape);
    RS_RETURN_IF_ERROR(copy(tensor.mutableData()));
    out.push_back({r.name, std::move(tensor)});
  }
  return out;
}

Result<std::vector<protocol::NamedTensor>>
readSharedTensors(int fd, const nlohmann::json &descriptors, std::string_view what) {
  if (!descriptors.is_array())
    return internalError() << what << ": the tensor list is not a JSON array";
  SharedSource source{nullptr, 0, fd};
  if (!descriptors.empty()) {
    if (fd < 0)
      return internalError() << what << ": tensors described but no shared memory attached";
    struct stat st {};
    if (::fstat(fd, &st) != 0)
      return internalError() << what << ": fstat of its shared memory: " << std::strerror(errno);
    source.size = static_cast<uint64_t>(st.st_size);
  }
  std::vector<TensorRecord> records;
  for (size_t i = 0; i < descriptors.size(); ++i) {
    const nlohmann::json &d = descriptors[i];
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string() ||
        !d.contains("datatype") || !d["datatype"].is_string() || !d.contains("shape") ||
        !d["shape"].is_array() || !d.contains("offset") || !nonNegative(d["offset"]) ||
        !d.contains("nbytes") || !nonNegative(d["nbytes"]))
      return internalError() << what << ": tensor " << i << " is not described by name, "
                             << "datatype, shape, offset and nbytes";
    TensorRecord r{d["name"].get<std::string>(),
                   d["datatype"].get<std::string>(),
                   {},
                   d["offset"].get<uint64_t>(),
                   d["nbytes"].get<uint64_t>()};
    for (const nlohmann::json &dim : d["shape"]) {
      if (!dim.is_number_integer())
        return internalError() << what << ": tensor '" << r.name << "': shape is not integers";
      r.shape.push_back(dim.get<int64_t>());
    }
    records.push_back(std::move(r));
  }
  return readTensors(records, source, what);
}

} // namespace rs::hooks
