//===- protocol/shared_memory.h - Triton system shared memory regions -------===//
//
// The system shared-memory extension (Triton docs/protocol/extension_shared_memory.md,
// reference-system.md §5.1, §5.4): a client creates a POSIX shared memory object
// (shm_open), registers a window of it under a region name, and then names the region in
// a tensor's parameters instead of sending the bytes:
//   shared_memory_region     string, a registered region name
//   shared_memory_byte_size  integer, the bytes of the tensor in the region
//   shared_memory_offset     integer, optional (default 0), from the start of the region
// Inputs are copied out of the region when the request is decoded (one copy in); outputs
// are copied into the client's region when the inference finishes (one copy out) and the
// reply then carries the output's name, datatype, shape and the region parameters, not
// its bytes. A BYTES tensor's bytes in a region are its serialized form
// (protocol/bytes_tensor.h), and shared_memory_byte_size is their count.
//
// Safety (DESIGN.md "Nothing a client sends can read or write memory outside its own
// request"):
//  - Tenancy: a key must start with the configured prefix (default "/rs_") and the object
//    must belong to an allowed uid (default: the server's own), so a client cannot make
//    the server open another user's object with the server's rights. Every reason an
//    object cannot be used gets one error (no existence or size oracle). Registrations
//    belong to the peer that made them: status, use and unregister see only its own.
//  - Only POSIX shared memory objects can be registered: the key is passed to shm_open(),
//    which resolves it inside the shared-memory file system (/dev/shm), never a path;
//    a key must be '/' followed by 1 to 254 characters none of which is '/' or NUL, and
//    not "/." or "/..". The object must be a regular file that holds the registered
//    window at registration.
//  - Every use checks offset and byte size against the registered window, without
//    overflow, and the byte size against the tensor's.
//  - The region is read and written with pread()/pwrite() on the object's descriptor,
//    never through a mapping: a client that shrinks its object after registering cannot
//    make the server fault (a mapping would raise SIGBUS); a read past the object's
//    current end fails the request instead.
//  - Unregistering (one region or all) only forgets the name; a request that already
//    resolved the region holds a shared_ptr to it, so the descriptor stays open until that
//    request is answered. The client's object is never unlinked.
//  - At most `max_regions` regions are registered at once (each holds a descriptor).
//
// Errors: InvalidArgument (bad name, key, offset or size; object cannot be opened or is too
// small; a tensor's window outside its region; byte size not the tensor's), AlreadyExists
// (a region of that name is registered), NotFound (status of an unknown region),
// FailedPrecondition (a request names a region that is not registered, e.g. after a server
// restart: the client re-registers and retries, reference-system.md §5.2),
// ResourceExhausted (max_regions reached). Messages name the region and the tensor.
//
// Thread safety: every SharedMemoryRegistry and SharedMemoryRegion method may be called
// concurrently.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"
#include "protocol/wire_tensor.h"
#include "support/status.h"
#include "support/tensor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rs::protocol {

/// The tensor parameter names of the extension.
inline constexpr const char *kShmRegionParameter = "shared_memory_region";
inline constexpr const char *kShmByteSizeParameter = "shared_memory_byte_size";
inline constexpr const char *kShmOffsetParameter = "shared_memory_offset";

/// A registration: `byte_size` bytes of POSIX shared memory object `key` from `offset`.
struct SharedMemoryRegionInfo {
  std::string name;
  std::string key;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

/// One registered region. The object's descriptor is open while the region lives.
class SharedMemoryRegion {
public:
  ~SharedMemoryRegion();
  SharedMemoryRegion(const SharedMemoryRegion &) = delete;
  SharedMemoryRegion &operator=(const SharedMemoryRegion &) = delete;

  const SharedMemoryRegionInfo &info() const { return info_; }
  /// Copies `out.size()` bytes from `offset` (relative to the region) into `out`.
  /// InvalidArgument when the window leaves the region or the object is now shorter.
  Status read(uint64_t offset, std::span<uint8_t> out) const;
  /// Copies `bytes` into the region at `offset` (relative to the region).
  /// InvalidArgument when the window leaves the region; Internal on a write error.
  Status write(uint64_t offset, std::span<const uint8_t> bytes) const;
  /// OK when `size` bytes at `offset` (relative to the region) lie inside it, computed
  /// without overflow; InvalidArgument naming the region otherwise.
  Status checkWindow(uint64_t offset, uint64_t size) const;

private:
  friend class SharedMemoryRegistry;
  SharedMemoryRegion(SharedMemoryRegionInfo info, int fd) : info_(std::move(info)), fd_(fd) {}

