//===- passes/properties.h - Editing an op's properties --------------------===//
//
// The property edits that passes share. Operation::properties is sorted by name (ir/ir.h),
// so printGeneric() prints a changed op as the parser reads it back.
// Thread safety: free functions over the op they are given.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"

#include <string_view>

namespace rs::passes {

/// Sets property `name` of `op` to `value` (replacing one of that name), keeping the list
/// sorted by name.
void setProperty(ir::Operation &op, std::string_view name, ir::Attribute value);

/// Removes property `name` of `op`, if present.
void eraseProperty(ir::Operation &op, std::string_view name);

} // namespace rs::passes
