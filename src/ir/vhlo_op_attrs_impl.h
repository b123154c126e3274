//===- ir/vhlo_op_attrs_impl.h - One VHLO op's attributes, by name --------===//
//
// Props: the attribute list of one op being converted from VHLO to StableHLO
// (vhlo_op_attrs.cc), with the lookups, the conversions in place (tensors to dense arrays,
// bools to unit attributes, strings to symbol references) and the default tests
// (StableHLO's removeDefaults) the per-op rules are written with.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/bytecode_impl.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

namespace rs::ir::bc {

/// The op's attributes by name, with the helpers the conversions use.
class Props {
public:
  Props(std::string_view op, std::vector<NamedAttribute> *v) : op_(op), v_(*v) {}

  Attribute *find(std::string_view name) {
    for (NamedAttribute &a : v_)
      if (a.name == name)
        return &a.value;
    return nullptr;
  }
  std::optional<Attribute> take(std::string_view name) {
    for (auto it = v_.begin(); it != v_.end(); ++it)
      if (it->name == name) {
        Attribute a = std::move(it->value);
        v_.erase(it);
        return a;
      }
    return std::nullopt;
  }
  void set(std::string_view name, Attribute a) {
    if (Attribute *x = find(name))
      *x = std::move(a);
    else
      v_.push_back({std::string(name), std::move(a)});
  }
  void erase(std::string_view name) { (void)take(name); }
  Status error(std::string_view name, std::string_view what) const {
    return invalidArgument() << "attribute '" << name << "' of 'vhlo." << op_ << "' " << what;
  }

  /// A 1-D i64 (or i1) tensor to a dense array, in place.
  Status toArray(std::string_view name) {
    Attribute *a = find(name);
    if (!a || a->kind == AttrKind::kDenseArray)
      return Status::ok();
    if (a->kind != AttrKind::kDenseElements || a->tensor.rank() != 1 ||
        (a->tensor.dtype() != DType::kI64 && a->tensor.dtype() != DType::kBool))
      return error(name, "must be a 1-D i64 or i1 tensor");
    Attribute out;
    out.kind = AttrKind::kDenseArray;
    out.scalar_type = a->tensor.dtype();
    for (int64_t i = 0; i < a->tensor.numElements(); ++i)
      out.ints.push_back(a->tensor.dtype() == DType::kI64 ? a->tensor.dataAs<int64_t>()[i]
                                                          : a->tensor.data()[i] != 0);
    *a = std::move(out);
    return Status::ok();
  }
  Status toArrays(std::initializer_list<std::string_view> names) {
    for (std::string_view n : names)
      RS_RETURN_IF_ERROR(toArray(n));
    return Status::ok();
  }
  /// Takes a dimension list as an i64 array (empty when absent).
  Status takeArray(std::string_view name, Attribute *out) {
    RS_RETURN_IF_ERROR(toArray(name));
    std::optional<Attribute> a = take(name);
    if (!a) {
      out->kind = AttrKind::kDenseArray;
      out->scalar_type = DType::kI64;
      return Status::ok();
    }
    *out = std::move(*a);
    return Status::ok();
  }
  /// Takes a single integer (integer_v1).
  Status takeInt(std::string_view name, Attribute *out) {
    std::optional<Attribute> a = take(name);
    if (!a || a->kind != AttrKind::kInteger)
      return error(name, a ? "must be an integer" : "is missing");
    *out = std::move(*a);
    out->scalar_type = DType::kI64;
    return Status::ok();
  }

  // Defaults (removeDefaults).
  bool isBool(std::string_view name, bool v) {
    Attribute *a = find(name);
    return a && a->kind == AttrKind::kBool && (a->int_value != 0) == v;
  }
  bool isString(std::string_view name, std::string_view v) {
    Attribute *a = find(name);
    return a && a->kind == AttrKind::kString && a->str == v;
  }
  bool isEmptyList(std::string_view name) {
    Attribute *a = find(name);
    if (!a)
      return false;
    switch (a->kind) {
    case AttrKind::kArray: return a->elements.empty();
    case AttrKind::kDictionary: return a->fields.empty();
    case AttrKind::kDenseArray: return a->ints.empty() && a->floats.empty();
    case AttrKind::kDenseElements: return a->tensor.numElements() == 0;
    default: return false;
    }
  }
  bool isSplat(std::string_view name, int64_t v) {
    Attribute *a = find(name);
    if (!a)
      return false;
    if (a->kind == AttrKind::kDenseArray)
      return std::all_of(a->ints.begin(), a->ints.end(), [&](int64_t x) { return x == v; });
    if (a->kind == AttrKind::kDenseElements && a->tensor.dtype() == DType::kI64) {
      for (int64_t i = 0; i < a->tensor.numElements(); ++i)
        if (a->tensor.dataAs<int64_t>()[i] != v)
          return false;
      return true;
    }
    return false;
  }
  bool isInt(std::string_view name, int64_t v) {
    Attribute *a = find(name);
    return a && a->kind == AttrKind::kInteger && a->int_value == v;
  }
  bool isEnum(std::string_view name, std::string_view v) {
    Attribute *a = find(name);
    return a && a->kind == AttrKind::kEnum && a->str == v;
  }
  /// precision_config: empty or all DEFAULT.
  bool isDefaultPrecision(std::string_view name) {
    Attribute *a = find(name);
    return a && a->kind == AttrKind::kArray &&
           std::all_of(a->elements.begin(), a->elements.end(), [](const Attribute &p) {
             return p.kind == AttrKind::kEnum && p.str == "DEFAULT";
           });
  }
  void dropIf(bool cond, std::string_view name) {
    if (cond)
      erase(name);
  }

  /// A VHLO bool that StableHLO spells as a unit attribute: unit when true, gone when
  /// false.
  Status boolToUnit(std::string_view name) {
    std::optional<Attribute> a = take(name);
    if (!a)
      return Status::ok();
    if (a->kind != AttrKind::kBool)
      return error(name, "must be a bool");
    if (a->int_value) {
      Attribute u;
      u.kind = AttrKind::kUnit;
      set(name, u);
    }
    return Status::ok();
  }
  Status toSymbol(std::string_view name) {
    Attribute *a = find(name);
    if (!a)
      return Status::ok();
    if (a->kind != AttrKind::kString)
      return error(name, "must be a string naming a function");
    a->kind = AttrKind::kSymbolRef;
    return Status::ok();
  }

private:
  std::string_view op_;
  std::vector<NamedAttribute> &v_;
};

} // namespace rs::ir::bc
