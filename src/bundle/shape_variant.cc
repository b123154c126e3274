//===- bundle/shape_variant.cc - Routing tensors to a multi-shape variant --===//
#include "bundle/shape_variant.h"

namespace rs::bundle {

std::string variantText(const ShapeVariant &variant) {
  std::string text;
  for (const auto &[letter, size] : variant) {
    if (!text.empty())
      text += ", ";
    text += letter;
    text += '=' + std::to_string(size);
  }
  return text;
}

std::string variantsText(const std::vector<ShapeVariant> &variants) {
  std::string text = "[";
  for (size_t i = 0; i < variants.size(); ++i)
    text += (i ? ", {" : "{") + variantText(variants[i]) + "}";
  return text + "]";
}

bool variantMatches(const TensorSpec &spec, const ShapeVariant &variant, const Shape &shape) {
  for (size_t d = 0; d < spec.axes.size() && d < shape.size(); ++d) {
    const Dim &axis = spec.axes[d];
    if (axis.kind != DimKind::kVariable)
      continue;
    auto it = variant.find(axis.letter);
    if (it == variant.end() || it->second != shape[d])
      return false;
  }
  return true;
}

std::optional<size_t> findVariant(const Manifest &manifest, std::span<const Tensor> inputs) {
  if (manifest.input_shapes.empty())
    return 0;
  const std::vector<TensorSpec> &specs = manifest.executable_inputs;
  for (size_t v = 0; v < manifest.input_shapes.size(); ++v) {
    bool all = true;
    for (size_t i = 0; all && i < specs.size() && i < inputs.size(); ++i)
      all = variantMatches(specs[i], manifest.input_shapes[v], inputs[i].shape());
    if (all)
      return v;
  }
  return std::nullopt;
}

} // namespace rs::bundle
