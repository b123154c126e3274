//===- protocol/json_packed.h - KServe V2 JSON bodies without a DOM per element -===//
//
// A KServe V2 JSON inference body is mostly its tensors' `data` arrays. nlohmann's DOM
// costs 16 bytes per element plus the arrays' own storage (with nesting and allocator
// overhead about 17x the body), so this parse (nlohmann's SAX interface) builds the DOM for
// everything but `inputs[i].data`, which it packs as it streams into one byte string held
// in a JSON binary node: per element a tag byte and, for numbers, 8 bytes. The packed data
// keeps every element's JSON type, value and the nesting, so protocol/json_tensor.h checks
// and converts it exactly as it would the array (same errors, same values).
//
// Packed tokens (native byte order): integers as the smallest of 'b' int8, 'i' int32,
// 'I' int64 or 'c' uint8, 'u' uint32, 'U' uint64 that holds them (nlohmann's signedness
// kept); numbers with a fraction or exponent as 'g' float when that is exact, or when the
// input's "datatype" (seen before its "data") is FP32 and the value is within float range
// (the cast json_tensor.cc would make), else 'F' double; 'T' true, 'f' false, 'N' null;
// 'S' a string and 'J' any other value as JSON text (8-byte length, then the bytes); '['
// and ']' a nested array. The outermost array's brackets are not stored. The buffer is
// reserved once from the body's size, so packing does not double it while it grows.
//
// Errors: InvalidArgument "invalid JSON: ..." with nlohmann's message (as json::parse).
// Thread safety: pure functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string_view>

namespace rs::protocol {

/// Parses a KServe V2 JSON request body, packing `inputs[i].data` arrays (see above).
Result<nlohmann::json> parseInferJson(std::string_view text);

/// True when `v` is a `data` array packed by parseInferJson.
bool isPackedData(const nlohmann::json &v);

/// True when some values of packed `v` were narrowed to float for an FP32 input: it must
/// then be converted as FP32 (a "datatype" given twice could say otherwise).
bool packedDataNarrowedToFloat(const nlohmann::json &v);

/// One step of a walk over packed data: an element (`leaf` set, `depth` its nesting depth
/// below the outermost array), or the start (`open`) or end (`close`) of a nested array.
struct PackedEvent {
  enum Kind { kLeaf, kOpen, kClose } kind = kLeaf;
  const nlohmann::json *leaf = nullptr;
};

/// Calls `fn` for every token of packed data `v` in order; stops at the first error it
/// returns. A leaf is rebuilt as a JSON scalar (a string or object as its JSON value).
Status walkPackedData(const nlohmann::json &v,
                      const std::function<Status(const PackedEvent &)> &fn);

} // namespace rs::protocol
