//===- ir/ir.cc - StableHLO IR: types, attributes, operations -------------===//
#include "ir/ir.h"

#include <cassert>
#include <cstring>

namespace rs::ir {
namespace {

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

bool sameBits(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sameBits(a[i], b[i]))
      return false;
  return true;
}

bool sameType(const std::shared_ptr<Type> &a, const std::shared_ptr<Type> &b) {
  if (!a || !b)
    return !a && !b;
  return *a == *b;
}

bool sameTensor(const Tensor &a, const Tensor &b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return false;
  if (!a.valid())
    return true;
  auto x = a.bytes();
  auto y = b.bytes();
  return x.size() == y.size() && (x.empty() || std::memcmp(x.data(), y.data(), x.size()) == 0);
}

void appendTypeList(std::string &out, const std::vector<Type> &types) {
  for (size_t i = 0; i < types.size(); ++i) {
    if (i)
      out += ", ";
    out += types[i].toString();
  }
}

} // namespace

std::string Location::toString() const {
  if (line == 0 && byte_offset >= 0)
    return file + ": byte " + std::to_string(byte_offset) +
           (source.empty() ? std::string() : " (" + source + ")");
  if (line == 0)
    return "<unknown>";
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

//===----------------------------------------------------------------------===//
// Type
//===----------------------------------------------------------------------===//

Type Type::tensor(DType element, Shape shape) {
  Type t;
  t.kind = TypeKind::kTensor;
  t.element = element;
  t.shape = std::move(shape);
  return t;
}

bool Type::operator==(const Type &o) const {
  if (kind != o.kind)
    return false;
  switch (kind) {
  case TypeKind::kTensor:
    return element == o.element && shape == o.shape && is_scalar_element == o.is_scalar_element &&
           text == o.text;
  case TypeKind::kToken: return true;
  case TypeKind::kTuple: return elements == o.elements;
  case TypeKind::kFunction: return elements == o.elements && results == o.results;
  case TypeKind::kOther: return text == o.text;
  }
  return false;
}

std::string Type::toString() const {
  switch (kind) {
  case TypeKind::kTensor: {
    if (is_scalar_element)
      return std::string(dtypeMlirName(element));
    std::string s = "tensor<";
    for (int64_t d : shape) {
      s += d < 0 ? std::string("?") : std::to_string(d);
      s += 'x';
    }
    s += dtypeMlirName(element);
    if (!text.empty()) {
      s += ", ";
      s += text;
    }
    s += '>';
    return s;
  }
  case TypeKind::kToken: return "!stablehlo.token";
  case TypeKind::kTuple: {
    std::string s = "tuple<";
    appendTypeList(s, elements);
    return s + ">";
  }
  case TypeKind::kFunction: {
    std::string s = "(";
    appendTypeList(s, elements);
    s += ") -> ";
    bool paren = results.size() != 1 || results[0].kind == TypeKind::kFunction;
    if (paren)
      s += '(';
    appendTypeList(s, results);
    if (paren)
      s += ')';
    return s;
  }
  case TypeKind::kOther: return text;
  }
  return text;
}

//===----------------------------------------------------------------------===//
// Attribute
//===----------------------------------------------------------------------===//

const Attribute *Attribute::field(std::string_view field_name) const {
  for (const NamedAttribute &f : fields)
    if (f.name == field_name)
      return &f.value;
  return nullptr;
}

bool Attribute::operator==(const Attribute &o) const {
  if (kind != o.kind)
    return false;
  switch (kind) {
  case AttrKind::kUnit: return true;
  case AttrKind::kBool:
  case AttrKind::kInteger: return int_value == o.int_value && scalar_type == o.scalar_type;
  case AttrKind::kFloat:
    return sameBits(float_value, o.float_value) && scalar_type == o.scalar_type;
  case AttrKind::kString:
  case AttrKind::kSymbolRef:
  case AttrKind::kOpaque: return str == o.str;
  case AttrKind::kType: return sameType(type, o.type);
  case AttrKind::kArray: return elements == o.elements;
  case AttrKind::kDenseArray:
    return scalar_type == o.scalar_type && ints == o.ints && sameBits(floats, o.floats);
  case AttrKind::kDenseElements:
    return sameType(tensor_type, o.tensor_type) && sameTensor(tensor, o.tensor);
  case AttrKind::kDictionary: return fields == o.fields;
  case AttrKind::kEnum: return dialect == o.dialect && name == o.name && str == o.str;
  case AttrKind::kStruct: return dialect == o.dialect && name == o.name && fields == o.fields;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Operation, Module
//===----------------------------------------------------------------------===//

const Attribute *Operation::attr(std::string_view attr_name) const {
  for (const NamedAttribute &a : properties)
    if (a.name == attr_name)
      return &a.value;
  for (const NamedAttribute &a : attributes)
    if (a.name == attr_name)
      return &a.value;
  return nullptr;
}

bool Operation::operator==(const Operation &o) const {
  return name == o.name && operands == o.operands && results == o.results &&
         properties == o.properties && attributes == o.attributes && regions == o.regions;
}

const Operation *Module::lookupFunction(std::string_view func_name) const {
  for (const Operation &op : ops)
    if (op.name == "func.func" && functionName(op) == func_name)
      return &op;
  return nullptr;
}

bool Module::operator==(const Module &o) const {
  return name == o.name && attributes == o.attributes && ops == o.ops &&
         value_types == o.value_types;
}

std::string_view functionName(const Operation &func) {
  const Attribute *a = func.attr("sym_name");
  return a && a->kind == AttrKind::kString ? std::string_view(a->str) : std::string_view();
}

const Type &functionType(const Operation &func) {
  const Attribute *a = func.attr("function_type");
  assert(a && a->kind == AttrKind::kType && a->type && a->type->kind == TypeKind::kFunction);
  return *a->type;
}

} // namespace rs::ir
