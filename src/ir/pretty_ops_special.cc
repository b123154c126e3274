//===- ir/pretty_ops_special.cc - StableHLO parser: pretty forms with syntax =//
//
// Pretty forms that do not fit the common `operands, key = value : types` shape and
// have no regions: convolution (dim_numbers and window), slice (`[0:2, 1:8:2]`),
// compare, custom_call, composite, constant, get_tuple_element, chlo.top_k, sdy.mesh,
// sdy.sharding_constraint and the check.expect_*_const ops. Each builds the same
// Operation the generic form gives.
//
//===----------------------------------------------------------------------===//
#include "ir/parser_impl.h"

#include <algorithm>

namespace rs::ir::detail {
// stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
//     window = {stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1],
//     rhs_dilate = [1, 1], reverse = [false, false]} {attrs} : (...) -> ...
Status Parser::parseConvolutionOp(OpState &st) {
  Operation &op = st.op;
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  if (!is(Tok::kRParen))
    RS_RETURN_IF_ERROR(parseValueUseList(&op.operands));
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  RS_RETURN_IF_ERROR(expectKeyword("dim_numbers"));
  RS_RETURN_IF_ERROR(expect(Tok::kEqual, "'='"));
  Attribute dn;
  dn.kind = AttrKind::kStruct;
  RS_RETURN_IF_ERROR(parseConvCompact(&dn));
  op.properties.push_back({"dimension_numbers", std::move(dn)});
  if (consumeIf(Tok::kComma)) {
    RS_RETURN_IF_ERROR(expectKeyword("window"));
    RS_RETURN_IF_ERROR(expect(Tok::kEqual, "'='"));
    RS_RETURN_IF_ERROR(expect(Tok::kLBrace, "'{'"));
    while (is(Tok::kBareId)) {
      std::string key(tok().text);
      size_t key_pos = tok().pos;
      advance();
      RS_RETURN_IF_ERROR(expect(Tok::kEqual, "'='"));
      if (key == "stride" || key == "lhs_dilate" || key == "rhs_dilate") {
        std::vector<int64_t> v;
        RS_RETURN_IF_ERROR(parseI64List(&v));
        const char *prop = key == "stride"       ? "window_strides"
                           : key == "lhs_dilate" ? "lhs_dilation"
                                                 : "rhs_dilation";
        op.properties.push_back({prop, makeI64Array(std::move(v))});
      } else if (key == "reverse") {
        std::vector<int64_t> v;
        RS_RETURN_IF_ERROR(parseBoolList(&v));
        op.properties.push_back({"window_reversal", makeI64Array(std::move(v), DType::kBool)});
      } else if (key == "pad") {
        std::vector<int64_t> flat;
        RS_RETURN_IF_ERROR(expect(Tok::kLSquare, "'['"));
        while (is(Tok::kLSquare)) {
          std::vector<int64_t> pair;
          RS_RETURN_IF_ERROR(parseI64List(&pair));
          if (pair.size() != 2)
            return errorAt(key_pos, "each padding entry must be [low, high]");
          flat.insert(flat.end(), pair.begin(), pair.end());
          if (flat.size() > 2 * 4096)
            return errorAt(key_pos, "too many padding entries");
          if (!consumeIf(Tok::kComma))
            break;
        }
        RS_RETURN_IF_ERROR(expect(Tok::kRSquare, "']'"));
        Attribute pad;
        pad.kind = AttrKind::kDenseElements;
        Shape shape = {static_cast<int64_t>(flat.size() / 2), 2};
        pad.tensor =
            Tensor::copyOf(DType::kI64, shape,
                           std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(flat.data()),
                                                    flat.size() * sizeof(int64_t)));
        pad.tensor_type = std::make_shared<Type>(Type::tensor(DType::kI64, shape));
        op.properties.push_back({"padding", std::move(pad)});
      } else {
        return errorAt(key_pos, "unknown convolution window field '" + key + "'");
      }
      if (!consumeIf(Tok::kComma))
        break;
    }
    RS_RETURN_IF_ERROR(expect(Tok::kRBrace, "'}'"));
  }
  return finishOp(st);
}

