//===- passes/refine_support.cc - Options, outcome, shared helpers ---------===//
//
// The refinement options of one size, the report's outcome text, and the helpers that
// the refine_*.cc files share (refine_shapes_impl.h).
//
//===----------------------------------------------------------------------===//
#include "passes/refine_shapes.h"

#include "passes/refine_shapes_impl.h"

#include <algorithm>

namespace rs::passes {
namespace detail {

StatusBuilder opError(const ir::Operation &op, const ir::Module &m) {
  StatusBuilder b(StatusCode::kInvalidArgument);
  const bool located = op.loc.line > 0 || op.loc.byte_offset >= 0;
  b << (located          ? op.loc.toString()
        : m.file.empty() ? std::string("<unknown>")
                         : m.file)
    << ": error: '" << op.name << "' op ";
  return b;
}

ir::Attribute i64Array(std::vector<int64_t> values) {
  ir::Attribute a;
  a.kind = ir::AttrKind::kDenseArray;
  a.scalar_type = DType::kI64;
  a.ints = std::move(values);
  return a;
}

bool isDynamic(const ir::Type &t) {
  return t.kind == ir::TypeKind::kTensor &&
         std::any_of(t.shape.begin(), t.shape.end(), [](int64_t d) { return d < 0; });
}

} // namespace detail

std::string RefineReport::outcome() const {
  if (!values_refined && !ops_folded && !ops_made_static && !assertions_removed &&
      !functions_cloned)
    return "nothing to refine";
  return "refined " + std::to_string(values_refined) + " value(s), folded " +
         std::to_string(ops_folded) + " op(s), made " + std::to_string(ops_made_static) +
         " op(s) static, removed " + std::to_string(assertions_removed) +
         " shape assertion(s), cloned " + std::to_string(functions_cloned) + " function(s)";
}

RefineOptions uniformRefinement(const ir::Operation &entry, int64_t size) {
  RefineOptions options;
  options.entry = std::string(ir::functionName(entry));
  bool leading = true;
  for (const ir::Type &declared : ir::functionType(entry).elements) {
    ir::Type t = declared;
    for (int64_t &d : t.shape)
      d = d < 0 ? size : d;
    leading = leading && t.isTensor() && t.rank() == 0 && isInteger(t.element);
    options.arg_types.push_back(std::move(t));
    options.dimension_values.push_back(leading ? std::optional<int64_t>(size) : std::nullopt);
  }
  return options;
}

} // namespace rs::passes
