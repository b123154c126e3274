//===- protocol/json_tensor.cc - KServe V2 JSON tensor data ----------------===//
#include "protocol/json_tensor.h"

#include "protocol/json_packed.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

namespace rs::protocol {
namespace {

using nlohmann::json;

/// Checks that nested `node` at `depth` follows `shape` exactly (arrays down to the rank,
/// scalars at the rank).
Status checkNested(const std::string &what, const json &node, const Shape &shape, size_t depth) {
  if (depth == shape.size()) {
    if (node.is_array())
      return invalidArgument() << what << ": data is nested deeper than shape "
                               << shapeToString(shape);
    return Status::ok();
  }
  if (!node.is_array())
    return invalidArgument() << what << ": nested data does not match shape "
                             << shapeToString(shape) << ": expected an array at depth " << depth;
  if (static_cast<int64_t>(node.size()) != shape[depth])
    return invalidArgument() << what << ": nested data does not match shape "
                             << shapeToString(shape) << ": expected " << shape[depth]
                             << " elements at depth " << depth << ", got " << node.size();
  for (const json &child : node)
    RS_RETURN_IF_ERROR(checkNested(what, child, shape, depth + 1));
  return Status::ok();
}

/// Calls fn(leaf) for every scalar of a validated flat or nested array, in row-major order.
template <typename Fn> Status forEachLeaf(const json &node, int64_t &index, Fn &fn) {
  if (!node.is_array()) {
    RS_RETURN_IF_ERROR(fn(node, index));
    ++index;
    return Status::ok();
  }
  for (const json &child : node)
    RS_RETURN_IF_ERROR(forEachLeaf(child, index, fn));
  return Status::ok();
}

std::string leafText(const json &v) {
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

template <typename T>
Status readInteger(const std::string &what, const json &v, int64_t i, DType dtype, T *out) {
  bool fits = false;
  if (v.is_number_unsigned())
    fits = std::in_range<T>(v.get<uint64_t>());
  else if (v.is_number_integer())
    fits = std::in_range<T>(v.get<int64_t>());
  else
    return invalidArgument() << what << ": element " << i << " (" << leafText(v)
                             << ") is not an integer, as " << dtypeWireName(dtype) << " needs";
  if (!fits)
    return invalidArgument() << what << ": element " << i << " (" << leafText(v)
                             << ") is out of range for " << dtypeWireName(dtype);
  out[i] =
      v.is_number_unsigned() ? static_cast<T>(v.get<uint64_t>()) : static_cast<T>(v.get<int64_t>());
  return Status::ok();
}

template <typename T>
Status readFloat(const std::string &what, const json &v, int64_t i, DType dtype, T *out) {
  if (!v.is_number())
    return invalidArgument() << what << ": element " << i << " (" << leafText(v)
                             << ") is not a number, as " << dtypeWireName(dtype) << " needs";
  double d = v.get<double>();
  if constexpr (std::is_same_v<T, float>) {
    // Values that round to a finite float are fine (the shortest text of FLT_MAX is a
    // little above it); only those that would become infinity are out of range.
    if (std::isinf(static_cast<float>(d)))
      return invalidArgument() << what << ": element " << i << " (" << leafText(v)
                               << ") is out of range for FP32";
  }
  out[i] = static_cast<T>(d);
  return Status::ok();
}

Status readElement(const std::string &what, const json &v, int64_t i, DType dtype, uint8_t *p) {
  switch (dtype) {
  case DType::kBool:
    if (!v.is_boolean())
      return invalidArgument() << what << ": element " << i << " (" << leafText(v)
                               << ") is not a boolean, as BOOL needs";
    p[i] = v.get<bool>() ? 1 : 0;
    return Status::ok();
  case DType::kI8: return readInteger(what, v, i, dtype, reinterpret_cast<int8_t *>(p));
  case DType::kI16: return readInteger(what, v, i, dtype, reinterpret_cast<int16_t *>(p));
  case DType::kI32: return readInteger(what, v, i, dtype, reinterpret_cast<int32_t *>(p));
  case DType::kI64: return readInteger(what, v, i, dtype, reinterpret_cast<int64_t *>(p));
  case DType::kU8: return readInteger(what, v, i, dtype, p);
  case DType::kU16: return readInteger(what, v, i, dtype, reinterpret_cast<uint16_t *>(p));
  case DType::kU32: return readInteger(what, v, i, dtype, reinterpret_cast<uint32_t *>(p));
  case DType::kU64: return readInteger(what, v, i, dtype, reinterpret_cast<uint64_t *>(p));
  case DType::kF32: return readFloat(what, v, i, dtype, reinterpret_cast<float *>(p));
  case DType::kF64: return readFloat(what, v, i, dtype, reinterpret_cast<double *>(p));
  default:
    return invalidArgument() << what << ": " << dtypeWireName(dtype)
                             << " has no JSON form; send it as binary data";
  }
}

template <typename T> void appendNumber(T v, std::string &out) {
  if constexpr (std::is_floating_point_v<T>) {
    // "-0" would parse back as the integer 0 and lose the sign.
    if (v == 0 && std::signbit(v)) {
      out += "-0.0";
      return;
    }
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, r.ptr);
}

/// Shortest float text; falls back to the double's text (exact) in the rare case where
/// parsing the float text as a double and casting back to float would round differently.
void appendFloat(float v, std::string &out) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  if (v == 0 && std::signbit(v)) {
    out += "-0.0";
    return;
  }
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  double back = 0;
  std::from_chars(buf, r.ptr, back);
  if (static_cast<float>(back) == v) {
    out.append(buf, r.ptr);
    return;
  }
  appendNumber(static_cast<double>(v), out);
}

template <typename T, typename Fn> void appendAll(const Tensor &t, std::string &out, Fn fn) {
  const T *p = t.dataAs<T>();
  int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i) {
    if (i)
      out.push_back(',');
    fn(p[i], out);
  }
}

template <typename T> bool allFinite(const Tensor &t) {
  const T *p = t.dataAs<T>();
  for (int64_t i = 0, n = t.numElements(); i < n; ++i)
    if (!std::isfinite(p[i]))
      return false;
  return true;
}

std::string datatypeName(const WireTensorLayout &layout) {
  return std::string(layout.bytes ? kBytesDatatype : dtypeWireName(layout.dtype));
}

/// The checks of checkJsonData for data packed by parseInferJson, in the same order (the
/// nesting in pre-order), walking the packed tokens instead of the array. The first walk
/// counts each array's children, the second checks the nesting.
Status checkPackedData(const std::string &what, const json &data, const WireTensorLayout &layout) {
  if (packedDataNarrowedToFloat(data) && (layout.bytes || layout.dtype != DType::kF32))
    return invalidArgument() << what << ": 'datatype' is given twice, FP32 before 'data' and "
                             << datatypeName(layout) << " after it";
  std::vector<int64_t> sizes{0}; // children per array, in the order the arrays open
  std::vector<size_t> open{0};
  bool flat = true;
  RS_RETURN_IF_ERROR(walkPackedData(data, [&](const PackedEvent &e) {
    if (e.kind == PackedEvent::kClose) {
      open.pop_back();
      return Status::ok();
    }
    ++sizes[open.back()];
    if (e.kind == PackedEvent::kOpen) {
      flat = false;
      open.push_back(sizes.size());
      sizes.push_back(0);
    }
    return Status::ok();
  }));
  const Shape &shape = layout.shape;
  const size_t rank = shape.size();
  auto checkArray = [&](size_t depth, int64_t size) -> Status {
    if (depth == rank)
      return invalidArgument() << what << ": data is nested deeper than shape "
                               << shapeToString(shape);
    if (size != shape[depth])
      return invalidArgument() << what << ": nested data does not match shape "
                               << shapeToString(shape) << ": expected " << shape[depth]
                               << " elements at depth " << depth << ", got " << size;
    return Status::ok();
  };
  if (flat) {
    if (sizes[0] != layout.num_elements)
      return invalidArgument() << what << ": data has " << sizes[0] << " elements but "
                               << describeLayout(layout) << " needs " << layout.num_elements;
    return Status::ok();
  }
  RS_RETURN_IF_ERROR(checkArray(0, sizes[0]));
  size_t depth = 0, next_array = 1;
  return walkPackedData(data, [&](const PackedEvent &e) -> Status {
    if (e.kind == PackedEvent::kClose) {
      --depth;
      return Status::ok();
    }
    if (e.kind == PackedEvent::kOpen) {
      ++depth;
      return checkArray(depth, sizes[next_array++]);
    }
    if (depth + 1 != rank)
      return invalidArgument() << what << ": nested data does not match shape "
                               << shapeToString(shape) << ": expected an array at depth "
                               << depth + 1;
    return Status::ok();
  });
}

/// Checks that `data` (an array or packed data) holds the elements of `layout`: flat with
/// the element count, or nested along the shape. Nothing is allocated.
Status checkJsonData(const std::string &what, const json &data, const WireTensorLayout &layout) {
  if (!data.is_array() && !isPackedData(data))
    return invalidArgument() << what << ": data must be an array";
  if (isPackedData(data))
    return checkPackedData(what, data, layout);
  bool flat = true;
  for (const json &e : data)
    if (e.is_array()) {
      flat = false;
      break;
    }
  if (!flat)
    return checkNested(what, data, layout.shape, 0);
  if (static_cast<int64_t>(data.size()) != layout.num_elements)
    return invalidArgument() << what << ": data has " << data.size() << " elements but "
                             << describeLayout(layout) << " needs " << layout.num_elements;
  return Status::ok();
}

/// Calls fn(leaf, index) for every element of checked `data`, in row-major order.
template <typename Fn> Status forEachElement(const json &data, Fn fn) {
  int64_t index = 0;
  if (isPackedData(data))
    return walkPackedData(data, [&](const PackedEvent &e) -> Status {
      if (e.kind != PackedEvent::kLeaf)
        return Status::ok();
      return fn(*e.leaf, index++);
    });
  return forEachLeaf(data, index, fn);
}

} // namespace

