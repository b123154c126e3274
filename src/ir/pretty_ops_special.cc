//===- ir/pretty_ops_special.cc - StableHLO parser: pretty forms with syntax ===//
//
// Pretty forms that do not fit the common `operands, key = value : types` shape:
// func.func, call, while (cond/do regions), reduce (`applies` and `reducer` forms),
// convolution (dim_numbers and window), slice (`[0:2, 1:8:2]`), compare, custom_call,
// composite, constant, get_tuple_element, chlo.top_k, chlo.scan, sdy.mesh and the
// check.expect_*_const ops. Each builds the same Operation the generic form gives.
//
//===----------------------------------------------------------------------===//
#include "ir/parser_impl.h"

#include <algorithm>

namespace rs::ir::detail {
namespace {

Attribute stringAttr(std::string s) {
  Attribute a;
  a.kind = AttrKind::kString;
  a.str = std::move(s);
  return a;
}

Attribute i64Array(std::vector<int64_t> v, DType t = DType::kI64) {
  Attribute a;
  a.kind = AttrKind::kDenseArray;
  a.scalar_type = t;
  a.ints = std::move(v);
  return a;
}

Attribute intAttr(int64_t v, DType t) {
  Attribute a;
  a.kind = AttrKind::kInteger;
  a.scalar_type = t;
  a.int_value = v;
  return a;
}

Attribute enumAttr(std::string_view name, std::string_view value) {
  Attribute a;
  a.kind = AttrKind::kEnum;
  a.dialect = "stablehlo";
  a.name = std::string(name);
  a.str = std::string(value);
  return a;
}

Attribute dictOf(std::vector<NamedAttribute> fields) {
  std::stable_sort(
      fields.begin(), fields.end(),
      [](const NamedAttribute &a, const NamedAttribute &b) { return a.name < b.name; });
  Attribute a;
  a.kind = AttrKind::kDictionary;
  a.fields = std::move(fields);
  return a;
}

} // namespace

Status Parser::parseFuncOp(OpState &st) {
  Operation &op = st.op;
  if (isKeyword("public") || isKeyword("private") || isKeyword("nested")) {
    op.properties.push_back({"sym_visibility", stringAttr(std::string(tok().text))});
    advance();
  }
  if (!is(Tok::kSymbol))
    return errorExpected("function name");
  Attribute sym;
  RS_RETURN_IF_ERROR(parseAttribute(&sym));
  op.properties.push_back({"sym_name", stringAttr(sym.str)});
  std::vector<ArgDecl> args;
  std::vector<Attribute> arg_dicts, res_dicts;
  bool any_arg_attrs = false, any_res_attrs = false, named = false;
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  while (!is(Tok::kRParen)) {
    ArgDecl a;
    if (is(Tok::kValueId)) {
      named = true;
      a.name = std::string(tok().text);
      a.pos = tok().pos;
      advance();
      RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
    } else if (named) {
      return errorExpected("argument name");
    }
    RS_RETURN_IF_ERROR(parseType(&a.type));
    std::vector<NamedAttribute> attrs;
    if (is(Tok::kLBrace))
      RS_RETURN_IF_ERROR(parseAttrDict(&attrs));
    any_arg_attrs = any_arg_attrs || !attrs.empty();
    arg_dicts.push_back(dictOf(std::move(attrs)));
    RS_RETURN_IF_ERROR(skipOptionalLoc());
    args.push_back(std::move(a));
    if (!consumeIf(Tok::kComma))
      break;
  }
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  Attribute fn_type;
  fn_type.kind = AttrKind::kType;
  fn_type.type = std::make_shared<Type>();
  fn_type.type->kind = TypeKind::kFunction;
  for (const ArgDecl &a : args)
    fn_type.type->elements.push_back(a.type);
  if (consumeIf(Tok::kArrow)) {
    bool parens = consumeIf(Tok::kLParen);
    while (!parens || !is(Tok::kRParen)) {
      Type t;
      RS_RETURN_IF_ERROR(parseType(&t));
      std::vector<NamedAttribute> attrs;
      if (parens && is(Tok::kLBrace))
        RS_RETURN_IF_ERROR(parseAttrDict(&attrs));
      any_res_attrs = any_res_attrs || !attrs.empty();
      res_dicts.push_back(dictOf(std::move(attrs)));
      fn_type.type->results.push_back(std::move(t));
      if (!parens || !consumeIf(Tok::kComma))
        break;
    }
    if (parens)
      RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  }
  op.properties.push_back({"function_type", std::move(fn_type)});
  if (any_arg_attrs) {
    Attribute arr;
    arr.kind = AttrKind::kArray;
    arr.elements = std::move(arg_dicts);
    op.properties.push_back({"arg_attrs", std::move(arr)});
  }
  if (any_res_attrs) {
    Attribute arr;
    arr.kind = AttrKind::kArray;
    arr.elements = std::move(res_dicts);
    op.properties.push_back({"res_attrs", std::move(arr)});
  }
  if (consumeKeyword("attributes"))
    RS_RETURN_IF_ERROR(parseAttrDict(&op.attributes));
  Region body;
  if (is(Tok::kLBrace)) {
    if (!named && !args.empty())
      return errorExpected("named arguments for a function with a body");
    RS_RETURN_IF_ERROR(parseRegion(&body, &args, /*isolated=*/true));
  }
  op.regions.push_back(std::move(body));
  return Status::ok();
}

Status Parser::parseCallOp(OpState &st) {
  if (!is(Tok::kSymbol))
    return errorExpected("callee");
  Attribute callee;
  RS_RETURN_IF_ERROR(parseAttribute(&callee));
  st.op.properties.push_back({"callee", std::move(callee)});
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  if (!is(Tok::kRParen))
    RS_RETURN_IF_ERROR(parseValueUseList(&st.op.operands));
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  TypeSection ts;
  RS_RETURN_IF_ERROR(parseTypeSection(&ts));
  return assignResultTypes(st, ts);
}

// %r:2 = stablehlo.while(%iterArg = %a, %iterArg_0 = %b) : T0, T1 cond {...} do {...}
Status Parser::parseWhileOp(OpState &st) {
  std::vector<ArgDecl> args;
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  while (is(Tok::kValueId)) {
    ArgDecl a;
    a.name = std::string(tok().text);
    a.pos = tok().pos;
    advance();
    RS_RETURN_IF_ERROR(expect(Tok::kEqual, "'='"));
    ValueId v = 0;
    RS_RETURN_IF_ERROR(parseValueUse(&v));
    st.op.operands.push_back(v);
    args.push_back(std::move(a));
    if (!consumeIf(Tok::kComma))
      break;
  }
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  std::vector<Type> types;
  if (!args.empty()) {
    RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
    size_t types_pos = tok().pos;
    RS_RETURN_IF_ERROR(parseTypeList(&types));
    if (types.size() != args.size())
      return errorAt(types_pos, "'stablehlo.while' has " + std::to_string(args.size()) +
                                    " operands but " + std::to_string(types.size()) + " types");
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i] != valueType(st.op.operands[i]))
        return errorAt(types_pos, "operand #" + std::to_string(i) +
                                      " of 'stablehlo.while' has type " +
                                      valueType(st.op.operands[i]).toString() + ", not " +
                                      types[i].toString());
      args[i].type = types[i];
    }
  }
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  Region cond, body;
  RS_RETURN_IF_ERROR(expectKeyword("cond"));
  RS_RETURN_IF_ERROR(parseRegion(&cond, &args, false));
  RS_RETURN_IF_ERROR(expectKeyword("do"));
  RS_RETURN_IF_ERROR(parseRegion(&body, &args, false));
  st.op.regions.push_back(std::move(cond));
  st.op.regions.push_back(std::move(body));
  st.result_types = std::move(types);
  return Status::ok();
}

// stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (...) -> ...
// stablehlo.reduce(%a init: %b), (%c init: %d) across dimensions = [0] : (...) -> (...)
//     reducer(%l0: T, %r0: T) (%l1: U, %r1: U) { ... }
Status Parser::parseReduceOp(OpState &st) {
  std::vector<ValueId> inputs, inits;
  while (true) {
    RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
    ValueId in = 0, init = 0;
    RS_RETURN_IF_ERROR(parseValueUse(&in));
    RS_RETURN_IF_ERROR(expectKeyword("init"));
    RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
    RS_RETURN_IF_ERROR(parseValueUse(&init));
    RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
    inputs.push_back(in);
    inits.push_back(init);
    if (!is(Tok::kComma) || peek().kind != Tok::kLParen)
      break;
    advance();
  }
  st.op.operands = inputs;
  st.op.operands.insert(st.op.operands.end(), inits.begin(), inits.end());
  std::string applied;
  size_t applied_pos = tok().pos;
  if (consumeKeyword("applies")) {
    if (!is(Tok::kBareId))
      return errorExpected("reduction op name");
    applied = std::string(tok().text);
    advance();
  }
  RS_RETURN_IF_ERROR(expectKeyword("across"));
  RS_RETURN_IF_ERROR(expectKeyword("dimensions"));
  RS_RETURN_IF_ERROR(expect(Tok::kEqual, "'='"));
  std::vector<int64_t> dims;
  RS_RETURN_IF_ERROR(parseI64List(&dims));
  st.op.properties.push_back({"dimensions", i64Array(std::move(dims))});
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  TypeSection ts;
  RS_RETURN_IF_ERROR(parseTypeSection(&ts));
  RS_RETURN_IF_ERROR(assignResultTypes(st, ts));
  size_t n = inputs.size();
  // Block arguments are rank-0 tensors of each init's element type: lhs_0..lhs_n-1,
  // then rhs_0..rhs_n-1.
  std::vector<Type> arg_types;
  for (ValueId init : inits) {
    Type t = valueType(init);
    if (t.kind == TypeKind::kTensor)
      t = Type::tensor(t.element, {});
    arg_types.push_back(std::move(t));
  }
  Region region;
  if (!applied.empty()) {
    if (n != 1)
      return errorAt(applied_pos, "'applies' needs exactly one reduced operand");
    Block b;
    for (int side = 0; side < 2; ++side)
      b.arguments.push_back(newValue(arg_types[0]));
    Operation inner;
    inner.name = applied;
    inner.loc = st.op.loc;
    inner.operands = b.arguments;
    inner.results.push_back(newValue(arg_types[0]));
    Operation ret;
    ret.name = "stablehlo.return";
    ret.loc = st.op.loc;
    ret.operands = inner.results;
    b.ops.push_back(std::move(inner));
    b.ops.push_back(std::move(ret));
    region.blocks.push_back(std::move(b));
  } else {
    RS_RETURN_IF_ERROR(expectKeyword("reducer"));
    std::vector<ArgDecl> lhs, rhs;
    for (size_t i = 0; i < n; ++i) {
      std::vector<ArgDecl> pair;
      RS_RETURN_IF_ERROR(parseBlockArgs(&pair));
      if (pair.size() != 2)
        return errorAt(tok().pos, "each reducer group must declare two arguments");
      lhs.push_back(std::move(pair[0]));
      rhs.push_back(std::move(pair[1]));
    }
    lhs.insert(lhs.end(), std::make_move_iterator(rhs.begin()), std::make_move_iterator(rhs.end()));
    RS_RETURN_IF_ERROR(parseRegion(&region, &lhs, false));
  }
  st.op.regions.push_back(std::move(region));
  return Status::ok();
}

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
        op.properties.push_back({prop, i64Array(std::move(v))});
      } else if (key == "reverse") {
        std::vector<int64_t> v;
        RS_RETURN_IF_ERROR(parseBoolList(&v));
        op.properties.push_back({"window_reversal", i64Array(std::move(v), DType::kBool)});
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
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  TypeSection ts;
  RS_RETURN_IF_ERROR(parseTypeSection(&ts));
  return assignResultTypes(st, ts);
}

