//===- passes/properties.cc - Editing an op's properties -------------------===//
#include "passes/properties.h"

#include <algorithm>

namespace rs::passes {

void setProperty(ir::Operation &op, std::string_view name, ir::Attribute value) {
  auto it =
      std::lower_bound(op.properties.begin(), op.properties.end(), name,
                       [](const ir::NamedAttribute &a, std::string_view n) { return a.name < n; });
  if (it != op.properties.end() && it->name == name) {
    it->value = std::move(value);
    return;
  }
  // An inherent attribute may have been written in the discardable dictionary of an
  // unusual spelling; the parser normalises, so only properties hold it.
  op.properties.insert(it, ir::NamedAttribute{std::string(name), std::move(value)});
}

void eraseProperty(ir::Operation &op, std::string_view name) {
  op.properties.erase(std::remove_if(op.properties.begin(), op.properties.end(),
                                     [&](const ir::NamedAttribute &a) { return a.name == name; }),
                      op.properties.end());
}

} // namespace rs::passes