Result<Tensor> tensorFromJsonData(const std::string &what, const json &data,
                                  const WireTensorLayout &layout) {
  if (!data.is_array() && !isPackedData(data))
    return invalidArgument() << what << ": data must be an array";
  if (layout.dtype == DType::kF16 || layout.dtype == DType::kBF16)
    return invalidArgument() << what << ": " << dtypeWireName(layout.dtype)
                             << " has no JSON form; send it as binary data";
  RS_RETURN_IF_ERROR(checkJsonData(what, data, layout));
  Tensor t = Tensor::zeros(layout.dtype, layout.shape);
  uint8_t *p = t.mutableData();
  RS_RETURN_IF_ERROR(forEachElement(
      data, [&](const json &v, int64_t i) { return readElement(what, v, i, layout.dtype, p); }));
  return t;
}

Result<BytesTensor> bytesFromJsonData(const std::string &what, const json &data,
                                      const WireTensorLayout &layout) {
  RS_RETURN_IF_ERROR(checkJsonData(what, data, layout));
  BytesTensor t(layout.shape);
  RS_RETURN_IF_ERROR(forEachElement(data, [&](const json &v, int64_t i) -> Status {
    if (!v.is_string())
      return invalidArgument() << what << ": element " << i << " (" << leafText(v)
                               << ") is not a string, as BYTES needs";
    t.append(v.get_ref<const std::string &>());
    return Status::ok();
  }));
  return t;
}

