//===- test/protocol/tensor_text.h - Tensors as one line of text (tests) ----===//
//
// "x FP32 [2,2] = 1 2.5 -3 0.1": name, wire datatype, shape, then every element (floats
// in shortest round-trip form, BOOL as true/false, FP16/BF16 as 0x-prefixed bit
// patterns, BYTES as quoted strings). Used by the case files and the server tests to compare whole
// tensors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "protocol/inference.h"

#include <charconv>
#include <cstdio>
#include <string>

namespace rs::protocol {

template <typename T> void appendTextValues(const Tensor &t, std::string &out) {
  const T *p = t.dataAs<T>();
  for (int64_t i = 0; i < t.numElements(); ++i) {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof(buf), p[i]);
    out += ' ';
    out.append(buf, r.ptr);
  }
}

/// A BYTES element as a quoted string: printable ASCII as is (`"` and `\` escaped), any
/// other byte as \xHH.
inline std::string quotedElement(std::string_view e) {
  std::string out = "\"";
  for (unsigned char c : e) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    }
  }
  return out + "\"";
}

inline std::string tensorText(const protocol::NamedTensor &nt) {
  if (nt.isBytes()) {
    std::string out = nt.name + " BYTES " + shapeToString(nt.bytes->shape()) + " =";
    for (int64_t i = 0; i < nt.bytes->numElements(); ++i)
      out += " " + quotedElement(nt.bytes->element(i));
    return out;
  }
  const Tensor &t = nt.tensor;
  std::string out =
      nt.name + " " + std::string(dtypeWireName(t.dtype())) + " " + shapeToString(t.shape()) + " =";
  switch (t.dtype()) {
  case DType::kBool:
    for (int64_t i = 0; i < t.numElements(); ++i)
      out += t.data()[i] ? " true" : " false";
    break;
  case DType::kI8:
    for (int64_t i = 0; i < t.numElements(); ++i)
      out += " " + std::to_string(t.dataAs<int8_t>()[i]);
    break;
  case DType::kU8:
    for (int64_t i = 0; i < t.numElements(); ++i)
      out += " " + std::to_string(t.data()[i]);
    break;
  case DType::kI16: appendTextValues<int16_t>(t, out); break;
  case DType::kI32: appendTextValues<int32_t>(t, out); break;
  case DType::kI64: appendTextValues<int64_t>(t, out); break;
  case DType::kU16: appendTextValues<uint16_t>(t, out); break;
  case DType::kU32: appendTextValues<uint32_t>(t, out); break;
  case DType::kU64: appendTextValues<uint64_t>(t, out); break;
  case DType::kF32: appendTextValues<float>(t, out); break;
  case DType::kF64: appendTextValues<double>(t, out); break;
  case DType::kF16:
  case DType::kBF16:
    for (int64_t i = 0; i < t.numElements(); ++i) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "0x%04x", t.dataAs<uint16_t>()[i]);
      out += " ";
      out += buf;
    }
    break;
  default: out += " ?"; break;
  }
  return out;
}

} // namespace rs::protocol
