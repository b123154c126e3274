//===- ir/pretty_ops.cc - StableHLO parser: table-driven pretty forms -----===//
//
// Most pretty forms share one shape: operands and `key = value` items separated by
// commas, an optional attr-dict, then `: types`:
//   stablehlo.add %0, %1 : tensor<4xf32>
//   stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<16xf32>) -> tensor<4x16xf32>
//   stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT,
//       DEFAULT] : (...) -> ...
// A per-op table maps each keyword to the generic property it stands for (property
// names as MLIR's generic printer spells them). Ops with their own syntax dispatch to
// pretty_ops_special.cc and pretty_ops_regions.cc.
//
//===----------------------------------------------------------------------===//
#include "ir/parser_impl.h"

#include <algorithm>
#include <map>

namespace rs::ir::detail {
namespace {

const std::vector<ItemSpec> *itemsFor(std::string_view op) {
  static const std::map<std::string_view, std::vector<ItemSpec>> kTable = {
      {"stablehlo.broadcast_in_dim", {{"dims", "broadcast_dimensions", ItemKind::kI64Array}}},
      {"stablehlo.dynamic_broadcast_in_dim",
       {{"dims", "broadcast_dimensions", ItemKind::kI64Array},
        {"known_expanding_dimensions", "known_expanding_dimensions", ItemKind::kI64Array},
        {"known_nonexpanding_dimensions", "known_nonexpanding_dimensions", ItemKind::kI64Array}}},
      {"stablehlo.broadcast", {{"sizes", "broadcast_sizes", ItemKind::kI64Array}}},
      {"stablehlo.transpose", {{"dims", "permutation", ItemKind::kI64Array}}},
      {"stablehlo.reverse", {{"dims", "dimensions", ItemKind::kI64Array}}},
      {"stablehlo.concatenate", {{"dim", "dimension", ItemKind::kI64}}},
      {"stablehlo.iota", {{"dim", "iota_dimension", ItemKind::kI64}}},
      {"stablehlo.dynamic_iota", {{"dim", "iota_dimension", ItemKind::kI64}}},
      {"stablehlo.get_dimension_size", {{"dim", "dimension", ItemKind::kI64}}},
      {"stablehlo.set_dimension_size", {{"dim", "dimension", ItemKind::kI64}}},
      {"stablehlo.dynamic_slice", {{"sizes", "slice_sizes", ItemKind::kI64Array}}},
      {"stablehlo.pad",
       {{"low", "edge_padding_low", ItemKind::kI64Array},
        {"high", "edge_padding_high", ItemKind::kI64Array},
        {"interior", "interior_padding", ItemKind::kI64Array}}},
      {"stablehlo.reduce_precision", {{"format", "", ItemKind::kFormat}}},
      {"stablehlo.dot_general",
       {{"batching_dims", "batching_dimensions", ItemKind::kDimsPair},
        {"contracting_dims", "contracting_dimensions", ItemKind::kDimsPair},
        {"precision", "precision_config", ItemKind::kPrecision},
        {"algorithm", "algorithm", ItemKind::kAlgorithm}}},
      {"stablehlo.dot", {{"precision", "precision_config", ItemKind::kPrecision}}},
      {"stablehlo.rng_bit_generator",
       {{"algorithm", "rng_algorithm", ItemKind::kEnum, "rng_algorithm"}}},
      {"stablehlo.rng",
       {{"distribution", "rng_distribution", ItemKind::kEnum, "rng_distribution"}}},
      {"stablehlo.fft",
       {{"type", "fft_type", ItemKind::kEnum, "fft_type"},
        {"length", "fft_length", ItemKind::kI64Array}}},
      {"stablehlo.cholesky", {{"lower", "lower", ItemKind::kBool}}},
      {"stablehlo.einsum", {{"config", "einsum_config", ItemKind::kString}}},
      {"stablehlo.unary_einsum", {{"config", "einsum_config", ItemKind::kString}}},
  };
  auto it = kTable.find(op);
  return it == kTable.end() ? nullptr : &it->second;
}

} // namespace

Status Parser::parseTrailingAttrDict(OpState &st) {
  if (isKeyword("attributes") && peek().kind == Tok::kLBrace)
    advance();
  if (is(Tok::kLBrace))
    return parseAttrDict(&st.op.attributes);
  return Status::ok();
}

Status Parser::parseOperand(OpState &st) {
  ValueId v = 0;
  RS_RETURN_IF_ERROR(parseValueUse(&v));
  st.op.operands.push_back(v);
  return Status::ok();
}

Status Parser::parseOpaqueAngle(std::string_view prefix, Attribute *out) {
  std::string_view body;
  RS_RETURN_IF_ERROR(skipBalanced(&body));
  out->kind = AttrKind::kOpaque;
  out->str = std::string(prefix) + std::string(body);
  return Status::ok();
}

Status Parser::finishOp(OpState &st) {
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  TypeSection ts;
  RS_RETURN_IF_ERROR(parseTypeSection(&ts));
  return assignResultTypes(st, ts);
}

namespace {

/// dot_general's `batching_dims` and `contracting_dims` items as its #stablehlo.dot
/// property, fields in MLIR's order (an empty pair left out).
void addDotDimensionNumbers(Operation &op, std::vector<NamedAttribute> &dot_fields) {
  static const char *kOrder[] = {"lhs_batching_dimensions", "rhs_batching_dimensions",
                                 "lhs_contracting_dimensions", "rhs_contracting_dimensions"};
  Attribute dn;
  dn.kind = AttrKind::kStruct;
  dn.dialect = "stablehlo";
  dn.name = "dot";
  for (const char *name : kOrder)
    for (NamedAttribute &f : dot_fields)
      if (f.name == name && !f.value.ints.empty())
        dn.fields.push_back(std::move(f));
  op.properties.push_back({"dot_dimension_numbers", std::move(dn)});
}

} // namespace

Status Parser::parseFormatItem(OpState &st) {
  std::string_view f = is(Tok::kBareId) ? tok().text : std::string_view();
  size_t m = f.find('m');
  int64_t e = 0, mb = 0;
  bool ok = f.size() >= 4 && f[0] == 'e' && m != std::string_view::npos && m > 1 &&
            m + 1 < f.size() && f.size() < 12;
  for (size_t i = 1; ok && i < f.size(); ++i) {
    if (i == m)
      continue;
    ok = f[i] >= '0' && f[i] <= '9';
    (i < m ? e : mb) = (i < m ? e : mb) * 10 + (f[i] - '0');
  }
  if (!ok)
    return errorExpected("format like e5m10");
  advance();
  st.op.properties.push_back({"exponent_bits", makeInt(e, DType::kI32)});
  st.op.properties.push_back({"mantissa_bits", makeInt(mb, DType::kI32)});
  return Status::ok();
}

Status Parser::parseItem(const ItemSpec &item, OpState &st,
                         std::vector<NamedAttribute> *dot_fields) {
  std::string prop(item.prop);
  Attribute a;
  switch (item.kind) {
  case ItemKind::kI64Array:
    a.kind = AttrKind::kDenseArray;
    a.scalar_type = DType::kI64;
    RS_RETURN_IF_ERROR(parseI64List(&a.ints));
    break;
  case ItemKind::kI64: {
    int64_t v = 0;
    RS_RETURN_IF_ERROR(parseSignedInteger(&v));
    a = makeInt(v);
    break;
  }
  case ItemKind::kEnum:
    if (!is(Tok::kBareId))
      return errorExpected("enum value");
    a = makeEnum(item.extra, tok().text);
    advance();
    break;
  case ItemKind::kPrecision:
    a.kind = AttrKind::kArray;
    RS_RETURN_IF_ERROR(expect(Tok::kLSquare, "'['"));
    while (is(Tok::kBareId)) {
      a.elements.push_back(makeEnum("precision", tok().text));
      advance();
      if (!consumeIf(Tok::kComma))
        break;
    }
    RS_RETURN_IF_ERROR(expect(Tok::kRSquare, "']'"));
    break;
  case ItemKind::kDimsPair: {
    Attribute lhs, rhs;
    lhs.kind = rhs.kind = AttrKind::kDenseArray;
    lhs.scalar_type = rhs.scalar_type = DType::kI64;
    RS_RETURN_IF_ERROR(parseI64List(&lhs.ints));
    RS_RETURN_IF_ERROR(expectKeyword("x"));
    RS_RETURN_IF_ERROR(parseI64List(&rhs.ints));
    dot_fields->push_back({"lhs_" + prop, std::move(lhs)});
    dot_fields->push_back({"rhs_" + prop, std::move(rhs)});
    return Status::ok();
  }
  case ItemKind::kAlgorithm:
    RS_RETURN_IF_ERROR(expect(Tok::kLess, "'<'"));
    RS_RETURN_IF_ERROR(parseStructFields("dot_algorithm", &a));
    break;
  case ItemKind::kFormat: return parseFormatItem(st);
  case ItemKind::kBool:
    if (!isKeyword("true") && !isKeyword("false"))
      return errorExpected("true or false");
    a.kind = AttrKind::kBool;
    a.scalar_type = DType::kBool;
    a.int_value = isKeyword("true");
    advance();
    break;
  case ItemKind::kString: RS_RETURN_IF_ERROR(expectAttribute(Tok::kString, "string", &a)); break;
  case ItemKind::kAttr: RS_RETURN_IF_ERROR(parseItemValue(&a)); break;
  }
  st.op.properties.push_back({std::move(prop), std::move(a)});
  return Status::ok();
}

Status Parser::parseSimpleOp(OpState &st) {
  Operation &op = st.op;
  const std::vector<ItemSpec> *spec = itemsFor(op.name);
  std::vector<NamedAttribute> dot_fields;
  if (is(Tok::kValueId) || (is(Tok::kBareId) && peek().kind == Tok::kEqual)) {
    while (true) {
      if (is(Tok::kValueId)) {
        RS_RETURN_IF_ERROR(parseOperand(st));
      } else if (is(Tok::kBareId) && peek().kind == Tok::kEqual) {
        std::string_view key = tok().text;
        size_t key_pos = tok().pos;
        ItemSpec generic{key, key, ItemKind::kAttr};
        const ItemSpec *item = &generic;
        if (spec) {
          item = nullptr;
          for (const ItemSpec &s : *spec)
            if (s.key == key)
              item = &s;
          if (!item)
            return errorAt(key_pos,
                           "unknown keyword '" + std::string(key) + "' in '" + op.name + "'");
        }
        advance();
        advance(); // '='
        RS_RETURN_IF_ERROR(parseItem(*item, st, &dot_fields));
      } else {
        return errorExpected("operand or attribute");
      }
      if (!consumeIf(Tok::kComma))
        break;
    }
  }
  if (op.name == "stablehlo.dot_general")
    addDotDimensionNumbers(op, dot_fields);
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  if (consumeIf(Tok::kColon)) {
    TypeSection ts;
    RS_RETURN_IF_ERROR(parseTypeSection(&ts));
    return assignResultTypes(st, ts);
  }
  if (!op.operands.empty() || st.num_results > 0)
    return errorExpected("':'");
  return Status::ok();
}

Status Parser::parsePrettyOp(std::string_view name, OpState &st) {
  using Handler = Status (Parser::*)(OpState &);
  static const std::map<std::string_view, Handler> kSpecial = {
      {"func.func", &Parser::parseFuncOp},
      {"func.call", &Parser::parseCallOp},
      {"stablehlo.while", &Parser::parseWhileOp},
      {"stablehlo.reduce", &Parser::parseReduceOp},
      {"stablehlo.convolution", &Parser::parseConvolutionOp},
      {"stablehlo.dynamic_conv", &Parser::parseConvolutionOp},
      {"stablehlo.slice", &Parser::parseSliceOp},
      {"stablehlo.compare", &Parser::parseCompareOp},
      {"stablehlo.custom_call", &Parser::parseCustomCallOp},
      {"stablehlo.composite", &Parser::parseCompositeOp},
      {"stablehlo.constant", &Parser::parseConstantOp},
      {"stablehlo.get_tuple_element", &Parser::parseGetTupleElementOp},
      {"chlo.top_k", &Parser::parseTopKOp},
      {"chlo.scan", &Parser::parseScanOp},
      {"sdy.mesh", &Parser::parseSdyMeshOp},
      {"sdy.constant", &Parser::parseConstantOp},
      {"sdy.sharding_constraint", &Parser::parseShardingConstraintOp},
      {"arith.constant", &Parser::parseConstantOp},
      {"check.expect_eq_const", &Parser::parseCheckConstOp},
      {"check.expect_almost_eq_const", &Parser::parseCheckConstOp},
  };
  auto it = kSpecial.find(name);
  if (it != kSpecial.end())
    return (this->*(it->second))(st);
  if (name.find('.') == std::string_view::npos)
    return errorAt(st.pos, "unknown operation '" + std::string(name) + "'");
  return parseSimpleOp(st);
}

} // namespace rs::ir::detail
