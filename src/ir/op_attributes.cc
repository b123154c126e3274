//===- ir/op_attributes.cc - Typed reads of an op's attributes -------------===//
#include "ir/op_attributes.h"

#include "support/integer_element.h"
#include "support/tensor.h"

#include <algorithm>

namespace rs::ir {

bool decodeIntList(const Attribute &a, std::vector<int64_t> &out) {
  out.clear();
  switch (a.kind) {
  case AttrKind::kDenseArray:
    if (!a.floats.empty())
      return false;
    out = a.ints;
    return true;
  case AttrKind::kDenseElements: {
    const Tensor &t = a.tensor;
    if (!isInteger(t.dtype()) && t.dtype() != DType::kBool)
      return false;
    const int64_t n = t.numElements(), size = dtypeSize(t.dtype());
    for (int64_t i = 0; i < n; ++i)
      out.push_back(readIntegerElement(t.dtype(), t.data() + i * size));
    return true;
  }
  case AttrKind::kArray:
    for (const Attribute &e : a.elements) {
      if (e.kind != AttrKind::kInteger)
        return false;
      out.push_back(e.int_value);
    }
    return true;
  default: return false;
  }
}

Result<std::vector<int64_t>> intListAttr(const Operation &op, std::string_view attr_name) {
  const Attribute *a = op.attr(attr_name);
  if (!a)
    return invalidArgument() << "is missing attribute '" << attr_name << "'";
  std::vector<int64_t> out;
  if (!decodeIntList(*a, out))
    return invalidArgument() << "attribute '" << attr_name << "' is not a list of integers";
  return out;
}

Result<std::vector<int64_t>> intListAttr(const Operation &op, std::string_view attr_name,
                                         std::vector<int64_t> fallback) {
  if (!op.attr(attr_name))
    return fallback;
  return intListAttr(op, attr_name);
}

Result<int64_t> intAttr(const Operation &op, std::string_view attr_name) {
  const Attribute *a = op.attr(attr_name);
  if (!a)
    return invalidArgument() << "is missing attribute '" << attr_name << "'";
  if (a->kind != AttrKind::kInteger)
    return invalidArgument() << "attribute '" << attr_name << "' is not an integer";
  return a->int_value;
}

Result<int64_t> intAttr(const Operation &op, std::string_view attr_name, int64_t fallback) {
  if (!op.attr(attr_name))
    return fallback;
  return intAttr(op, attr_name);
}

bool boolAttr(const Operation &op, std::string_view attr_name, bool fallback) {
  const Attribute *a = op.attr(attr_name);
  if (!a)
    return fallback;
  if (a->kind == AttrKind::kUnit)
    return true;
  return a->int_value != 0;
}

bool validDims(std::span<const int64_t> dims, int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[static_cast<size_t>(d)])
      return false;
    seen[static_cast<size_t>(d)] = true;
  }
  return true;
}

std::vector<int64_t> complementDims(int64_t rank,
                                    std::initializer_list<std::span<const int64_t>> taken) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (std::none_of(taken.begin(), taken.end(), [d](std::span<const int64_t> dims) {
          return std::find(dims.begin(), dims.end(), d) != dims.end();
        }))
      out.push_back(d);
  return out;
}

namespace {

/// The struct attribute `attr_name` of `op`, or InvalidArgument "is missing attribute".
Result<const Attribute *> structAttr(const Operation &op, std::string_view attr_name) {
  const Attribute *a = op.attr(attr_name);
  if (!a || a->kind != AttrKind::kStruct)
    return invalidArgument() << "is missing attribute '" << attr_name << "'";
  return a;
}

/// Reads the optional list fields of a dimension-numbers struct (absent: empty).
class OptionalLists {
public:
  OptionalLists(const Attribute &dn, std::string_view attr_name) : dn_(dn), attr_name_(attr_name) {}
  Status read(const char *field, std::vector<int64_t> &out) const {
    out.clear();
    if (const Attribute *f = dn_.field(field); f && !decodeIntList(*f, out))
      return invalidArgument() << attr_name_ << " field '" << field << "' is not a list";
    return Status::ok();
  }
  int64_t integer(const char *field) const {
    const Attribute *f = dn_.field(field);
    return f && f->kind == AttrKind::kInteger ? f->int_value : 0;
  }

private:
  const Attribute &dn_;
  std::string_view attr_name_;
};

} // namespace

Result<ConvDimensionNumbers> convDimensionNumbers(const Operation &op) {
  RS_ASSIGN_OR_RETURN(const Attribute *dn, structAttr(op, "dimension_numbers"));
  auto scalar = [&](const char *name, int64_t &x) -> Status {
    const Attribute *f = dn->field(name);
    if (!f || f->kind != AttrKind::kInteger)
      return invalidArgument() << "dimension_numbers lacks '" << name << "'";
    x = f->int_value;
    return Status::ok();
  };
  auto list = [&](const char *name, std::vector<int64_t> &x) -> Status {
    const Attribute *f = dn->field(name);
    if (!f || !decodeIntList(*f, x))
      return invalidArgument() << "dimension_numbers lacks '" << name << "'";
    return Status::ok();
  };
  ConvDimensionNumbers d;
  RS_RETURN_IF_ERROR(scalar("input_batch_dimension", d.input_batch));
  RS_RETURN_IF_ERROR(scalar("input_feature_dimension", d.input_feature));
  RS_RETURN_IF_ERROR(list("input_spatial_dimensions", d.input_spatial));
  RS_RETURN_IF_ERROR(scalar("kernel_input_feature_dimension", d.kernel_input_feature));
  RS_RETURN_IF_ERROR(scalar("kernel_output_feature_dimension", d.kernel_output_feature));
  RS_RETURN_IF_ERROR(list("kernel_spatial_dimensions", d.kernel_spatial));
  RS_RETURN_IF_ERROR(scalar("output_batch_dimension", d.output_batch));
  RS_RETURN_IF_ERROR(scalar("output_feature_dimension", d.output_feature));
  RS_RETURN_IF_ERROR(list("output_spatial_dimensions", d.output_spatial));
  return d;
}

