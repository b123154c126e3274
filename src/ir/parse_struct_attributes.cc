//===- ir/parse_struct_attributes.cc - StableHLO parser: # attributes -----===//
//
// `#...` attributes: #stablehlo enums (`#stablehlo<precision DEFAULT>`) and structs (dot,
// gather, scatter, conv and its compact form, dot_algorithm, channel_handle,
// output_operand_alias) with their fields in MLIR's canonical order, alias uses, and
// everything else (#sdy...) as opaque text.
//
//===----------------------------------------------------------------------===//
#include "ir/parser_impl.h"

#include <algorithm>

namespace rs::ir::detail {
namespace {

/// Canonical field order of the #stablehlo structs MLIR prints (and the order the
/// pretty forms are expanded into).
const std::vector<std::string_view> *structFieldOrder(std::string_view name) {
  static const std::vector<std::string_view> kDot = {
      "lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
      "rhs_contracting_dimensions"};
  static const std::vector<std::string_view> kGather = {
      "offset_dims",           "collapsed_slice_dims",
      "operand_batching_dims", "start_indices_batching_dims",
      "start_index_map",       "index_vector_dim"};
  static const std::vector<std::string_view> kScatter = {
      "update_window_dims",           "inserted_window_dims",
      "input_batching_dims",          "scatter_indices_batching_dims",
      "scatter_dims_to_operand_dims", "index_vector_dim"};
  static const std::vector<std::string_view> kConv = {
      "input_batch_dimension",           "input_feature_dimension",
      "input_spatial_dimensions",        "kernel_input_feature_dimension",
      "kernel_output_feature_dimension", "kernel_spatial_dimensions",
      "output_batch_dimension",          "output_feature_dimension",
      "output_spatial_dimensions"};
  static const std::vector<std::string_view> kAlgorithm = {
      "lhs_precision_type",          "rhs_precision_type",  "accumulation_type",
      "lhs_component_count",         "rhs_component_count", "num_primitive_operations",
      "allow_imprecise_accumulation"};
  static const std::vector<std::string_view> kChannel = {"handle", "type"};
  static const std::vector<std::string_view> kAlias = {"output_tuple_indices", "operand_index",
                                                       "operand_tuple_indices"};
  static const std::vector<std::string_view> kRaggedDot = {
      "lhs_batching_dimensions",    "rhs_batching_dimensions", "lhs_contracting_dimensions",
      "rhs_contracting_dimensions", "lhs_ragged_dimensions",   "rhs_group_dimensions"};
  if (name == "ragged_dot")
    return &kRaggedDot;
  if (name == "dot")
    return &kDot;
  if (name == "gather")
    return &kGather;
  if (name == "scatter")
    return &kScatter;
  if (name == "conv")
    return &kConv;
  if (name == "dot_algorithm")
    return &kAlgorithm;
  if (name == "channel_handle")
    return &kChannel;
  if (name == "output_operand_alias")
    return &kAlias;
  return nullptr;
}

} // namespace

Status Parser::parseHashAttribute(Attribute *out) {
  size_t start = tok().pos;
  std::string_view name = tok().text.substr(1);
  if (!nextCharIs('<')) {
    auto it = attr_aliases_.find(tok().text);
    if (it == attr_aliases_.end())
      return errorAt(start, "undefined attribute alias '" + std::string(tok().text) + "'");
    *out = it->second;
    advance();
    return Status::ok();
  }
  auto opaque = [&]() -> Status {
    lex_.resetTo(start + 1 + name.size());
    advance(); // '<', the opener skipBalanced starts at
    std::string_view body;
    RS_RETURN_IF_ERROR(skipBalanced(&body));
    *out = Attribute();
    out->kind = AttrKind::kOpaque;
    out->str = std::string(src_.substr(start, body.data() + body.size() - (src_.data() + start)));
    return Status::ok();
  };
  if (name == "stablehlo" || name == "chlo") {
    advance();
    advance(); // '<'
    if (is(Tok::kBareId)) {
      std::string enum_name(tok().text);
      advance();
      if (is(Tok::kBareId)) {
        std::string value(tok().text);
        advance();
        if (is(Tok::kGreater)) {
          advance();
          out->kind = AttrKind::kEnum;
          out->dialect = std::string(name);
          out->name = std::move(enum_name);
          out->str = std::move(value);
          return Status::ok();
        }
      }
    }
    return opaque();
  }
  size_t dot = name.find('.');
  std::string_view dialect = name.substr(0, dot == std::string_view::npos ? 0 : dot);
  std::string_view struct_name = dot == std::string_view::npos ? "" : name.substr(dot + 1);
  bool known = (dialect == "stablehlo" && struct_name != "ragged_dot") ||
               (dialect == "chlo" && struct_name == "ragged_dot");
  if (known && structFieldOrder(struct_name)) {
    advance();
    advance(); // '<'
    RS_RETURN_IF_ERROR(parseStructFields(struct_name, out));
    out->dialect = std::string(dialect);
    return Status::ok();
  }
  return opaque();
}

Status Parser::parseConvCompact(Attribute *out) {
  // [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
  struct Side {
    std::vector<std::string> items;
  };
  Side sides[3];
  for (int s = 0; s < 3; ++s) {
    if (s == 1)
      RS_RETURN_IF_ERROR(expectKeyword("x"));
    if (s == 2)
      RS_RETURN_IF_ERROR(expect(Tok::kArrow, "'->'"));
    RS_RETURN_IF_ERROR(expect(Tok::kLSquare, "'['"));
    while (!is(Tok::kRSquare)) {
      if (!is(Tok::kBareId) && !is(Tok::kInteger))
        return errorExpected("convolution dimension label");
      if (sides[s].items.size() > 64)
        return errorAt(tok().pos, "too many convolution dimensions");
      sides[s].items.push_back(std::string(tok().text));
      advance();
      if (!consumeIf(Tok::kComma))
        break;
    }
    RS_RETURN_IF_ERROR(expect(Tok::kRSquare, "']'"));
  }
  const char *letters[3][2] = {{"b", "f"}, {"i", "o"}, {"b", "f"}};
  const char *names[3][3] = {
      {"input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions"},
      {"kernel_input_feature_dimension", "kernel_output_feature_dimension",
       "kernel_spatial_dimensions"},
      {"output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions"}};
  size_t num_spatial = sides[0].items.size() >= 2 ? sides[0].items.size() - 2 : 0;
  out->kind = AttrKind::kStruct;
  out->dialect = "stablehlo";
  out->name = "conv";
  for (int s = 0; s < 3; ++s) {
    const auto &items = sides[s].items;
    if (items.size() != num_spatial + 2)
      return errorAt(tok().pos, "convolution dimension numbers have mismatched ranks");
    int64_t a = -1, b = -1;
    std::vector<int64_t> spatial(num_spatial, -1);
    for (size_t p = 0; p < items.size(); ++p) {
      const std::string &it = items[p];
      int64_t pos = static_cast<int64_t>(p);
      if (it == letters[s][0] && a < 0) {
        a = pos;
      } else if (it == letters[s][1] && b < 0) {
        b = pos;
      } else {
        uint64_t k = 0;
        if (!parseUnsigned(it, &k) || k >= num_spatial || spatial[k] >= 0)
          return errorAt(tok().pos, "invalid convolution dimension label '" + it + "'");
        spatial[k] = pos;
      }
    }
    if (a < 0 || b < 0)
      return errorAt(tok().pos, "convolution dimension numbers lack a batch/feature label");
    out->fields.push_back({names[s][0], makeInt(a)});
    out->fields.push_back({names[s][1], makeInt(b)});
    out->fields.push_back({names[s][2], makeI64Array(std::move(spatial))});
  }
  return Status::ok();
}

Status Parser::parseStructFields(std::string_view struct_name, Attribute *out) {
  *out = Attribute();
  out->kind = AttrKind::kStruct;
  out->dialect = "stablehlo";
  out->name = std::string(struct_name);
  if (struct_name == "conv" && is(Tok::kLSquare)) {
    RS_RETURN_IF_ERROR(parseConvCompact(out));
    return expect(Tok::kGreater, "'>'");
  }
  if (struct_name == "conv")
    consumeKeyword("raw");
  while (!is(Tok::kGreater)) {
    if (!is(Tok::kBareId))
      return errorExpected("struct field name");
    NamedAttribute f;
    f.name = std::string(tok().text);
    advance();
    RS_RETURN_IF_ERROR(expect(Tok::kEqual, "'='"));
    if (is(Tok::kLSquare)) {
      std::vector<int64_t> v;
      RS_RETURN_IF_ERROR(parseI64List(&v));
      f.value = makeI64Array(std::move(v));
    } else if (is(Tok::kInteger) || is(Tok::kMinus)) {
      int64_t v = 0;
      RS_RETURN_IF_ERROR(parseSignedInteger(&v));
      f.value = makeInt(v);
    } else {
      RS_RETURN_IF_ERROR(parseAttribute(&f.value));
    }
    for (const NamedAttribute &g : out->fields)
      if (g.name == f.name)
        return errorAt(tok().pos, "duplicate field '" + f.name + "'");
    out->fields.push_back(std::move(f));
    if (!consumeIf(Tok::kComma))
      break;
  }
  RS_RETURN_IF_ERROR(expect(Tok::kGreater, "'>'"));
  // Canonical form: known fields in MLIR's order (unknown ones after, as written);
  // empty dimension lists of dot/gather/scatter and an index_vector_dim of 0 dropped,
  // as MLIR prints them (0 is the field's default).
  const std::vector<std::string_view> *order = structFieldOrder(struct_name);
  auto rank = [&](const NamedAttribute &f) {
    auto it = std::find(order->begin(), order->end(), f.name);
    return static_cast<size_t>(it - order->begin());
  };
  std::stable_sort(
      out->fields.begin(), out->fields.end(),
      [&](const NamedAttribute &a, const NamedAttribute &b) { return rank(a) < rank(b); });
  if (struct_name == "dot" || struct_name == "gather" || struct_name == "scatter")
    out->fields.erase(
        std::remove_if(out->fields.begin(), out->fields.end(),
                       [](const NamedAttribute &f) {
                         return (f.value.kind == AttrKind::kDenseArray && f.value.ints.empty()) ||
                                (f.name == "index_vector_dim" &&
                                 f.value.kind == AttrKind::kInteger && f.value.int_value == 0);
                       }),
        out->fields.end());
  return Status::ok();
}

} // namespace rs::ir::detail