  SharedMemoryRegionInfo info_;
  int fd_ = -1;
};

struct SharedMemoryRegistryOptions {
  /// Regions registered at once before ResourceExhausted (each holds a file descriptor).
  size_t max_regions = 256;
  /// Keys must start with this (endpoints.shared_memory_prefix; the '/' included).
  std::string key_prefix = "/rs_";
  /// The uids an object may belong to (endpoints.shared_memory_allowed_uids); empty: the
  /// server's effective uid only.
  std::vector<uint32_t> allowed_uids;
};

/// The regions registered with one server (both protocols share it). Every region
/// belongs to an owner, the identity of the peer that registered it (frontend/peer.h):
/// a peer sees, uses and unregisters only its own regions, and two owners may use the
/// same region name.
class SharedMemoryRegistry {
public:
  explicit SharedMemoryRegistry(SharedMemoryRegistryOptions options = {});

  /// Opens `info.key` read-write and registers the window under (`owner`, `info.name`)
  /// (rules above). Every reason the object cannot be used (a key outside key_prefix, no
  /// such object, not a regular object, another user's, smaller than the window) gives one
  /// InvalidArgument, so the answer reveals nothing about objects the client may not use;
  /// `cause` (when set) gets the reason for the server log.
  Status registerRegion(const std::string &owner, const SharedMemoryRegionInfo &info,
                        std::string *cause = nullptr);
  /// Forgets `owner`'s region `name`, or every region of `owner` when `name` is empty.
  /// Unknown names are not an error (Triton's behaviour). In-flight requests keep what
  /// they resolved.
  void unregisterRegion(const std::string &owner, const std::string &name);
  /// `owner`'s regions sorted by name (`name` empty), or just `name` (NotFound if unknown).
  Result<std::vector<SharedMemoryRegionInfo>> status(const std::string &owner,
                                                     const std::string &name) const;
  /// `owner`'s region `name`; FailedPrecondition when it is not registered.
  Result<std::shared_ptr<const SharedMemoryRegion>> find(const std::string &owner,
                                                         const std::string &name) const;