std::optional<std::string> jsonStringsOf(const BytesTensor &t) {
  std::string out = "[";
  try {
    for (int64_t i = 0; i < t.numElements(); ++i) {
      if (i)
        out.push_back(',');
      out += json(std::string(t.element(i))).dump(-1, ' ', false, json::error_handler_t::strict);
    }
  } catch (const json::exception &) {
    return std::nullopt; // an element that is not UTF-8 (nlohmann's type_error 316)
  }
  out.push_back(']');
  return out;
}

bool hasJsonForm(const Tensor &t) {
  switch (t.dtype()) {
  case DType::kF16:
  case DType::kBF16:
  case DType::kComplex64:
  case DType::kComplex128:
  case DType::kInvalid: return false;
  case DType::kF32: return allFinite<float>(t);
  case DType::kF64: return allFinite<double>(t);
  default: return true;
  }
}

void appendJsonData(const Tensor &t, std::string &out) {
  out.push_back('[');
  auto num = [](auto v, std::string &o) { appendNumber(v, o); };
  switch (t.dtype()) {
  case DType::kBool:
    appendAll<uint8_t>(t, out, [](uint8_t v, std::string &o) { o += v ? "true" : "false"; });
    break;
  case DType::kI8:
    appendAll<int8_t>(t, out, [](int8_t v, std::string &o) { appendNumber(int(v), o); });
    break;
  case DType::kI16: appendAll<int16_t>(t, out, num); break;
  case DType::kI32: appendAll<int32_t>(t, out, num); break;
  case DType::kI64: appendAll<int64_t>(t, out, num); break;
  case DType::kU8:
    appendAll<uint8_t>(t, out, [](uint8_t v, std::string &o) { appendNumber(unsigned(v), o); });
    break;
  case DType::kU16: appendAll<uint16_t>(t, out, num); break;
  case DType::kU32: appendAll<uint32_t>(t, out, num); break;
  case DType::kU64: appendAll<uint64_t>(t, out, num); break;
  case DType::kF32: appendAll<float>(t, out, appendFloat); break;
  case DType::kF64:
    appendAll<double>(t, out, [](double v, std::string &o) {
      if (std::isfinite(v))
        appendNumber(v, o);
      else
        o += "null";
    });
    break;
  default: break; // no JSON form: hasJsonForm() is false
  }
  out.push_back(']');
}

} // namespace rs::protocol
