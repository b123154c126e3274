//===- ir/vhlo_op_attrs.cc - VHLO op attributes to StableHLO's ------------===//
//
// The op-specific part of VhloLegalizeToStablehlo (vhlo-bytecode.md 4.3, 4.6, 4.7;
// stablehlo/transforms/VhloLegalizeToStablehlo.cpp, convertSpecial / implodeSpecial /
// convertDotAlgorithm / removeDefaults, and VhloToVersionPatterns.td for the defaults an
// upgrade fills in). The input is one op's VHLO attributes, each already converted by the
// generic rules (vhlo_attrs.cc); the output is the StableHLO op's attributes:
//   - integer-list tensors become dense arrays (array<i64: ...>, window_reversal
//     array<i1: ...>);
//   - dimension numbers fold into #stablehlo.conv / dot / gather / scatter structs, the
//     seven algorithm attributes into #stablehlo.dot_algorithm (absent when all none),
//     channel_id (and channel_type) into #stablehlo.channel_handle;
//   - true booleans that StableHLO spells as unit attributes become unit, strings that
//     name functions become symbol references;
//   - attributes equal to StableHLO's defaults are dropped, as its printer elides them.
// An attribute of a superseded op version that is absent takes the value the upgrade to
// the newest version gives it.
//
//===----------------------------------------------------------------------===//
#include "ir/vhlo_op_attrs_impl.h"

#include <algorithm>
#include <cstring>