  /// Regions of every owner.
  size_t regionCount() const;
  /// Sum of the registered windows' byte sizes (every owner).
  uint64_t registeredBytes() const;

private:
  SharedMemoryRegistryOptions options_;
  mutable std::mutex mu_;
  /// By (owner, name).
  std::map<std::pair<std::string, std::string>, std::shared_ptr<const SharedMemoryRegion>>
      regions_; // GUARDED_BY(mu_)
};

/// A tensor's shared-memory parameters as the client sent them.
struct SharedMemoryRef {
  std::string region;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
};

/// One tensor's shared-memory parameters as a codec found them in its wire form (protobuf
/// map or JSON object), before the common checks of checkShmParameters.
struct ShmParameterView {
  bool has_region = false;
  /// The region parameter's value when it is a string; nullopt when absent or not a string.
  std::optional<std::string> region;
  /// The byte size and the offset as non-negative integers, with the codec's error text
  /// for a value of the wrong type; empty functions when the parameter is absent.
  std::function<Result<uint64_t>()> byte_size;
  std::function<Result<uint64_t>()> offset;
};

/// The shared-memory reference of tensor `what` (e.g. "input 'x'"), or nullopt when it
/// names no region. Errors: InvalidArgument when a size or offset comes without a region,
/// the region is not a non-empty string, the byte size is missing, or a value converter
/// fails; Unimplemented when `registry` is null (the caller offers no shared memory).
/// The same checks in the same order for both protocols.
Result<std::optional<SharedMemoryRef>> checkShmParameters(const std::string &what,
                                                          const ShmParameterView &view,
                                                          const SharedMemoryRegistry *registry);

/// An output to write into a client region once the inference finishes. Holding `region`
/// keeps it usable even if it is unregistered meanwhile.
struct SharedMemoryOutput {
  std::string name; // the output tensor's name
  std::shared_ptr<const SharedMemoryRegion> region;
  SharedMemoryRef ref;
};

/// What decoding a request needs besides its bytes.
struct DecodeOptions {
  /// Anchors the request's `reactant_timeout_ns` parameter.
  Clock::time_point now;
  /// The registered regions; nullptr when the server does not offer the extension
  /// (shared-memory parameters are then Unimplemented).
  const SharedMemoryRegistry *shared_memory = nullptr;
  /// Most bytes a request's inputs may take from shared memory in total (inline bytes are
  /// bounded by the message size limits); 0 = no limit. The worker sets the gRPC receive
  /// limit, so a region cannot carry a request the wire would refuse.
  int64_t max_shared_memory_input_bytes = 0;
  /// Keeps the message being decoded alive (a shared pointer to it, or to what holds it).
  /// When set, an input sent in raw_input_contents becomes a read-only view of the
  /// message's bytes that holds this owner, instead of a copy: no allocation or copy per
  /// input, but the data is only as aligned as the message's strings (16 bytes on the heap;
  /// 8 for inputs of 15 bytes or fewer, which live inside the string object). When
  /// null, inputs are copied into owned, 64-byte aligned buffers.
  std::shared_ptr<const void> message_owner;
  /// The model's datatype (wire name, "FP32") of input `name`, "" when the model has no
  /// such input. Asked only on the error path, for a datatype the wire cannot carry
  /// (BYTES, an unknown name, FP16/BF16 as JSON data), whose error then names the expected
  /// datatype beside the received one. Unset: only the received one is named.
  std::function<std::string(const std::string &name)> expected_datatype;
  /// The peer's identity (SharedMemoryRegistry owner): its regions are the ones requests
  /// may name.
  std::string shared_memory_owner;
};

/// `status` (a datatype error of input `name`) with " (expected <X>, received <Y>)"
/// appended, <X> from options.expected_datatype (left out when unknown) and <Y> =
/// `received`.
Status withDatatypes(const Status &status, const DecodeOptions &options, const std::string &name,
                     std::string_view received);

/// Reads input `what` ("input 'x'") of `layout` from the region `ref` names. The byte size
/// must equal the layout's and the window must lie inside the region; checked before the
/// tensor is allocated.
Result<Tensor> readSharedMemoryInput(const SharedMemoryRegistry &registry, const std::string &owner,
                                     std::string_view what, const WireTensorLayout &layout,
                                     const SharedMemoryRef &ref);

/// Reads BYTES input `what` of `layout` (a BYTES layout) from the region `ref` names: the
/// `ref.byte_size` bytes there hold the serialized elements (protocol/bytes_tensor.h). The
/// window must lie inside the region (checked before anything is allocated), and the
/// elements must fill it exactly and match the shape's count.
Result<BytesTensor> readSharedMemoryBytes(const SharedMemoryRegistry &registry,
                                          const std::string &owner, std::string_view what,
                                          const WireTensorLayout &layout,
                                          const SharedMemoryRef &ref);

/// Input `name` of `layout` from the region `ref` names, numeric or BYTES, through
/// `options` (its registry must be set). `used_bytes` is what the request's earlier inputs
/// took from shared memory: InvalidArgument when this input would take the total past
/// options.max_shared_memory_input_bytes; else it grows by this input's bytes.
Result<NamedTensor> readSharedMemoryTensor(const DecodeOptions &options, const std::string &name,
                                           const WireTensorLayout &layout,
                                           const SharedMemoryRef &ref, uint64_t &used_bytes);

/// Resolves requested output `name`'s region and checks the window (the output's size is
/// checked when it is written).
Result<SharedMemoryOutput> bindSharedMemoryOutput(const SharedMemoryRegistry &registry,
                                                  const std::string &owner, const std::string &name,
                                                  const SharedMemoryRef &ref);

/// Writes each bound output of `response` into its region (a BYTES output in its serialized
/// form). InvalidArgument when an output is larger than its window (nothing of it is
/// written) or is missing from the response.
Status writeSharedMemoryOutputs(std::span<const SharedMemoryOutput> outputs,
                                const InferResponse &response);

/// HTTP: parses a register body `{"key": "/name", "offset": 0, "byte_size": N}` for
/// region `name` (offset optional). InvalidArgument for bad JSON or field types.
Result<SharedMemoryRegionInfo> parseSharedMemoryRegisterJson(const std::string &name,
                                                             std::string_view body);
/// HTTP: the status reply, `[{"name","key","offset","byte_size"}, ...]`.
std::string sharedMemoryStatusJson(const std::vector<SharedMemoryRegionInfo> &regions);

// Triton's CUDA shared-memory extension, offered beside system shared memory with no region
// ever registered (clients of system shared memory call it too): the status of every region
// is empty, unregistering has nothing to do, and these are its two errors, the same on both
// protocols.

/// The status of CUDA region `name`: NotFound, since none is registered.
Status cudaSharedMemoryNotRegistered(const std::string &name);
/// Registering CUDA region `name`: InvalidArgument, since no CUDA IPC handle is taken.
Status cudaSharedMemoryRefused(const std::string &name);

} // namespace rs::protocol
