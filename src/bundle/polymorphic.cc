//===- bundle/polymorphic.cc - One shape-polymorphic model.mlir, refined ---===//
#include "bundle/polymorphic.h"

#include "bundle/shape_variant.h"
#include "passes/refine_shapes.h"

#include <sstream>

namespace rs::bundle {

std::vector<DynamicAxis> dynamicAxes(const ir::Module &module,
                                     const std::vector<TensorSpec> &inputs) {
  std::vector<DynamicAxis> out;
  const ir::Operation *main = module.lookupFunction("main");
  if (!main)
    return out;
  const ir::Type &fn = ir::functionType(*main);
  for (size_t i = 0; i < fn.elements.size(); ++i) {
    const ir::Type &arg = fn.elements[i];
    if (!arg.isTensor())
      continue;
    for (size_t a = 0; a < arg.shape.size(); ++a) {
      if (arg.shape[a] >= 0)
        continue;
      DynamicAxis axis;
      axis.argument = i;
      axis.axis = static_cast<int64_t>(a);
      if (i < inputs.size()) {
        axis.input = inputs[i].name;
        if (a < inputs[i].axes.size())
          axis.letter = inputs[i].axes[a].letter;
      }
      out.push_back(axis);
    }
  }
  return out;
}

std::string dynamicAxesText(const std::vector<DynamicAxis> &axes) {
  std::ostringstream os;
  for (size_t i = 0; i < axes.size(); ++i) {
    const DynamicAxis &a = axes[i];
    os << (i ? ", " : "");
    if (a.input.empty())
      os << "argument " << a.argument;
    else
      os << "input '" << a.input << "'";
    os << " axis " << a.axis;
    if (a.letter)
      os << " (" << a.letter << ")";
  }
  return os.str();
}

std::string refinedProgramName(const ProgramKey &key, bool multi_shape) {
  std::string suffix;
  if (multi_shape)
    suffix = "v" + std::to_string(key.variant);
  if (key.batch_size != 0)
    suffix += (suffix.empty() ? "b" : ".b") + std::to_string(key.batch_size);
  return suffix.empty() ? "model.mlir" : "model.mlir@" + suffix;
}

Result<std::vector<ProgramKey>> refinementKeys(const Manifest &m, const std::string &path) {
  if (m.batched() && m.compiled_batch_sizes.empty())
    return invalidArgument() << path << ": a shape-polymorphic program is refined once per "
                             << "batching.compiled_batch_sizes entry, but the manifest lists "
                             << "none";
  const size_t variants = m.input_shapes.empty() ? 1 : m.input_shapes.size();
  std::vector<ProgramKey> keys;
  for (size_t v = 0; v < variants; ++v) {
    if (!m.batched()) {
      keys.push_back({v, 0});
      continue;
    }
    for (int64_t size : m.compiled_batch_sizes)
      keys.push_back({v, size});
  }
  return keys;
}

Result<ir::Module> refineForProgram(const ir::Module &module, const std::string &path,
                                    const Manifest &m, const std::vector<Tensor> &weights,
                                    const ProgramKey &key) {
  std::ostringstream what;
  what << "refining for ";
  if (key.batch_size == 0)
    what << "the unbatched program";
  else
    what << "batch size " << key.batch_size;
  const ShapeVariant no_variant;
  const ShapeVariant &variant = m.input_shapes.empty() ? no_variant : m.input_shapes[key.variant];
  if (!m.input_shapes.empty())
    what << " (shape variant " << key.variant << " {" << variantText(variant) << "})";

  passes::RefineOptions options;
  options.entry = "main";
  for (const TensorSpec &spec : m.executable_inputs)
    options.arg_types.push_back(
        ir::Type::tensor(spec.dtype, spec.shapeForBatch(key.batch_size, variant)));
  for (const Tensor &w : weights)
    options.arg_types.push_back(ir::Type::tensor(w.dtype(), w.shape()));
  const ir::Operation *main = module.lookupFunction("main");
  if (!main)
    return invalidArgument() << path << ": no function named 'main'";
  const size_t arity = ir::functionType(*main).elements.size();
  if (arity != options.arg_types.size()) {
    auto count = [](size_t n, std::string_view noun) {
      return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
    };
    return invalidArgument() << path << ": main takes " << count(arity, "argument")
                             << " but the manifest has "
                             << count(m.executable_inputs.size(), "input")
                             << " and the weights file " << count(weights.size(), "weight") << " ("
                             << options.arg_types.size()
                             << " expected; dimension arguments are not supported)";
  }
  ir::Module refined = module;
  Result<passes::RefineReport> report = passes::refineShapes(refined, options);
  if (!report.isOk())
    return report.status().withPrefix(path + ": " + what.str());
  return refined;
}

} // namespace rs::bundle