// stablehlo.slice %x [0:2, 1:8:2] : (...) -> ...
Status Parser::parseSliceOp(OpState &st) {
  ValueId v = 0;
  RS_RETURN_IF_ERROR(parseValueUse(&v));
  st.op.operands.push_back(v);
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
  st.op.properties.push_back({"start_indices", i64Array(std::move(starts))});
  st.op.properties.push_back({"limit_indices", i64Array(std::move(limits))});
  st.op.properties.push_back({"strides", i64Array(std::move(strides))});
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  TypeSection ts;
  RS_RETURN_IF_ERROR(parseTypeSection(&ts));
  return assignResultTypes(st, ts);
}

// stablehlo.compare  LT, %a, %b,  FLOAT : (...) -> ...
Status Parser::parseCompareOp(OpState &st) {
  if (!is(Tok::kBareId))
    return errorExpected("comparison direction");
  st.op.properties.push_back(
      {"comparison_direction", enumAttr("comparison_direction", tok().text)});
  advance();
  RS_RETURN_IF_ERROR(expect(Tok::kComma, "','"));
  RS_RETURN_IF_ERROR(parseValueUseList(&st.op.operands));
  if (consumeIf(Tok::kComma)) {
    if (!is(Tok::kBareId))
      return errorExpected("comparison type");
    st.op.properties.push_back({"compare_type", enumAttr("comparison_type", tok().text)});
    advance();
  }
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  TypeSection ts;
  RS_RETURN_IF_ERROR(parseTypeSection(&ts));
  return assignResultTypes(st, ts);
}

