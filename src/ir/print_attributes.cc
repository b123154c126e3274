//===- ir/print_attributes.cc - MLIR spelling of attributes ---------------===//
//
// printAttribute and printType (printer.h): scalars, arrays, dictionaries, dense
// arrays, dense elements (splat / list / hex blob), #stablehlo enums and structs (conv
// in its compact `[b, 0, 1, f]x[...]->[...]` form when it is a valid layout).
//
//===----------------------------------------------------------------------===//
#include "ir/float_bits.h"
#include "ir/lexer.h"
#include "ir/printer.h"

#include <charconv>
#include <cmath>
#include <cstring>

namespace rs::ir {
namespace {

void appendHex(std::string &out, uint64_t v, int digits) {
  static const char kHex[] = "0123456789ABCDEF";
  out += "0x";
  for (int i = digits - 1; i >= 0; --i)
    out.push_back(kHex[(v >> (4 * i)) & 15]);
}

/// A decimal MLIR accepts as a float literal (always has a '.').
void appendDecimal(std::string &out, double v, bool as_float) {
  char buf[64];
  auto res = as_float ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v))
                      : std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find('.') == std::string::npos) {
    size_t e = s.find('e');
    if (e == std::string::npos)
      s += ".0";
    else
      s.insert(e, ".0");
  }
  out += s;
}

/// One float of type `t` given its raw bits; exact (NaN/Inf as bit patterns).
void appendFloatBits(std::string &out, uint64_t bits, DType t) {
  int digits = static_cast<int>(dtypeSize(t) * 2);
  double v = floatFromBits(bits, t);
  if (!std::isfinite(v)) {
    appendHex(out, bits, digits);
    return;
  }
  appendDecimal(out, v, t != DType::kF64);
}

void appendInt(std::string &out, int64_t v, DType t) {
  if (t == DType::kBool) {
    out += v ? "true" : "false";
    return;
  }
  if (isInteger(t) && !isSigned(t))
    out += std::to_string(static_cast<uint64_t>(v));
  else
    out += std::to_string(v);
}

/// Element `i` of a dense tensor.
void appendElement(std::string &out, const uint8_t *data, int64_t i, DType t) {
  int64_t size = dtypeSize(t);
  const uint8_t *p = data + i * size;
  if (isComplex(t)) {
    DType part = t == DType::kComplex64 ? DType::kF32 : DType::kF64;
    int64_t ps = size / 2;
    uint64_t re = 0, im = 0;
    std::memcpy(&re, p, static_cast<size_t>(ps));
    std::memcpy(&im, p + ps, static_cast<size_t>(ps));
    out += '(';
    appendFloatBits(out, re, part);
    out += ", ";
    appendFloatBits(out, im, part);
    out += ')';
    return;
  }
  uint64_t raw = 0;
  std::memcpy(&raw, p, static_cast<size_t>(size));
  if (isFloat(t)) {
    appendFloatBits(out, raw, t);
    return;
  }
  int64_t v = 0;
  if (isSigned(t)) { // sign-extend
    int shift = static_cast<int>(64 - 8 * size);
    v = static_cast<int64_t>(raw << shift) >> shift;
  } else {
    v = static_cast<int64_t>(raw);
  }
  appendInt(out, v, t);
}

void appendNested(std::string &out, const uint8_t *data, DType t, const Shape &shape, size_t dim,
                  int64_t *index) {
  if (dim == shape.size()) {
    appendElement(out, data, (*index)++, t);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i)
      out += ", ";
    appendNested(out, data, t, shape, dim + 1, index);
  }
  out += ']';
}

void appendDense(std::string &out, const Attribute &a) {
  const Tensor &t = a.tensor;
  out += "dense<";
  int64_t n = t.valid() ? t.numElements() : 0;
  int64_t size = dtypeSize(t.dtype());
  const uint8_t *data = t.data();
  // All elements equal <=> the bytes equal themselves shifted by one element.
  bool splat =
      n > 0 && (n == 1 || std::memcmp(data, data + size, static_cast<size_t>((n - 1) * size)) == 0);
  if (splat) {
    appendElement(out, data, 0, t.dtype());
  } else if (n > 16) {
    static const char kHex[] = "0123456789ABCDEF";
    out += "\"0x";
    out.reserve(out.size() + static_cast<size_t>(n * size * 2 + 32));
    for (int64_t i = 0; i < n * size; ++i) {
      out.push_back(kHex[data[i] >> 4]);
      out.push_back(kHex[data[i] & 15]);
    }
    out += '"';
  } else if (n > 0) {
    int64_t index = 0;
    appendNested(out, data, t.dtype(), t.shape(), 0, &index);
  }
  out += "> : ";
  out += a.tensor_type ? a.tensor_type->toString() : Type::tensor(t.dtype(), t.shape()).toString();
}

bool isBareId(std::string_view s) {
  if (s.empty() || !isBareIdStart(s[0]))
    return false;
  for (char c : s)
    if (!isBareIdChar(c))
      return false;
  return true;
}

void appendAttr(std::string &out, const Attribute &a);

void appendName(std::string &out, std::string_view name) {
  if (isBareId(name))
    out += name;
  else
    out += quoteString(name);
}

void appendDict(std::string &out, const std::vector<NamedAttribute> &fields) {
  out += '{';
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i)
      out += ", ";
    appendName(out, fields[i].name);
    if (fields[i].value.kind != AttrKind::kUnit) {
      out += " = ";
      appendAttr(out, fields[i].value);
    }
  }
  out += '}';
}

void appendI64List(std::string &out, const std::vector<int64_t> &v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(v[i]);
  }
  out += ']';
}

/// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`, or false when the fields do not form one.
bool appendConvCompact(std::string &out, const Attribute &a) {
  static const char *kNames[3][3] = {
      {"input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions"},
      {"kernel_input_feature_dimension", "kernel_output_feature_dimension",
       "kernel_spatial_dimensions"},
      {"output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions"}};
  static const char *kLetters[3][2] = {{"b", "f"}, {"i", "o"}, {"b", "f"}};
  std::string s;
  size_t spatial_count = 0;
  for (int side = 0; side < 3; ++side) {
    const Attribute *x = a.field(kNames[side][0]);
    const Attribute *y = a.field(kNames[side][1]);
    const Attribute *sp = a.field(kNames[side][2]);
    if (!x || !y || !sp || x->kind != AttrKind::kInteger || y->kind != AttrKind::kInteger ||
        sp->kind != AttrKind::kDenseArray)
      return false;
    if (side == 0)
      spatial_count = sp->ints.size();
    if (sp->ints.size() != spatial_count)
      return false;
    size_t rank = spatial_count + 2;
    std::vector<std::string> labels(rank);
    auto place = [&](int64_t pos, std::string label) {
      if (pos < 0 || static_cast<size_t>(pos) >= rank || !labels[static_cast<size_t>(pos)].empty())
        return false;
      labels[static_cast<size_t>(pos)] = std::move(label);
      return true;
    };
    if (!place(x->int_value, kLetters[side][0]) || !place(y->int_value, kLetters[side][1]))
      return false;
    for (size_t k = 0; k < spatial_count; ++k)
      if (!place(sp->ints[k], std::to_string(k)))
        return false;
    if (side == 1)
      s += "x";
    if (side == 2)
      s += "->";
    s += '[';
    for (size_t i = 0; i < rank; ++i) {
      if (i)
        s += ", ";
      s += labels[i];
    }
    s += ']';
  }
  if (a.fields.size() != 9)
    return false;
  out += s;
  return true;
}

void appendStructField(std::string &out, const Attribute &v) {
  switch (v.kind) {
  case AttrKind::kDenseArray: appendI64List(out, v.ints); break;
  case AttrKind::kInteger: out += std::to_string(v.int_value); break;
  case AttrKind::kFloat: appendDecimal(out, v.float_value, false); break;
  default: appendAttr(out, v); break;
  }
}

void appendAttr(std::string &out, const Attribute &a) {
  switch (a.kind) {
  case AttrKind::kUnit: out += "unit"; break;
  case AttrKind::kBool: out += a.int_value ? "true" : "false"; break;
  case AttrKind::kInteger:
    appendInt(out, a.int_value, a.scalar_type);
    if (a.scalar_type != DType::kInvalid && a.scalar_type != DType::kBool) {
      out += " : ";
      out += dtypeMlirName(a.scalar_type);
    }
    break;
  case AttrKind::kFloat: {
    DType t = a.scalar_type == DType::kInvalid ? DType::kF64 : a.scalar_type;
    appendFloatBits(out, floatBitsOf(a.float_value, t), t);
    out += " : ";
    out += dtypeMlirName(t);
    break;
  }
  case AttrKind::kString: out += quoteString(a.str); break;
  case AttrKind::kType: out += a.type ? a.type->toString() : std::string("none"); break;
  case AttrKind::kSymbolRef:
    out += '@';
    appendName(out, a.str);
    break;
  case AttrKind::kArray:
    out += '[';
    for (size_t i = 0; i < a.elements.size(); ++i) {
      if (i)
        out += ", ";
      appendAttr(out, a.elements[i]);
    }
    out += ']';
    break;
  case AttrKind::kDenseArray: {
    out += "array<";
    out += dtypeMlirName(a.scalar_type);
    size_t n = isFloat(a.scalar_type) ? a.floats.size() : a.ints.size();
    for (size_t i = 0; i < n; ++i) {
      out += i ? ", " : ": ";
      if (isFloat(a.scalar_type))
        appendFloatBits(out, floatBitsOf(a.floats[i], a.scalar_type), a.scalar_type);
      else
        appendInt(out, a.ints[i], a.scalar_type);
    }
    out += '>';
    break;
  }
  case AttrKind::kDenseElements: appendDense(out, a); break;
  case AttrKind::kDictionary: appendDict(out, a.fields); break;
  case AttrKind::kEnum:
    out += '#';
    out += a.dialect;
    out += '<';
    out += a.name;
    out += ' ';
    out += a.str;
    out += '>';
    break;
  case AttrKind::kStruct: {
    out += '#';
    out += a.dialect;
    out += '.';
    out += a.name;
    out += '<';
    if (a.name == "conv" && appendConvCompact(out, a)) {
      out += '>';
      break;
    }
    if (a.name == "conv")
      out += "raw ";
    for (size_t i = 0; i < a.fields.size(); ++i) {
      if (i)
        out += ", ";
      out += a.fields[i].name;
      out += " = ";
      appendStructField(out, a.fields[i].value);
    }
    out += '>';
    break;
  }
  case AttrKind::kOpaque: out += a.str; break;
  }
}

} // namespace

std::string printType(const Type &t) { return t.toString(); }

std::string printAttribute(const Attribute &a) {
  std::string out;
  appendAttr(out, a);
  return out;
}

namespace detail {
/// Shared with printer.cc: a dictionary body `{a = 1, b}`.
void appendAttrDict(std::string &out, const std::vector<NamedAttribute> &fields) {
  appendDict(out, fields);
}
} // namespace detail

} // namespace rs::ir