// stablehlo.slice %x [0:2, 1:8:2] : (...) -> ...
Status Parser::parseSliceOp(OpState &st) {
  RS_RETURN_IF_ERROR(parseOperand(st));
  if (consumeIf(Tok::kComma)) // older `%x, starts = [..], limits = [..], strides = [..]`
    return errorExpected("'['");
  std::vector<int64_t> starts, limits, strides;
  RS_RETURN_IF_ERROR(expect(Tok::kLSquare, "'['"));
  while (!is(Tok::kRSquare)) {
    int64_t a = 0, b = 0, s = 1;
    RS_RETURN_IF_ERROR(parseSignedInteger(&a));
    RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
    RS_RETURN_IF_ERROR(parseSignedInteger(&b));
    if (consumeIf(Tok::kColon))
      RS_RETURN_IF_ERROR(parseSignedInteger(&s));
    starts.push_back(a);
    limits.push_back(b);
    strides.push_back(s);
    if (!consumeIf(Tok::kComma))
      break;
  }
  RS_RETURN_IF_ERROR(expect(Tok::kRSquare, "']'"));
  st.op.properties.push_back({"start_indices", makeI64Array(std::move(starts))});
  st.op.properties.push_back({"limit_indices", makeI64Array(std::move(limits))});
  st.op.properties.push_back({"strides", makeI64Array(std::move(strides))});
  return finishOp(st);
}

// stablehlo.compare  LT, %a, %b,  FLOAT : (...) -> ...
Status Parser::parseCompareOp(OpState &st) {
  if (!is(Tok::kBareId))
    return errorExpected("comparison direction");
  st.op.properties.push_back(
      {"comparison_direction", makeEnum("comparison_direction", tok().text)});
  advance();
  RS_RETURN_IF_ERROR(expect(Tok::kComma, "','"));
  RS_RETURN_IF_ERROR(parseValueUseList(&st.op.operands));
  if (consumeIf(Tok::kComma)) {
    if (!is(Tok::kBareId))
      return errorExpected("comparison type");
    st.op.properties.push_back({"compare_type", makeEnum("comparison_type", tok().text)});
    advance();
  }
  return finishOp(st);
}

// stablehlo.custom_call @target(%a) {attrs} : (...) -> ...
Status Parser::parseCustomCallOp(OpState &st) {
  Attribute target;
  RS_RETURN_IF_ERROR(parseSymbolCall(st, "call target", &target));
  st.op.properties.push_back({"call_target_name", makeString(target.str)});
  return finishOp(st);
}

// stablehlo.composite "name" %a, %b {composite_attributes = ..., decomposition = @f} : ...
Status Parser::parseCompositeOp(OpState &st) {
  Attribute name;
  RS_RETURN_IF_ERROR(expectAttribute(Tok::kString, "composite name", &name));
  st.op.properties.push_back({"name", std::move(name)});
  if (is(Tok::kValueId))
    RS_RETURN_IF_ERROR(parseValueUseList(&st.op.operands));
  if (is(Tok::kLParen)) { // an attached region (older printers)
    advance();
    while (true) {
      Region r;
      RS_RETURN_IF_ERROR(parseRegion(&r, nullptr, false));
      st.op.regions.push_back(std::move(r));
      if (!consumeIf(Tok::kComma))
        break;
    }
    RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  }
  return finishOp(st);
}

// stablehlo.constant dense<...> : tensor<...>, or the generic-like
// stablehlo.constant() <{value = ...}> : () -> tensor<...> (quantized results); also
// sdy.constant and arith.constant (`arith.constant 1 : i32` gives a scalar result).
Status Parser::parseConstantOp(OpState &st) {
  if (is(Tok::kLParen))
    return parseGenericBody(st);
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  Attribute value;
  Type type;
  size_t value_pos = tok().pos;
  if (isKeyword("dense") && nextCharIs('<')) {
    RS_RETURN_IF_ERROR(parseDense(&value, &type));
  } else if (isKeyword("dense_resource") && nextCharIs('<')) {
    RS_RETURN_IF_ERROR(parseDenseResource(&value, &type));
  } else {
    RS_RETURN_IF_ERROR(parseAttribute(&value));
    bool scalar = (value.kind == AttrKind::kInteger || value.kind == AttrKind::kFloat ||
                   value.kind == AttrKind::kBool) &&
                  value.scalar_type != DType::kInvalid;
    if (!scalar)
      return errorAt(value_pos, "expected a dense or typed scalar constant");
    type.kind = TypeKind::kTensor;
    type.is_scalar_element = true;
    type.element = value.scalar_type;
  }
  st.op.properties.push_back({"value", std::move(value)});
  st.result_types = {type};
  if (st.num_results != 1)
    return errorAt(st.pos, "'" + st.op.name + "' has one result");
  return Status::ok();
}