// stablehlo.custom_call @target(%a) {attrs} : (...) -> ...
Status Parser::parseCustomCallOp(OpState &st) {
  if (!is(Tok::kSymbol))
    return errorExpected("call target");
  Attribute target;
  RS_RETURN_IF_ERROR(parseAttribute(&target));
  st.op.properties.push_back({"call_target_name", stringAttr(target.str)});
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  if (!is(Tok::kRParen))
    RS_RETURN_IF_ERROR(parseValueUseList(&st.op.operands));
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  TypeSection ts;
  RS_RETURN_IF_ERROR(parseTypeSection(&ts));
  return assignResultTypes(st, ts);
}

// stablehlo.composite "name" %a, %b {composite_attributes = ..., decomposition = @f} : ...
Status Parser::parseCompositeOp(OpState &st) {
  if (!is(Tok::kString))
    return errorExpected("composite name");
  Attribute name;
  RS_RETURN_IF_ERROR(parseAttribute(&name));
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
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  TypeSection ts;
  RS_RETURN_IF_ERROR(parseTypeSection(&ts));
  return assignResultTypes(st, ts);
}

// stablehlo.constant dense<...> : tensor<...>, or the generic-like
// stablehlo.constant() <{value = ...}> : () -> tensor<...> (quantized results)
Status Parser::parseConstantOp(OpState &st) {
  if (is(Tok::kLParen))
    return parseGenericBody(st);
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  Attribute value;
  Type type;
  if (isKeyword("dense") && nextCharIs('<')) {
    RS_RETURN_IF_ERROR(parseDense(&value, &type));
  } else if (isKeyword("dense_resource") && nextCharIs('<')) {
    RS_RETURN_IF_ERROR(parseDenseResource(&value, &type));
  } else {
    return errorExpected("dense constant");
  }
  st.op.properties.push_back({"value", std::move(value)});
  st.result_types = {type};
  if (st.num_results != 1)
    return errorAt(st.pos, "'stablehlo.constant' has one result");
  return Status::ok();
}

// stablehlo.get_tuple_element %t[0] : (tuple<...>) -> T
Status Parser::parseGetTupleElementOp(OpState &st) {
  ValueId v = 0;
  RS_RETURN_IF_ERROR(parseValueUse(&v));
  st.op.operands.push_back(v);
  RS_RETURN_IF_ERROR(expect(Tok::kLSquare, "'['"));
  int64_t index = 0;
  RS_RETURN_IF_ERROR(parseSignedInteger(&index));
  RS_RETURN_IF_ERROR(expect(Tok::kRSquare, "']'"));
  st.op.properties.push_back({"index", intAttr(index, DType::kI32)});
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  TypeSection ts;
  RS_RETURN_IF_ERROR(parseTypeSection(&ts));
  return assignResultTypes(st, ts);
}

// chlo.top_k(%x, k = 3) : tensor<4x8xf32> -> (tensor<4x3xf32>, tensor<4x3xi32>)
Status Parser::parseTopKOp(OpState &st) {
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  ValueId v = 0;
  RS_RETURN_IF_ERROR(parseValueUse(&v));
  st.op.operands.push_back(v);
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
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  TypeSection ts;
  RS_RETURN_IF_ERROR(parseTypeSection(&ts));
  return assignResultTypes(st, ts);
}

