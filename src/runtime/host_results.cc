//===- runtime/host_results.cc - Results written to pinned host memory ----===//
#include "runtime/host_results.h"

#include <algorithm>

namespace rs::runtime {
namespace {

constexpr std::string_view kPinnedHost = "pinned_host";

ir::Attribute stringAttr(std::string_view s) {
  ir::Attribute a;
  a.kind = ir::AttrKind::kString;
  a.str = std::string(s);
  return a;
}

ir::Attribute boolAttr(bool v) {
  ir::Attribute a;
  a.kind = ir::AttrKind::kBool;
  a.int_value = v ? 1 : 0;
  return a;
}

/// Sets `name` to `value` in `attrs` (kept sorted by name, as the parser leaves them).
void setAttr(std::vector<ir::NamedAttribute> &attrs, std::string_view name, ir::Attribute value) {
  for (ir::NamedAttribute &a : attrs)
    if (a.name == name) {
      a.value = std::move(value);
      return;
    }
  attrs.push_back({std::string(name), std::move(value)});
  std::sort(
      attrs.begin(), attrs.end(),
      [](const ir::NamedAttribute &a, const ir::NamedAttribute &b) { return a.name < b.name; });
}

/// The annotate_device_placement custom call on `value`, defining `result`.
ir::Operation placementCall(ir::ValueId value, ir::ValueId result, const ir::Location &loc) {
  ir::Operation op;
  op.name = "stablehlo.custom_call";
  op.operands = {value};
  op.results = {result};
  op.properties = {{"call_target_name", stringAttr("annotate_device_placement")},
                   {"has_side_effect", boolAttr(true)}};
  ir::Attribute placement;
  placement.kind = ir::AttrKind::kDictionary;
  placement.fields = {{"_xla_buffer_placement", stringAttr(kPinnedHost)}};
  op.attributes = {{"mhlo.frontend_attributes", std::move(placement)}};
  op.loc = loc;
  return op;
}

/// res_attrs of `func` with mhlo.memory_kind = "pinned_host" in each of `count` entries.
ir::Attribute pinnedResultAttrs(const ir::Operation &func, size_t count) {
  ir::Attribute attrs;
  attrs.kind = ir::AttrKind::kArray;
  if (const ir::Attribute *old = func.attr("res_attrs");
      old != nullptr && old->kind == ir::AttrKind::kArray && old->elements.size() == count)
    attrs = *old;
  attrs.elements.resize(count);
  for (ir::Attribute &entry : attrs.elements) {
    entry.kind = ir::AttrKind::kDictionary;
    setAttr(entry.fields, "mhlo.memory_kind", stringAttr(kPinnedHost));
  }
  return attrs;
}

} // namespace

std::optional<ir::Module> withResultsInHostMemory(const ir::Module &module,
                                                  std::string_view entry) {
  const ir::Operation *original = module.lookupFunction(entry);
  if (original == nullptr || original->regions.empty())
    return std::nullopt;
  const ir::Type &type = ir::functionType(*original);
  if (type.results.empty())
    return std::nullopt;
  for (const ir::Type &t : type.results)
    if (!t.isTensor())
      return std::nullopt;

  ir::Module placed = module;
  ir::Operation *func = nullptr;
  for (ir::Operation &op : placed.ops)
    if (op.name == "func.func" && ir::functionName(op) == entry)
      func = &op;
  for (ir::Block &block : func->regions.front().blocks) {
    if (block.ops.empty() || block.ops.back().name != "func.return")
      continue;
    std::vector<ir::Operation> calls;
    ir::Operation &ret = block.ops.back();
    for (ir::ValueId &v : ret.operands) {
      const ir::ValueId placed_value = static_cast<ir::ValueId>(placed.value_types.size());
      ir::Type value_type = placed.typeOf(v); // a copy: push_back may reallocate
      placed.value_types.push_back(std::move(value_type));
      calls.push_back(placementCall(v, placed_value, ret.loc));
      v = placed_value;
    }
    block.ops.insert(block.ops.end() - 1, std::make_move_iterator(calls.begin()),
                     std::make_move_iterator(calls.end()));
  }
  // res_attrs is a property of func.func in the generic form the backend compiles.
  std::erase_if(func->attributes,
                [](const ir::NamedAttribute &a) { return a.name == "res_attrs"; });
  setAttr(func->properties, "res_attrs", pinnedResultAttrs(*original, type.results.size()));
  return placed;
}

} // namespace rs::runtime
