//===- protocol/wire_tensor.h - Checked wire tensor descriptions -----------===//
//
// Every tensor that arrives from a client (gRPC or HTTP) is described by a KServe V2
// datatype string and a shape of int64 dims. checkWireTensor() validates that description
// before anything is allocated: the datatype is known, the rank is at most kMaxWireRank,
// every dim is non-negative, and the element count and (for a fixed-size datatype) the
// byte size fit in int64. Callers then compare the byte size with the bytes actually
// received, so no allocation is ever sized by an unchecked client number. A BYTES tensor
// (protocol/bytes_tensor.h) has no byte size of its own: its data is checked element by
// element against the bytes received.
//
// Source: KServe V2 "Tensor Data Types" (datatype names and element sizes).
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/dtype.h"
#include "support/status.h"
#include "support/tensor.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace rs::protocol {

/// Largest rank accepted from the wire (deeper nesting would only serve to exhaust stacks).
inline constexpr int64_t kMaxWireRank = 64;

/// The KServe V2 datatype of variable-length byte strings (protocol/bytes_tensor.h).
inline constexpr std::string_view kBytesDatatype = "BYTES";

/// A validated wire tensor description.
struct WireTensorLayout {
  DType dtype = DType::kInvalid; // kInvalid for BYTES
  bool bytes = false;            // datatype BYTES (variable-length elements)
  Shape shape;                   // row-major, all dims >= 0
  int64_t num_elements = 0;      // product of dims
  int64_t byte_size = 0;         // num_elements * dtypeSize(dtype), no overflow; 0 for BYTES
};

/// Validates `datatype` (KServe V2 name, e.g. "FP32") and `shape` for the tensor named by
/// `what` (e.g. "input 'image'", used as the error prefix). Errors (InvalidArgument):
/// unknown datatype, rank above kMaxWireRank, a negative dim, element count or byte size
/// overflowing int64.
Result<WireTensorLayout> checkWireTensor(std::string_view what, std::string_view datatype,
                                         std::span<const int64_t> shape);

/// "shape [1,8,8,1] of FP32" ("... of BYTES"), the phrase used in size mismatch messages.
std::string describeLayout(const WireTensorLayout &layout);

/// "input 'name'" / "output 'name'".
std::string inputWhat(std::string_view name);
std::string outputWhat(std::string_view name);

} // namespace rs::protocol
