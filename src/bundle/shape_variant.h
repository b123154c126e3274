//===- bundle/shape_variant.h - Routing tensors to a multi-shape variant ---===//
//
// A multi-shape bundle (reference-system.md §1) compiles its programs once per entry of the
// manifest's `input_shapes`: each entry (a ShapeVariant) gives a size to every variable (-1)
// axis letter of the executable inputs. A request is routed to the variant whose sizes equal
// its tensors' variable axes; tensors are row-major (the manifest letters reversed), so for
// `shape: "sn", dims: {s: -1}` the variable axis `s` is row-major axis 1 of [n, s].
//
// Text forms used in messages, the `model loaded` line and `bundle validate`: one variant is
// "s=16" (letters in order, ", " between them), a list is "[{s=8}, {s=16}]".
//
// Thread safety: plain functions over their arguments.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundle/manifest.h"
#include "support/tensor.h"

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rs::bundle {

/// "s=16", or "s=16, t=4" (letters in order).
std::string variantText(const ShapeVariant &variant);

/// "[{s=8}, {s=16}]".
std::string variantsText(const std::vector<ShapeVariant> &variants);

/// Whether row-major `shape` (of `spec`'s rank) has `variant`'s size on every variable axis
/// of `spec`. True for a spec without variable axes.
bool variantMatches(const TensorSpec &spec, const ShapeVariant &variant, const Shape &shape);

/// The index of the first manifest.input_shapes entry that every tensor of `inputs` matches:
/// the executable inputs in manifest order, ranks already checked (a shorter span is the
/// first inputs only, and only they are compared). nullopt when none does; 0 for a manifest
/// without input_shapes.
std::optional<size_t> findVariant(const Manifest &manifest, std::span<const Tensor> inputs);

} // namespace rs::bundle
