//===- protocol/json_tensor.h - KServe V2 JSON tensor data -----------------===//
//
// The `data` member of a KServe V2 REST tensor (KServe V2 REST "Tensor Data"): the
// elements in row-major order, either as one flat array or nested arrays whose lengths
// follow the shape. Element JSON types must fit the datatype; this server coerces nothing
// that loses information:
//   BOOL            true / false only
//   INT*, UINT*     JSON integers inside the datatype's range (1.5 or 2.0 are errors)
//   FP32, FP64      any JSON number; FP32 values beyond float range are errors
//   FP16, BF16      no JSON form: binary data only
//   BYTES           JSON strings, each element's bytes (protocol/bytes_tensor.h); an element
//                   that is not UTF-8 has no JSON form (JSON text is Unicode)
// Writing uses the shortest decimal that parses back to the identical value (floats are
// checked to survive a parse as double then a cast to float, as JSON clients do).
//
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/bytes_tensor.h"
#include "protocol/wire_tensor.h"
#include "support/status.h"
#include "support/tensor.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>

namespace rs::protocol {

/// Converts `data` (flat or nested) into a tensor of `layout`. Errors (InvalidArgument,
/// prefixed by `what`): data not an array, element count or nesting not matching the
/// shape, an element of the wrong JSON type or out of range, a datatype without JSON form.
/// The tensor is allocated only after the element count matched the shape.
Result<Tensor> tensorFromJsonData(const std::string &what, const nlohmann::json &data,
                                  const WireTensorLayout &layout);

/// Converts `data` (flat or nested, of JSON strings) into a BYTES tensor of `layout` (a
/// BYTES layout). Errors as tensorFromJsonData, and an element that is not a string.
Result<BytesTensor> bytesFromJsonData(const std::string &what, const nlohmann::json &data,
                                      const WireTensorLayout &layout);

/// `t`'s elements as one flat JSON array of strings (`["a","b"]`), or nullopt when an
/// element is not valid UTF-8 and so has no JSON form.
std::optional<std::string> jsonStringsOf(const BytesTensor &t);

/// True when every element of `t` has an exact JSON form: the dtype is not FP16/BF16 and
/// every float is finite.
bool hasJsonForm(const Tensor &t);

/// Appends `t`'s elements as one flat JSON array, e.g. `[1,2.5,true]`. Requires
/// hasJsonForm(t) (a programmer error otherwise: non-finite values print as null).
void appendJsonData(const Tensor &t, std::string &out);

} // namespace rs::protocol
