//===- ir/op_attributes.h - Typed reads of an op's attributes --------------===//
//
// The integer, integer-list and boolean attributes of an op, and the dimension numbers of
// stablehlo.convolution (#stablehlo.conv), gather (#stablehlo.gather), scatter
// (#stablehlo.scatter) and dot_general (#stablehlo.dot) decoded into plain structs. The
// verifier (ir/verify.h) checks what they hold; the backends read them to lay out the
// computation, so both decode an attribute the same way.
//
// Errors: InvalidArgument with text relative to the op ("is missing attribute 'dimensions'",
// "dimension_numbers lacks 'input_batch_dimension'"); callers prefix the op's location and
// name ("<loc>: error: 'stablehlo.reduce' op "). Thread safety: free functions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/ir.h"
#include "support/status.h"

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

namespace rs::ir {

/// Decodes a list of integers from an attribute of kind DenseArray (of integers),
/// DenseElements (any integer or bool element type) or Array of Integer. False, with `out`
/// unspecified, when the kind does not fit.
bool decodeIntList(const Attribute &a, std::vector<int64_t> &out);

/// The integer-list attribute `attr_name` of `op` (any kind decodeIntList takes).
/// Missing: "is missing attribute '<name>'"; another kind: "attribute '<name>' is not a
/// list of integers".
Result<std::vector<int64_t>> intListAttr(const Operation &op, std::string_view attr_name);
/// As above, `fallback` when the attribute is missing.
Result<std::vector<int64_t>> intListAttr(const Operation &op, std::string_view attr_name,
                                         std::vector<int64_t> fallback);
/// The integer attribute `attr_name`. Missing: "is missing attribute '<name>'"; another
/// kind: "attribute '<name>' is not an integer".
Result<int64_t> intAttr(const Operation &op, std::string_view attr_name);
/// As above, `fallback` when the attribute is missing.
Result<int64_t> intAttr(const Operation &op, std::string_view attr_name, int64_t fallback);
/// A bool attribute (BoolAttr, or a unit attribute for true); `fallback` when missing.
bool boolAttr(const Operation &op, std::string_view attr_name, bool fallback);

/// The reads above as members of an op's view, their errors prefixed by the view's
/// diagnostic: the base of the verifier's OpCheck (ir/verify_impl.h) and of the CPU
/// compiler's OpView (cpu/kernels/kernel.h), so both read an attribute and word its error
/// alike. `Derived` provides `const Operation &op() const` and `StatusBuilder error()
/// const`, the "<loc>: ... '<op>' op " prefix.
template <typename Derived> class OpAttributeReader {
public:
  Result<std::vector<int64_t>> intList(std::string_view attr_name) const {
    return prefixed(intListAttr(self().op(), attr_name));
  }
  Result<std::vector<int64_t>> intList(std::string_view attr_name,
                                       std::vector<int64_t> fallback) const {
    return prefixed(intListAttr(self().op(), attr_name, std::move(fallback)));
  }
  Result<int64_t> intAttr(std::string_view attr_name) const {
    return prefixed(ir::intAttr(self().op(), attr_name));
  }
  Result<int64_t> intAttr(std::string_view attr_name, int64_t fallback) const {
    return prefixed(ir::intAttr(self().op(), attr_name, fallback));
  }
  bool boolAttr(std::string_view attr_name, bool fallback) const {
    return ir::boolAttr(self().op(), attr_name, fallback);
  }
  /// `decoded` itself (a read of this file), or its error prefixed by error().
  template <typename T> Result<T> prefixed(Result<T> decoded) const {
    if (!decoded.isOk())
      return self().error() << decoded.status().message();
    return decoded;
  }

private:
  const Derived &self() const { return static_cast<const Derived &>(*this); }
};

/// True when `dims` holds distinct values in [0, rank).
bool validDims(std::span<const int64_t> dims, int64_t rank);

/// The dims of [0, rank) that no list of `taken` holds, increasing: dot_general's free dims,
/// gather's offset and batch dims, scatter's window and update-scatter dims.
std::vector<int64_t> complementDims(int64_t rank,
                                    std::initializer_list<std::span<const int64_t>> taken);

/// #stablehlo.conv of stablehlo.convolution's `dimension_numbers`.
struct ConvDimensionNumbers {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
};
/// Missing attribute: "is missing attribute 'dimension_numbers'"; a missing or mistyped
/// field: "dimension_numbers lacks '<field>'".
Result<ConvDimensionNumbers> convDimensionNumbers(const Operation &op);

/// stablehlo.convolution's dimension numbers and window attributes, a missing window
/// attribute at its default (strides and dilations 1, padding 0, no reversal, group
/// counts 1), sized by the spatial dims of the dimension numbers.
struct ConvAttributes {
  ConvDimensionNumbers dims;
  std::vector<int64_t> window_strides, padding, lhs_dilation, rhs_dilation, window_reversal;
  int64_t feature_group_count = 1, batch_group_count = 1;
};
/// convDimensionNumbers()' errors, and intListAttr()'s and intAttr()'s for the others.
Result<ConvAttributes> convAttributes(const Operation &op);

/// stablehlo.reduce_window's window: window_dimensions (required), window_strides,
/// base_dilations and window_dilations (default 1 per dim of an operand of `rank` dims)
/// and padding (default 0, two entries per dim).
struct WindowAttributes {
  std::vector<int64_t> dimensions, strides, base_dilations, window_dilations, padding;
};
/// intListAttr()'s errors.
Result<WindowAttributes> reduceWindowAttributes(const Operation &op, size_t rank);

/// #stablehlo.gather of stablehlo.gather's `dimension_numbers` (absent lists are empty,
/// an absent index_vector_dim is 0).
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, operand_batching_dims,
      start_indices_batching_dims, start_index_map;
  int64_t index_vector_dim = 0;
};
/// Missing attribute: "is missing attribute 'dimension_numbers'"; a field that is not a
/// list: "dimension_numbers field '<field>' is not a list".
Result<GatherDimensionNumbers> gatherDimensionNumbers(const Operation &op);

/// #stablehlo.scatter of stablehlo.scatter's `scatter_dimension_numbers` (absent lists are
/// empty, an absent index_vector_dim is 0).
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims, inserted_window_dims, input_batching_dims,
      scatter_indices_batching_dims, scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
};
/// Missing attribute: "is missing attribute 'scatter_dimension_numbers'"; a field that is
/// not a list: "scatter_dimension_numbers field '<field>' is not a list".
Result<ScatterDimensionNumbers> scatterDimensionNumbers(const Operation &op);

/// #stablehlo.dot of stablehlo.dot_general's `dot_dimension_numbers` (absent lists are
/// empty).
struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batching, rhs_batching, lhs_contracting, rhs_contracting;
};
/// Missing attribute: "is missing attribute 'dot_dimension_numbers'"; a field that is not
/// a list: "dot_dimension_numbers field '<field>' is not a list".
Result<DotDimensionNumbers> dotDimensionNumbers(const Operation &op);

} // namespace rs::ir