// sdy.sharding_constraint %x <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
Status Parser::parseShardingConstraintOp(OpState &st) {
  RS_RETURN_IF_ERROR(parseOperand(st));
  if (!is(Tok::kLess))
    return errorExpected("'<'");
  Attribute sharding;
  RS_RETURN_IF_ERROR(parseOpaqueAngle("#sdy.sharding", &sharding));
  st.op.properties.push_back({"sharding", std::move(sharding)});
  return finishOp(st);
}

// stablehlo.get_tuple_element %t[0] : (tuple<...>) -> T
Status Parser::parseGetTupleElementOp(OpState &st) {
  RS_RETURN_IF_ERROR(parseOperand(st));
  RS_RETURN_IF_ERROR(expect(Tok::kLSquare, "'['"));
  int64_t index = 0;
  RS_RETURN_IF_ERROR(parseSignedInteger(&index));
  RS_RETURN_IF_ERROR(expect(Tok::kRSquare, "']'"));
  st.op.properties.push_back({"index", makeInt(index, DType::kI32)});
  return finishOp(st);
}

Status Parser::parseCommaItems(OpState &st) {
  while (consumeIf(Tok::kComma)) {
    if (!is(Tok::kBareId))
      return errorExpected("attribute name");
    std::string key(tok().text);
    advance();
    RS_RETURN_IF_ERROR(expect(Tok::kEqual, "'='"));
    Attribute a;
    RS_RETURN_IF_ERROR(parseItemValue(&a));
    st.op.properties.push_back({std::move(key), std::move(a)});
  }
  return Status::ok();
}

// chlo.top_k(%x, k = 3) : tensor<4x8xf32> -> (tensor<4x3xf32>, tensor<4x3xi32>)
Status Parser::parseTopKOp(OpState &st) {
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  RS_RETURN_IF_ERROR(parseOperand(st));
  RS_RETURN_IF_ERROR(parseCommaItems(st));
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  return finishOp(st);
}

// sdy.mesh @name = <["x"=2]> {attrs}
Status Parser::parseSdyMeshOp(OpState &st) {
  Attribute sym;
  RS_RETURN_IF_ERROR(expectAttribute(Tok::kSymbol, "mesh name", &sym));
  st.op.properties.push_back({"sym_name", makeString(sym.str)});
  RS_RETURN_IF_ERROR(expect(Tok::kEqual, "'='"));
  Attribute mesh;
  if (is(Tok::kLess))
    RS_RETURN_IF_ERROR(parseOpaqueAngle("#sdy.mesh", &mesh));
  else
    RS_RETURN_IF_ERROR(parseAttribute(&mesh));
  st.op.properties.push_back({"mesh", std::move(mesh)});
  return parseTrailingAttrDict(st);
}

// check.expect_eq_const %r, dense<[1, 2]> : tensor<2xi32> (, tolerance = 0.1)? {attrs}?
Status Parser::parseCheckConstOp(OpState &st) {
  RS_RETURN_IF_ERROR(parseOperand(st));
  RS_RETURN_IF_ERROR(expect(Tok::kComma, "','"));
  Attribute value;
  RS_RETURN_IF_ERROR(parseAttribute(&value));
  st.op.properties.push_back({"value", std::move(value)});
  RS_RETURN_IF_ERROR(parseCommaItems(st));
  return parseTrailingAttrDict(st);
}

} // namespace rs::ir::detail
