//===- protocol/grpc_codec_impl.h - gRPC tensor contents (private) ---------===//
//
// What the server side (grpc_codec.cc) and the client side (grpc_client_codec.cc) of
// protocol/grpc_codec.h share, defined in grpc_tensor_contents.cc: a tensor decoded from
// raw or typed contents, and a tensor's shape and raw bytes encoded. Not API.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/grpc_codec.h"
#include "protocol/wire_tensor.h"

#include <cstdint>
#include <memory>
#include <string>

namespace rs::protocol::grpc_codec_detail {

/// How many values the typed contents hold, over every field.
int64_t totalValues(const inference::InferTensorContents &c);

/// Tensor `name` (`what` in messages) from `raw` (when non-null; the serialized form for
/// BYTES) or its typed contents, as decodeTensorData.
Result<NamedTensor> decodeNamedTensor(const std::string &name, const std::string &what,
                                      const WireTensorLayout &layout,
                                      const inference::InferTensorContents &contents,
                                      const std::string *raw,
                                      const std::shared_ptr<const void> &owner);

/// Appends `t`'s bytes (a BYTES tensor's serialized form) as the next raw contents entry.
void addRawContents(const NamedTensor &t, google::protobuf::RepeatedPtrField<std::string> *raw);

/// Sets `dst` to the dimensions of `shape`.
void setShape(google::protobuf::RepeatedField<int64_t> *dst, const Shape &shape);

} // namespace rs::protocol::grpc_codec_detail
