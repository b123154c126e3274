//===- client/load_client_shm.cc - A loadgen client's shared memory -------===//
//
// The system shared memory object of one client thread: its input and output windows
// (each tensor 64-byte aligned), their registration with the server over the client's
// protocol, writing a payload's inputs, reading the outputs, and the teardown.
//
//===----------------------------------------------------------------------===//
#include "client/load_generator_impl.h"

#include "protocol/status_mapping.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace rs::client::loadgen {
namespace {

constexpr uint64_t kAlign = 64;

uint64_t alignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

} // namespace

Status ClientThread::setupShm() {
  const Payload &p0 = run_.payloads[0];
  uint64_t off = 0;
  for (const protocol::NamedTensor &in : p0.inputs) {
    shm_.input_offsets.push_back(off);
    off = alignUp(off + static_cast<uint64_t>(in.tensor.byteSize()));
  }
  shm_.in_size = std::max<uint64_t>(off, kAlign);
  off = 0;
  for (int64_t bytes : p0.output_bytes) {
    shm_.output_offsets.push_back(off);
    off = alignUp(off + static_cast<uint64_t>(bytes));
  }
  shm_.out_size = std::max<uint64_t>(off, kAlign);
  const std::string tag = std::to_string(::getpid()) + "_" + std::to_string(index_);
  shm_.key = "/rs_loadgen_" + tag;
  shm_.in_region = "loadgen_" + tag + "_in";
  shm_.out_region = "loadgen_" + tag + "_out";
  shm_.fd = ::shm_open(shm_.key.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
  if (shm_.fd < 0)
    return internalError() << "loadgen: cannot create shared memory " << shm_.key << ": "
                           << std::strerror(errno);
  if (::ftruncate(shm_.fd, static_cast<off_t>(shm_.in_size + shm_.out_size)) != 0)
    return internalError() << "loadgen: cannot size shared memory " << shm_.key;
  RS_RETURN_IF_ERROR(registerRegion(shm_.in_region, 0, shm_.in_size));
  RS_RETURN_IF_ERROR(registerRegion(shm_.out_region, shm_.in_size, shm_.out_size));
  registered_ = true;
  return Status::ok();
}

Status ClientThread::registerRegion(const std::string &name, uint64_t offset, uint64_t size) {
  if (run_.use_grpc) {
    grpc::ClientContext ctx;
    inference::SystemSharedMemoryRegisterRequest req;
    req.set_name(name);
    req.set_key(shm_.key);
    req.set_offset(offset);
    req.set_byte_size(size);
    inference::SystemSharedMemoryRegisterResponse resp;
    grpc::Status s = stub_->SystemSharedMemoryRegister(&ctx, req, &resp);
    return s.ok() ? Status::ok() : protocol::fromGrpcStatus(s).withPrefix("register " + name);
  }
  nlohmann::json body = {{"key", shm_.key}, {"offset", offset}, {"byte_size", size}};
  auto r = http_->Post("/v2/systemsharedmemory/region/" + name + "/register", body.dump(),
                       "application/json");
  if (!r)
    return unavailable() << "register " << name << ": " << httplib::to_string(r.error());
  if (r->status != 200)
    return protocol::fromHttpError(r->status, r->body).withPrefix("register " + name);
  return Status::ok();
}

void ClientThread::teardownShm() {
  if (registered_) {
    for (const std::string &name : {shm_.in_region, shm_.out_region}) {
      if (run_.use_grpc) {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
        inference::SystemSharedMemoryUnregisterRequest req;
        req.set_name(name);
        inference::SystemSharedMemoryUnregisterResponse resp;
        (void)stub_->SystemSharedMemoryUnregister(&ctx, req, &resp);
      } else if (http_) {
        (void)http_->Post("/v2/systemsharedmemory/region/" + name + "/unregister", "",
                          "application/json");
      }
    }
  }
  if (shm_.fd >= 0) {
    ::close(shm_.fd);
    ::shm_unlink(shm_.key.c_str());
    shm_.fd = -1;
  }
}

void ClientThread::writeShmInputs(const Payload &p) {
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    auto bytes = p.inputs[i].tensor.bytes();
    if (::pwrite(shm_.fd, bytes.data(), bytes.size(), static_cast<off_t>(shm_.input_offsets[i])) !=
        static_cast<ssize_t>(bytes.size()))
      std::abort(); // our own object, sized above
  }
}

std::vector<std::string> ClientThread::readShmOutputs(const Payload &p) {
  std::vector<std::string> out;
  for (size_t o = 0; o < p.output_bytes.size(); ++o) {
    std::string bytes(static_cast<size_t>(p.output_bytes[o]), '\0');
    if (::pread(shm_.fd, bytes.data(), bytes.size(),
                static_cast<off_t>(shm_.in_size + shm_.output_offsets[o])) !=
        static_cast<ssize_t>(bytes.size()))
      std::abort();
    out.push_back(std::move(bytes));
  }
  return out;
}

} // namespace rs::client::loadgen
