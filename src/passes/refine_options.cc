//===- passes/refine_options.cc - Uniform refinement options, the outcome --===//
#include "passes/refine_shapes.h"

namespace rs::passes {

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
