//===- ir/normalise.cc - One spelling for every parsed op -----------------===//
//
// Every op, pretty or generic, goes through normaliseAttributes once parsed: inherent
// attributes to properties and discardable (dialect-prefixed) ones to attributes, both
// sorted by name; older spellings of array properties (dense<...> : tensor<Nxi64>)
// turned into dense arrays; defaults the pretty printers elide filled in; func.func
// checked so that functionName/functionType never fail on a parsed module. Also the
// small attribute builders the parser files share.
//
//===----------------------------------------------------------------------===//
#include "ir/parser_impl.h"

#include <algorithm>

namespace rs::ir::detail {

Attribute makeString(std::string s) {
  Attribute a;
  a.kind = AttrKind::kString;
  a.str = std::move(s);
  return a;
}

Attribute makeInt(int64_t v, DType t) {
  Attribute a;
  a.kind = AttrKind::kInteger;
  a.scalar_type = t;
  a.int_value = v;
  return a;
}

Attribute makeI64Array(std::vector<int64_t> v, DType t) {
  Attribute a;
  a.kind = AttrKind::kDenseArray;
  a.scalar_type = t;
  a.ints = std::move(v);
  return a;
}

Attribute makeEnum(std::string_view name, std::string_view value) {
  Attribute a;
  a.kind = AttrKind::kEnum;
  a.dialect = "stablehlo";
  a.name = std::string(name);
  a.str = std::string(value);
  return a;
}

Attribute makeDict(std::vector<NamedAttribute> fields) {
  std::stable_sort(
      fields.begin(), fields.end(),
      [](const NamedAttribute &a, const NamedAttribute &b) { return a.name < b.name; });
  Attribute a;
  a.kind = AttrKind::kDictionary;
  a.fields = std::move(fields);
  return a;
}

namespace {

/// StableHLO properties that are array<i64> (or array<i1> for window_reversal).
bool isArrayProperty(std::string_view name) {
  static const std::string_view kNames[] = {
      "base_dilations",    "broadcast_dimensions", "broadcast_sizes", "dimensions",
      "edge_padding_high", "edge_padding_low",     "fft_length",      "interior_padding",
      "lhs_dilation",      "limit_indices",        "permutation",     "rhs_dilation",
      "slice_sizes",       "start_indices",        "strides",         "window_dilations",
      "window_dimensions", "window_reversal",      "window_strides"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

void denseToArray(Attribute &a) {
  if (a.kind != AttrKind::kDenseElements || a.tensor.rank() != 1)
    return;
  DType t = a.tensor.dtype();
  int64_t n = a.tensor.numElements();
  std::vector<int64_t> v(static_cast<size_t>(n));
  if (t == DType::kI64) {
    for (int64_t i = 0; i < n; ++i)
      v[static_cast<size_t>(i)] = a.tensor.dataAs<int64_t>()[i];
  } else if (t == DType::kBool) {
    for (int64_t i = 0; i < n; ++i)
      v[static_cast<size_t>(i)] = a.tensor.data()[i] != 0;
  } else {
    return;
  }
  a = makeI64Array(std::move(v), t);
}

} // namespace

Status normaliseAttributes(Operation &op, const Module &m) {
  // Inherent attributes may be written in `<{...}>` or `{...}` (and pretty forms put
  // some in the trailing attr-dict); discardable ones are dialect-prefixed. Split by
  // name so every spelling gives the same Operation.
  std::vector<NamedAttribute> all = std::move(op.properties);
  all.insert(all.end(), std::make_move_iterator(op.attributes.begin()),
             std::make_move_iterator(op.attributes.end()));
  op.properties.clear();
  op.attributes.clear();
  auto by_name = [](const NamedAttribute &a, const NamedAttribute &b) { return a.name < b.name; };
  std::stable_sort(all.begin(), all.end(), by_name);
  for (size_t i = 1; i < all.size(); ++i)
    if (all[i].name == all[i - 1].name)
      return invalidArgument() << op.loc.toString() << ": error: duplicate attribute '"
                               << all[i].name << "' on '" << op.name << "'";
  for (NamedAttribute &a : all) {
    // arg_attrs / res_attrs holding only empty dictionaries say nothing: drop them.
    if (op.name == "func.func" && (a.name == "arg_attrs" || a.name == "res_attrs") &&
        a.value.kind == AttrKind::kArray &&
        std::all_of(a.value.elements.begin(), a.value.elements.end(), [](const Attribute &d) {
          return d.kind == AttrKind::kDictionary && d.fields.empty();
        }))
      continue;
    (a.name.find('.') == std::string::npos ? op.properties : op.attributes).push_back(std::move(a));
  }
  // Older printers spell integer-array properties as 1-D dense elements; make them
  // dense arrays like current StableHLO (which XLA also accepts).
  if (op.name.rfind("stablehlo.", 0) == 0)
    for (NamedAttribute &a : op.properties)
      if (isArrayProperty(a.name))
        denseToArray(a.value);
  // Defaults the pretty printers elide but the generic form spells out.
  if (op.name == "chlo.top_k" && !op.attr("is_stable")) {
    Attribute t;
    t.kind = AttrKind::kBool;
    t.scalar_type = DType::kBool;
    t.int_value = 1;
    auto at =
        std::lower_bound(op.properties.begin(), op.properties.end(), "is_stable",
                         [](const NamedAttribute &a, std::string_view n) { return a.name < n; });
    op.properties.insert(at, NamedAttribute{"is_stable", std::move(t)});
  }
  if (op.name == "func.func") {
    // Consumers rely on these (functionName, functionType); check them once here.
    const Attribute *name = op.attr("sym_name");
    const Attribute *type = op.attr("function_type");
    if (!name || name->kind != AttrKind::kString)
      return invalidArgument() << op.loc.toString() << ": error: 'func.func' needs a sym_name";
    if (!type || type->kind != AttrKind::kType || !type->type ||
        type->type->kind != TypeKind::kFunction)
      return invalidArgument() << op.loc.toString() << ": error: 'func.func' needs a function_type";
    if (op.regions.size() != 1)
      return invalidArgument() << op.loc.toString() << ": error: 'func.func' needs one region";
    const Region &body = op.regions[0];
    if (!body.blocks.empty()) {
      const std::vector<ValueId> &args = body.blocks[0].arguments;
      const std::vector<Type> &inputs = type->type->elements;
      bool same = args.size() == inputs.size();
      for (size_t i = 0; same && i < args.size(); ++i)
        same = m.value_types[static_cast<size_t>(args[i])] == inputs[i];
      if (!same)
        return invalidArgument() << op.loc.toString() << ": error: arguments of function '"
                                 << name->str << "' do not match its function_type";
    }
  }
  return Status::ok();
}

} // namespace rs::ir::detail
