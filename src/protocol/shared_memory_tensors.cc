//===- protocol/shared_memory_tensors.cc - Tensors in shared memory regions --===//
//
// The tensors of protocol/shared_memory.h: a request's shared-memory parameters checked
// the same way for both protocols, inputs read from their regions within the window and
// the per-request limit, outputs bound to their regions and written after the inference.
//
//===----------------------------------------------------------------------===//
#include "protocol/shared_memory.h"

#include "protocol/shared_memory_impl.h"

namespace rs::protocol {

using shm_detail::jsonQuoted;

namespace {

/// The region `ref` names for tensor `what` ("input 'x'"), with `what` in front of the
/// registry's FailedPrecondition when it is not registered. The code is the one
/// reference-system.md section 5.2 gives, on which the reference client re-registers and
/// retries; Triton answers NOT_FOUND here, which the gateway would take for a model gone
/// from the worker (it fails over and probes again) and the reference client as final.
Result<std::shared_ptr<const SharedMemoryRegion>> findRegion(const SharedMemoryRegistry &registry,
                                                             const std::string &owner,
                                                             std::string_view what,
                                                             const SharedMemoryRef &ref) {
  Result<std::shared_ptr<const SharedMemoryRegion>> region = registry.find(owner, ref.region);
  if (!region.isOk())
    return region.status().withPrefix(what);
  return region;
}

} // namespace

// ---- Tensors in regions ---------------------------------------------------------

Result<Tensor> readSharedMemoryInput(const SharedMemoryRegistry &registry, const std::string &owner,
                                     std::string_view what, const WireTensorLayout &layout,
                                     const SharedMemoryRef &ref) {
  RS_ASSIGN_OR_RETURN(std::shared_ptr<const SharedMemoryRegion> region,
                      findRegion(registry, owner, what, ref));
  if (ref.byte_size != static_cast<uint64_t>(layout.byte_size))
    return invalidArgument() << what << ": shared_memory_byte_size is " << ref.byte_size
                             << " bytes but " << describeLayout(layout) << " needs "
                             << layout.byte_size << " bytes";
  Status window = region->checkWindow(ref.offset, ref.byte_size);
  if (!window.isOk())
    return window.withPrefix(what);
  // The size is now bounded by the registered window, which the object held at
  // registration: allocating it is safe.
  Tensor t = Tensor::zeros(layout.dtype, layout.shape);
  Status s = region->read(ref.offset, {t.mutableData(), static_cast<size_t>(layout.byte_size)});
  if (!s.isOk())
    return s.withPrefix(what);
  return t;
}

Result<BytesTensor> readSharedMemoryBytes(const SharedMemoryRegistry &registry,
                                          const std::string &owner, std::string_view what,
                                          const WireTensorLayout &layout,
                                          const SharedMemoryRef &ref) {
  RS_ASSIGN_OR_RETURN(std::shared_ptr<const SharedMemoryRegion> region,
                      findRegion(registry, owner, what, ref));
  Status window = region->checkWindow(ref.offset, ref.byte_size);
  if (!window.isOk())
    return window.withPrefix(what);
  // Bounded by the registered window, as above.
  std::string serialized(static_cast<size_t>(ref.byte_size), '\0');
  Status s =
      region->read(ref.offset, {reinterpret_cast<uint8_t *>(serialized.data()), serialized.size()});
  if (!s.isOk())
    return s.withPrefix(what);
  return BytesTensor::parseSerialized(what, layout, serialized);
}

Result<NamedTensor> readSharedMemoryTensor(const DecodeOptions &options, const std::string &name,
                                           const WireTensorLayout &layout,
                                           const SharedMemoryRef &ref, uint64_t &used_bytes) {
  const std::string what = inputWhat(name);
  const uint64_t size = layout.bytes ? ref.byte_size : static_cast<uint64_t>(layout.byte_size);
  const int64_t limit = options.max_shared_memory_input_bytes;
  if (limit > 0 && size > static_cast<uint64_t>(limit) - used_bytes)
    return invalidArgument() << what << ": inputs in shared memory exceed the limit of " << limit
                             << " bytes per request";
  used_bytes += size;
  if (layout.bytes) {
    RS_ASSIGN_OR_RETURN(BytesTensor t,
                        readSharedMemoryBytes(*options.shared_memory, options.shared_memory_owner,
                                              what, layout, ref));
    return NamedTensor::ofBytes(name, std::move(t));
  }
  RS_ASSIGN_OR_RETURN(Tensor t,
                      readSharedMemoryInput(*options.shared_memory, options.shared_memory_owner,
                                            what, layout, ref));
  return NamedTensor{name, std::move(t)};
}

Result<SharedMemoryOutput> bindSharedMemoryOutput(const SharedMemoryRegistry &registry,
                                                  const std::string &owner, const std::string &name,
                                                  const SharedMemoryRef &ref) {
  RS_ASSIGN_OR_RETURN(std::shared_ptr<const SharedMemoryRegion> region,
                      findRegion(registry, owner, outputWhat(name), ref));
  Status window = region->checkWindow(ref.offset, ref.byte_size);
  if (!window.isOk())
    return window.withPrefix(outputWhat(name));
  return SharedMemoryOutput{name, std::move(region), ref};
}

Status writeSharedMemoryOutputs(std::span<const SharedMemoryOutput> outputs,
                                const InferResponse &response) {
  for (const SharedMemoryOutput &o : outputs) {
    const NamedTensor *tensor = nullptr;
    for (const NamedTensor &t : response.outputs)
      if (t.name == o.name)
        tensor = &t;
    const std::string what = outputWhat(o.name);
    if (!tensor)
      return invalidArgument() << what << ": bound to shared memory region "
                               << jsonQuoted(o.ref.region) << " but not in the response";
    const uint64_t size = tensor->wireByteSize();
    if (size > o.ref.byte_size)
      return invalidArgument() << what << ": shared_memory_byte_size is " << o.ref.byte_size
                               << " bytes but the output has " << size << " bytes";
    std::string serialized;
    if (tensor->isBytes())
      serialized = tensor->bytes->serialized();
    Status s = o.region->write(
        o.ref.offset,
        tensor->isBytes()
            ? std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(serialized.data()), size)
            : tensor->tensor.bytes());
    if (!s.isOk())
      return s.withPrefix(what);
  }
  return Status::ok();
}

Result<std::optional<SharedMemoryRef>> checkShmParameters(const std::string &what,
                                                          const ShmParameterView &view,
                                                          const SharedMemoryRegistry *registry) {
  if (!view.has_region) {
    if (view.byte_size || view.offset)
      return invalidArgument() << what << ": shared memory size or offset given without '"
                               << kShmRegionParameter << "'";
    return std::optional<SharedMemoryRef>();
  }
  if (!registry)
    return unimplemented() << what << ": shared memory tensors are not supported";
  if (!view.region || view.region->empty())
    return invalidArgument() << what << ": parameter '" << kShmRegionParameter
                             << "' must be a non-empty string";
  SharedMemoryRef ref;
  ref.region = *view.region;
  if (!view.byte_size)
    return invalidArgument() << what << ": parameter '" << kShmByteSizeParameter
                             << "' is required with '" << kShmRegionParameter << "'";
  RS_ASSIGN_OR_RETURN(ref.byte_size, view.byte_size());
  if (view.offset) {
    RS_ASSIGN_OR_RETURN(ref.offset, view.offset());
  }
  return std::optional<SharedMemoryRef>(std::move(ref));
}

} // namespace rs::protocol