namespace rs::ir::bc {
namespace {

Attribute makeStruct(std::string_view name, std::vector<NamedAttribute> fields) {
  Attribute s;
  s.kind = AttrKind::kStruct;
  s.dialect = "stablehlo";
  s.name = std::string(name);
  s.fields = std::move(fields);
  return s;
}

/// Folds the named dimension lists / integers into one struct; for dot, gather and
/// scatter, empty lists and an index_vector_dim of 0 (the defaults) are dropped, as MLIR
/// prints them.
Status foldStruct(Props &p, std::string_view struct_name, std::string_view attr_name,
                  std::initializer_list<std::string_view> fields, bool drop_empty) {
  std::vector<NamedAttribute> out;
  for (std::string_view f : fields) {
    Attribute *a = p.find(f);
    if (!a)
      continue; // an upgrade's default: an empty list
    Attribute v;
    if (a->kind == AttrKind::kInteger)
      RS_RETURN_IF_ERROR(p.takeInt(f, &v));
    else
      RS_RETURN_IF_ERROR(p.takeArray(f, &v));
    if (drop_empty && ((v.kind == AttrKind::kDenseArray && v.ints.empty()) ||
                       (f == "index_vector_dim" && v.int_value == 0)))
      continue;
    out.push_back({std::string(f), std::move(v)});
  }
  p.set(attr_name, makeStruct(struct_name, std::move(out)));
  return Status::ok();
}

bool isNoneType(const Attribute &a) {
  return a.kind == AttrKind::kType && a.type && a.type->kind == TypeKind::kOther &&
         a.type->text == "none";
}

Status convertDotGeneral(Props &p) {
  RS_RETURN_IF_ERROR(foldStruct(p, "dot", "dot_dimension_numbers",
                                {"lhs_batching_dimensions", "rhs_batching_dimensions",
                                 "lhs_contracting_dimensions", "rhs_contracting_dimensions"},
                                true));
  static const std::string_view kAlgorithm[] = {
      "lhs_precision_type",          "rhs_precision_type",  "accumulation_type",
      "lhs_component_count",         "rhs_component_count", "num_primitive_operations",
      "allow_imprecise_accumulation"};
  int none = 0, present = 0;
  for (std::string_view f : kAlgorithm)
    if (Attribute *a = p.find(f)) {
      ++present;
      none += isNoneType(*a);
    }
  if (present == 0 || none == present) { // dot_general_v1, or no algorithm
    for (std::string_view f : kAlgorithm)
      p.erase(f);
  } else if (none != 0 || present != 7) {
    return p.error("algorithm", "mixes none and set fields of the dot algorithm");
  } else {
    std::vector<NamedAttribute> fields;
    for (std::string_view f : kAlgorithm) {
      Attribute a = *p.take(f);
      if (a.kind == AttrKind::kInteger)
        a.scalar_type = DType::kI64;
      fields.push_back({std::string(f), std::move(a)});
    }
    p.set("algorithm", makeStruct("dot_algorithm", std::move(fields)));
  }
  p.dropIf(p.isDefaultPrecision("precision_config"), "precision_config");
  return Status::ok();
}

Status convertConvolution(Props &p, bool dynamic) {
  RS_RETURN_IF_ERROR(
      foldStruct(p, "conv", "dimension_numbers",
                 {"input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions",
                  "kernel_input_feature_dimension", "kernel_output_feature_dimension",
                  "kernel_spatial_dimensions", "output_batch_dimension", "output_feature_dimension",
                  "output_spatial_dimensions"},
                 false));
  RS_RETURN_IF_ERROR(
      p.toArrays({"window_strides", "lhs_dilation", "rhs_dilation", "window_reversal"}));
  p.dropIf(p.isSplat("window_strides", 1), "window_strides");
  p.dropIf(p.isSplat("lhs_dilation", 1), "lhs_dilation");
  p.dropIf(p.isSplat("rhs_dilation", 1), "rhs_dilation");
  p.dropIf(p.isSplat("window_reversal", 0), "window_reversal");
  if (dynamic)
    p.erase("padding"); // dynamic_conv_v1's attribute; v2 takes the padding operand
  else
    p.dropIf(p.isSplat("padding", 0), "padding");
  p.dropIf(p.isDefaultPrecision("precision_config"), "precision_config");
  return Status::ok();
}

/// channel_id (+ channel_type) -> channel_handle; dropped when the id is 0 and no type.
Status convertChannel(Props &p, bool with_type) {
  std::optional<Attribute> id = p.take("channel_id");
  std::optional<Attribute> type = with_type ? p.take("channel_type") : std::nullopt;
  if (!id)
    return Status::ok();
  if (id->kind != AttrKind::kInteger)
    return p.error("channel_id", "must be an integer");
  if (!with_type && id->int_value == 0)
    return Status::ok();
  Attribute handle;
  handle.kind = AttrKind::kInteger;
  handle.scalar_type = DType::kI64;
  handle.int_value = id->int_value;
  Attribute t = handle;
  t.int_value = 0;
  if (type) {
    if (type->kind != AttrKind::kInteger)
      return p.error("channel_type", "must be an integer");
    t.int_value = type->int_value;
  }
  p.set("channel_handle", makeStruct("channel_handle", {{"handle", handle}, {"type", t}}));
  return Status::ok();
}

const char kDefaultAccuracy[] = "#stablehlo.result_accuracy<atol = 0.000000e+00, rtol = "
                                "0.000000e+00, ulps = 0, mode = "
                                "#stablehlo.result_accuracy_mode<DEFAULT>>";

} // namespace

Status convertVhloAttributes(std::string_view op, std::string_view base,
                             std::vector<NamedAttribute> *attrs) {
  Props p(op, attrs);
  if (Attribute *a = p.find("result_accuracy"))
    p.dropIf(a->kind == AttrKind::kOpaque && a->str == kDefaultAccuracy, "result_accuracy");

  if (base == "broadcast")
    return p.toArrays({"broadcast_sizes"});
  if (base == "broadcast_in_dim")
    return p.toArrays({"broadcast_dimensions"});
  if (base == "dynamic_broadcast_in_dim") {
    RS_RETURN_IF_ERROR(p.toArrays(
        {"broadcast_dimensions", "known_expanding_dimensions", "known_nonexpanding_dimensions"}));
    p.dropIf(p.isEmptyList("known_expanding_dimensions"), "known_expanding_dimensions");
    p.dropIf(p.isEmptyList("known_nonexpanding_dimensions"), "known_nonexpanding_dimensions");
    return Status::ok();
  }
  if (base == "dynamic_slice")
    return p.toArrays({"slice_sizes"});
  if (base == "fft")
    return p.toArrays({"fft_length"});
  if (base == "map" || base == "reduce" || base == "reverse")
    return p.toArrays({"dimensions"});
  if (base == "pad")
    return p.toArrays({"edge_padding_low", "edge_padding_high", "interior_padding"});
  if (base == "slice")
    return p.toArrays({"start_indices", "limit_indices", "strides"});
  if (base == "transpose")
    return p.toArrays({"permutation"});
  if (base == "reduce_window") {
    RS_RETURN_IF_ERROR(
        p.toArrays({"window_dimensions", "window_strides", "base_dilations", "window_dilations"}));
    p.dropIf(p.isSplat("window_strides", 1), "window_strides");
    p.dropIf(p.isSplat("base_dilations", 1), "base_dilations");
    p.dropIf(p.isSplat("window_dilations", 1), "window_dilations");
    p.dropIf(p.isSplat("padding", 0), "padding");
    return Status::ok();
  }
  if (base == "select_and_scatter") {
    RS_RETURN_IF_ERROR(p.toArrays({"window_dimensions", "window_strides"}));
    p.dropIf(p.isSplat("window_strides", 1), "window_strides");
    p.dropIf(p.isSplat("padding", 0), "padding");
    return Status::ok();
  }
  if (base == "convolution" || base == "dynamic_conv")
    return convertConvolution(p, base == "dynamic_conv");
  if (base == "dot_general")
    return convertDotGeneral(p);
  if (base == "dot") {
    p.dropIf(p.isDefaultPrecision("precision_config"), "precision_config");
    return Status::ok();
  }
  if (base == "gather" || base == "dynamic_gather") {
    if (base == "gather")
      RS_RETURN_IF_ERROR(p.toArrays({"slice_sizes"}));
    RS_RETURN_IF_ERROR(
        foldStruct(p, "gather", "dimension_numbers",
                   {"offset_dims", "collapsed_slice_dims", "operand_batching_dims",
                    "start_indices_batching_dims", "start_index_map", "index_vector_dim"},
                   true));
    p.dropIf(p.isBool("indices_are_sorted", false), "indices_are_sorted");
    return Status::ok();
  }
  if (base == "scatter") {
    RS_RETURN_IF_ERROR(foldStruct(p, "scatter", "scatter_dimension_numbers",
                                  {"update_window_dims", "inserted_window_dims",
                                   "input_batching_dims", "scatter_indices_batching_dims",
                                   "scatter_dims_to_operand_dims", "index_vector_dim"},
                                  true));
    p.dropIf(p.isBool("indices_are_sorted", false), "indices_are_sorted");
    p.dropIf(p.isBool("unique_indices", false), "unique_indices");
    return Status::ok();
  }
  if (base == "send" || base == "recv") {
    RS_RETURN_IF_ERROR(convertChannel(p, true));
    p.dropIf(p.isBool("is_host_transfer", false), "is_host_transfer");
    p.dropIf(p.isEmptyList("source_target_pairs"), "source_target_pairs");
    return Status::ok();
  }
  if (base == "all_gather" || base == "all_reduce" || base == "reduce_scatter" ||
      base == "collective_reduce") {
    RS_RETURN_IF_ERROR(convertChannel(p, false));
    RS_RETURN_IF_ERROR(p.boolToUnit("use_global_device_ids"));
    return p.boolToUnit("has_dynamic_root");
  }
  if (base == "all_to_all" || base == "collective_permute")
    return convertChannel(p, false);
  if (base == "collective_broadcast") {
    RS_RETURN_IF_ERROR(convertChannel(p, false));
    return p.boolToUnit("has_dynamic_root");
  }
  if (base == "call")
    return p.toSymbol("callee");
  if (base == "composite") {
    RS_RETURN_IF_ERROR(p.toSymbol("decomposition"));
    p.dropIf(p.isInt("version", 0), "version");
    p.dropIf(p.isEmptyList("composite_attributes"), "composite_attributes");
    return Status::ok();
  }
  if (base == "custom_call") {
    if (Attribute *cc = p.find("called_computations")) {
      if (cc->kind != AttrKind::kArray)
        return p.error("called_computations", "must be an array of function names");
      for (Attribute &f : cc->elements) {
        if (f.kind != AttrKind::kString)
          return p.error("called_computations", "must be an array of function names");
        f.kind = AttrKind::kSymbolRef;
      }
    }
    p.dropIf(p.isBool("has_side_effect", false), "has_side_effect");
    p.dropIf(p.isString("backend_config", "") || p.isEmptyList("backend_config"), "backend_config");
    p.dropIf(p.isInt("api_version", 1), "api_version");
    p.dropIf(p.isEmptyList("called_computations"), "called_computations");
    if (p.isEmptyList("operand_layouts") && p.isEmptyList("result_layouts")) {
      p.erase("operand_layouts");
      p.erase("result_layouts");
    }
    p.dropIf(p.isEmptyList("output_operand_aliases"), "output_operand_aliases");
    p.dropIf(p.isEmptyList("result_tilings"), "result_tilings");
    return Status::ok();
  }
  if (base == "func") {
    p.dropIf(p.isString("sym_visibility", ""), "sym_visibility");
    p.dropIf(p.isEmptyList("arg_attrs"), "arg_attrs");
    p.dropIf(p.isEmptyList("res_attrs"), "res_attrs");
    return Status::ok();
  }
  if (base == "cholesky") {
    p.dropIf(p.isBool("lower", false), "lower");
    return Status::ok();
  }
  if (base == "compare") {
    p.dropIf(p.isEnum("compare_type", "NOTYPE"), "compare_type");
    return Status::ok();
  }
  if (base == "infeed") {
    p.dropIf(p.isString("infeed_config", ""), "infeed_config");
    p.dropIf(p.isEmptyList("layout"), "layout");
    return Status::ok();
  }
  if (base == "outfeed") {
    p.dropIf(p.isString("outfeed_config", ""), "outfeed_config");
    return Status::ok();
  }
  if (base == "sort") {
    p.dropIf(p.isInt("dimension", -1), "dimension");
    p.dropIf(p.isBool("is_stable", false), "is_stable");
    return Status::ok();
  }
  return Status::ok();
}

} // namespace rs::ir::bc
