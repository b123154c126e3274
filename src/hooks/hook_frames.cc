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
Status readExact(int sock, char *out, size_t n, Clock::time_point deadline, UniqueFd *fd) {
  size_t got = 0;
  while (got < n) {
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
    const ssize_t r = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return unavailable() << "the hook process's socket failed: " << std::strerror(errno);
    if (r == 0)
      return unavailable() << "the hook process closed its socket";
    if (fd)
      for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
          int received = -1;
          std::memcpy(&received, CMSG_DATA(c), sizeof(int));
          fd->reset(received);
        }
    fd = nullptr; // a descriptor comes with the frame's first byte only
    got += static_cast<size_t>(r);
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
  const std::string text = body.dump();
  std::string frame(4, '\0');
  const uint32_t n = static_cast<uint32_t>(text.size());
  for (int i = 0; i < 4; ++i)
    frame[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  frame += text;
  size_t sent = 0;
  bool attach = fd >= 0;
  while (sent < frame.size()) {
    iovec iov{frame.data() + sent, frame.size() - sent};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
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
  RS_RETURN_IF_ERROR(readExact(sock, reinterpret_cast<char *>(head), 4, deadline, &frame.fd));
  const uint32_t n = head[0] | (head[1] << 8) | (head[2] << 16) | (uint32_t(head[3]) << 24);
  if (n > kMaxFrameBytes)
    return internalError() << "the hook process sent a frame of " << n << " bytes (at most "
                           << kMaxFrameBytes << ")";
  std::string text(n, '\0');
  RS_RETURN_IF_ERROR(readExact(sock, text.data(), n, deadline, nullptr));
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

Result<std::vector<protocol::NamedTensor>>
readSharedTensors(int fd, const nlohmann::json &descriptors, std::string_view what) {
  if (!descriptors.is_array())
    return internalError() << what << ": the tensor list is not a JSON array";
  uint64_t size = 0;
  if (!descriptors.empty()) {
    if (fd < 0)
      return internalError() << what << ": tensors described but no shared memory attached";
    struct stat st {};
    if (::fstat(fd, &st) != 0)
      return internalError() << what << ": fstat of its shared memory: " << std::strerror(errno);
    size = static_cast<uint64_t>(st.st_size);
  }
  std::vector<protocol::NamedTensor> out;
  std::set<std::string> names;
  for (size_t i = 0; i < descriptors.size(); ++i) {
    const nlohmann::json &d = descriptors[i];
    if (!d.is_object() || !d.contains("name") || !d["name"].is_string() ||
        !d.contains("datatype") || !d["datatype"].is_string() || !d.contains("shape") ||
        !d["shape"].is_array() || !d.contains("offset") || !nonNegative(d["offset"]) ||
        !d.contains("nbytes") || !nonNegative(d["nbytes"]))
      return internalError() << what << ": tensor " << i << " is not described by name, "
                             << "datatype, shape, offset and nbytes";
    const std::string name = d["name"].get<std::string>();
    if (!names.insert(name).second)
      return internalError() << what << ": tensor '" << name << "' given twice";
    Shape shape;
    for (const nlohmann::json &dim : d["shape"]) {
      if (!dim.is_number_integer())
        return internalError() << what << ": tensor '" << name << "': shape is not integers";
      shape.push_back(dim.get<int64_t>());
    }
    const std::string tensor_what = std::string(what) + ": tensor '" + name + "'";
    Result<protocol::WireTensorLayout> layout =
        protocol::checkWireTensor(tensor_what, d["datatype"].get<std::string>(), shape);
    if (!layout.isOk())
      return Status(StatusCode::kInternal, layout.status().message());
    const uint64_t offset = d["offset"].get<uint64_t>();
    const uint64_t nbytes = d["nbytes"].get<uint64_t>();
    if (offset > size || nbytes > size - offset)
      return internalError() << tensor_what << ": bytes [" << offset << ", " << offset + nbytes
                             << ") lie outside its shared memory of " << size << " bytes";
    if (layout->bytes) {
      std::string serialized(static_cast<size_t>(nbytes), '\0');
      RS_RETURN_IF_ERROR(readAll(fd, reinterpret_cast<uint8_t *>(serialized.data()),
                                 serialized.size(), static_cast<off_t>(offset)));
      Result<protocol::BytesTensor> bytes =
          protocol::BytesTensor::parseSerialized(tensor_what, *layout, serialized);
      if (!bytes.isOk())
        return Status(StatusCode::kInternal, bytes.status().message());
      out.push_back(protocol::NamedTensor::ofBytes(name, std::move(*bytes)));
      continue;
    }
    if (static_cast<int64_t>(nbytes) != layout->byte_size)
      return internalError() << tensor_what << ": " << nbytes << " bytes for "
                             << protocol::describeLayout(*layout) << " (" << layout->byte_size
                             << " expected)";
    Tensor tensor = Tensor::zeros(layout->dtype, layout->shape);
    RS_RETURN_IF_ERROR(
        readAll(fd, tensor.mutableData(), static_cast<size_t>(nbytes), static_cast<off_t>(offset)));
    out.push_back({name, std::move(tensor)});
  }
  return out;
}

} // namespace rs::hooks
