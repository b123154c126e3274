//===- ir/pretty_ops_regions.cc - StableHLO parser: pretty forms with regions ===//
//
// func.func (signature, argument/result attributes, body), call, while (cond/do
// regions sharing the iterArg names), reduce (the `applies` form, expanded into its
// region, and the `reducer` form with its argument pairing) and chlo.scan. Each builds
// the same Operation, regions and value numbering as the generic form.
//
//===----------------------------------------------------------------------===//
#include "ir/parser_impl.h"

#include <algorithm>

namespace rs::ir::detail {

Status Parser::parseFuncOp(OpState &st) {
  Operation &op = st.op;
  if (isKeyword("public") || isKeyword("private") || isKeyword("nested")) {
    op.properties.push_back({"sym_visibility", makeString(std::string(tok().text))});
    advance();
  }
  Attribute sym;
  RS_RETURN_IF_ERROR(expectAttribute(Tok::kSymbol, "function name", &sym));
  op.properties.push_back({"sym_name", makeString(sym.str)});
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
    arg_dicts.push_back(makeDict(std::move(attrs)));
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
      res_dicts.push_back(makeDict(std::move(attrs)));
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

Status Parser::parseSymbolCall(OpState &st, std::string_view what, Attribute *symbol) {
  if (!is(Tok::kSymbol))
    return errorExpected(what);
  RS_RETURN_IF_ERROR(parseAttribute(symbol));
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  if (!is(Tok::kRParen))
    RS_RETURN_IF_ERROR(parseValueUseList(&st.op.operands));
  return expect(Tok::kRParen, "')'");
}

Status Parser::parseCallOp(OpState &st) {
  Attribute callee;
  RS_RETURN_IF_ERROR(parseSymbolCall(st, "callee", &callee));
  st.op.properties.push_back({"callee", std::move(callee)});
  return finishOp(st);
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
  st.op.properties.push_back({"dimensions", makeI64Array(std::move(dims))});
  RS_RETURN_IF_ERROR(finishOp(st));
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
  return finishOp(st);
}

} // namespace rs::ir::detail