// %0:2 = chlo.scan(%in) inits(%init) dimension=0 { ^bb0(...): ... } : (...) -> (...)
Status Parser::parseScanOp(OpState &st) {
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  std::vector<ValueId> inputs, inits;
  if (!is(Tok::kRParen))
    RS_RETURN_IF_ERROR(parseValueUseList(&inputs));
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  RS_RETURN_IF_ERROR(expectKeyword("inits"));
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  if (!is(Tok::kRParen))
    RS_RETURN_IF_ERROR(parseValueUseList(&inits));
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  st.op.operands = inputs;
  st.op.operands.insert(st.op.operands.end(), inits.begin(), inits.end());
  // Variadic operand groups: the generic form records their sizes. Results are the
  // scanned outputs, then the final carries (one per init).
  auto segments = [](int64_t a, int64_t b) {
    Attribute s;
    s.kind = AttrKind::kDenseArray;
    s.scalar_type = DType::kI32;
    s.ints = {a, b};
    return s;
  };
  auto n_inits = static_cast<int64_t>(inits.size());
  st.op.properties.push_back(
      {"operandSegmentSizes", segments(static_cast<int64_t>(inputs.size()), n_inits)});
  if (st.num_results >= n_inits)
    st.op.properties.push_back({"resultSegmentSizes", segments(st.num_results - n_inits, n_inits)});
  while (is(Tok::kBareId) && peek().kind == Tok::kEqual) {
    std::string key(tok().text);
    advance();
    advance();
    Attribute a;
    RS_RETURN_IF_ERROR(parseItemValue(&a));
    st.op.properties.push_back({std::move(key), std::move(a)});
    consumeIf(Tok::kComma);
  }
  if (consumeKeyword("attributes")) // a bare `{` here opens the body, not an attr-dict
    RS_RETURN_IF_ERROR(parseAttrDict(&st.op.attributes));
  Region body;
  RS_RETURN_IF_ERROR(parseRegion(&body, nullptr, false));
  st.op.regions.push_back(std::move(body));
  RS_RETURN_IF_ERROR(parseTrailingAttrDict(st));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  TypeSection ts;
  RS_RETURN_IF_ERROR(parseTypeSection(&ts));
  return assignResultTypes(st, ts);
}

// sdy.mesh @name = <["x"=2]> {attrs}
Status Parser::parseSdyMeshOp(OpState &st) {
  if (!is(Tok::kSymbol))
    return errorExpected("mesh name");
  Attribute sym;
  RS_RETURN_IF_ERROR(parseAttribute(&sym));
  st.op.properties.push_back({"sym_name", stringAttr(sym.str)});
  RS_RETURN_IF_ERROR(expect(Tok::kEqual, "'='"));
  if (is(Tok::kLess)) {
    std::string_view body;
    RS_RETURN_IF_ERROR(skipBalanced(&body));
    Attribute mesh;
    mesh.kind = AttrKind::kOpaque;
    mesh.str = "#sdy.mesh" + std::string(body);
    st.op.properties.push_back({"mesh", std::move(mesh)});
  } else {
    Attribute mesh;
    RS_RETURN_IF_ERROR(parseAttribute(&mesh));
    st.op.properties.push_back({"mesh", std::move(mesh)});
  }
  return parseTrailingAttrDict(st);
}

// check.expect_eq_const %r, dense<[1, 2]> : tensor<2xi32> (, tolerance = 0.1)? {attrs}?
Status Parser::parseCheckConstOp(OpState &st) {
  ValueId v = 0;
  RS_RETURN_IF_ERROR(parseValueUse(&v));
  st.op.operands.push_back(v);
  RS_RETURN_IF_ERROR(expect(Tok::kComma, "','"));
  Attribute value;
  RS_RETURN_IF_ERROR(parseAttribute(&value));
  st.op.properties.push_back({"value", std::move(value)});
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
  return parseTrailingAttrDict(st);
}

} // namespace rs::ir::detail