Result<ConvAttributes> convAttributes(const Operation &op) {
  ConvAttributes a;
  RS_ASSIGN_OR_RETURN(a.dims, convDimensionNumbers(op));
  const size_t s = a.dims.input_spatial.size();
  RS_ASSIGN_OR_RETURN(a.window_strides,
                      intListAttr(op, "window_strides", std::vector<int64_t>(s, 1)));
  RS_ASSIGN_OR_RETURN(a.padding, intListAttr(op, "padding", std::vector<int64_t>(2 * s, 0)));
  RS_ASSIGN_OR_RETURN(a.lhs_dilation, intListAttr(op, "lhs_dilation", std::vector<int64_t>(s, 1)));
  RS_ASSIGN_OR_RETURN(a.rhs_dilation, intListAttr(op, "rhs_dilation", std::vector<int64_t>(s, 1)));
  RS_ASSIGN_OR_RETURN(a.window_reversal,
                      intListAttr(op, "window_reversal", std::vector<int64_t>(s, 0)));
  RS_ASSIGN_OR_RETURN(a.feature_group_count, intAttr(op, "feature_group_count", 1));
  RS_ASSIGN_OR_RETURN(a.batch_group_count, intAttr(op, "batch_group_count", 1));
  return a;
}

Result<WindowAttributes> reduceWindowAttributes(const Operation &op, size_t rank) {
  WindowAttributes w;
  RS_ASSIGN_OR_RETURN(w.dimensions, intListAttr(op, "window_dimensions"));
  RS_ASSIGN_OR_RETURN(w.strides, intListAttr(op, "window_strides", std::vector<int64_t>(rank, 1)));
  RS_ASSIGN_OR_RETURN(w.base_dilations,
                      intListAttr(op, "base_dilations", std::vector<int64_t>(rank, 1)));
  RS_ASSIGN_OR_RETURN(w.window_dilations,
                      intListAttr(op, "window_dilations", std::vector<int64_t>(rank, 1)));
  RS_ASSIGN_OR_RETURN(w.padding, intListAttr(op, "padding", std::vector<int64_t>(2 * rank, 0)));
  return w;
}

Result<GatherDimensionNumbers> gatherDimensionNumbers(const Operation &op) {
  RS_ASSIGN_OR_RETURN(const Attribute *dn, structAttr(op, "dimension_numbers"));
  const OptionalLists lists(*dn, "dimension_numbers");
  GatherDimensionNumbers d;
  RS_RETURN_IF_ERROR(lists.read("offset_dims", d.offset_dims));
  RS_RETURN_IF_ERROR(lists.read("collapsed_slice_dims", d.collapsed_slice_dims));
  RS_RETURN_IF_ERROR(lists.read("operand_batching_dims", d.operand_batching_dims));
  RS_RETURN_IF_ERROR(lists.read("start_indices_batching_dims", d.start_indices_batching_dims));
  RS_RETURN_IF_ERROR(lists.read("start_index_map", d.start_index_map));
  d.index_vector_dim = lists.integer("index_vector_dim");
  return d;
}

Result<ScatterDimensionNumbers> scatterDimensionNumbers(const Operation &op) {
  RS_ASSIGN_OR_RETURN(const Attribute *dn, structAttr(op, "scatter_dimension_numbers"));
  const OptionalLists lists(*dn, "scatter_dimension_numbers");
  ScatterDimensionNumbers d;
  RS_RETURN_IF_ERROR(lists.read("update_window_dims", d.update_window_dims));
  RS_RETURN_IF_ERROR(lists.read("inserted_window_dims", d.inserted_window_dims));
  RS_RETURN_IF_ERROR(lists.read("input_batching_dims", d.input_batching_dims));
  RS_RETURN_IF_ERROR(lists.read("scatter_indices_batching_dims", d.scatter_indices_batching_dims));
  RS_RETURN_IF_ERROR(lists.read("scatter_dims_to_operand_dims", d.scatter_dims_to_operand_dims));
  d.index_vector_dim = lists.integer("index_vector_dim");
  return d;
}

Result<DotDimensionNumbers> dotDimensionNumbers(const Operation &op) {
  RS_ASSIGN_OR_RETURN(const Attribute *dn, structAttr(op, "dot_dimension_numbers"));
  const OptionalLists lists(*dn, "dot_dimension_numbers");
  DotDimensionNumbers d;
  RS_RETURN_IF_ERROR(lists.read("lhs_batching_dimensions", d.lhs_batching));
  RS_RETURN_IF_ERROR(lists.read("rhs_batching_dimensions", d.rhs_batching));
  RS_RETURN_IF_ERROR(lists.read("lhs_contracting_dimensions", d.lhs_contracting));
  RS_RETURN_IF_ERROR(lists.read("rhs_contracting_dimensions", d.rhs_contracting));
  return d;
}

} // namespace rs::ir
