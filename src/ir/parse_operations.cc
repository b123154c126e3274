//===- ir/parse_operations.cc - StableHLO parser: operations, regions -----===//
//
// One operation statement: the results bound on the left of '=', then the generic form
// (`"dialect.op"(%a) <{props}> ({regions}) {attrs} : (T) -> R`) or the op's pretty form
// (pretty_ops*.cc); then regions and their blocks with block arguments and labels.
//
//===----------------------------------------------------------------------===//
#include "ir/parser_impl.h"

#include <charconv>

namespace rs::ir {
namespace detail {

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

Status Parser::parseOperation(std::vector<Operation> *out) {
  RS_RETURN_IF_ERROR(enter());
  struct Bind {
    std::string name;
    int count;
    size_t pos;
  };
  OpState st;
  st.pos = tok_.pos;
  std::vector<Bind> binds;
  if (is(Tok::kValueId)) {
    while (true) {
      if (!is(Tok::kValueId))
        return errorExpected("result name");
      Bind b{std::string(tok_.text), 1, tok_.pos};
      advance();
      if (consumeIf(Tok::kColon)) {
        int64_t n = 0;
        auto [ptr, ec] = std::from_chars(tok_.text.data(), tok_.text.data() + tok_.text.size(), n);
        if (!is(Tok::kInteger) || ec != std::errc() || n < 1 || n > (1 << 20))
          return errorExpected("result count");
        b.count = static_cast<int>(n);
        advance();
      }
      st.num_results += b.count;
      if (st.num_results > (1 << 20))
        return errorAt(b.pos, "too many results");
      binds.push_back(std::move(b));
      if (!consumeIf(Tok::kComma))
        break;
    }
    RS_RETURN_IF_ERROR(expect(Tok::kEqual, "'='"));
  }
  st.op.loc = locationAt(st.pos);
  if (is(Tok::kString)) {
    if (!decodeStringLiteral(tok_.text, &st.op.name) || st.op.name.empty())
      return errorExpected("operation name");
    advance();
    if (st.op.name == "builtin.module")
      return errorAt(st.pos, "nested modules are not supported");
    RS_RETURN_IF_ERROR(parseGenericBody(st));
  } else if (is(Tok::kBareId)) {
    std::string_view name = tok_.text;
    if (name == "return")
      name = "func.return";
    else if (name == "call")
      name = "func.call";
    else if (name == "module")
      return errorAt(st.pos, "nested modules are not supported");
    st.op.name = std::string(name);
    advance();
    RS_RETURN_IF_ERROR(parsePrettyOp(st.op.name, st));
  } else {
    return errorExpected("operation");
  }
  RS_RETURN_IF_ERROR(skipOptionalLoc());
  if (static_cast<int>(st.result_types.size()) != st.num_results)
    return errorAt(st.pos, "'" + st.op.name + "' has " + std::to_string(st.result_types.size()) +
                               " result types but " + std::to_string(st.num_results) +
                               " results are bound");
  RS_RETURN_IF_ERROR(normaliseAttributes(st.op, module_));
  for (const Type &t : st.result_types)
    st.op.results.push_back(newValue(t));
  ValueId next = st.op.results.empty() ? 0 : st.op.results.front();
  for (const Bind &b : binds) {
    RS_RETURN_IF_ERROR(defineName(b.name, b.pos, next, b.count));
    next += b.count;
  }
  out->push_back(std::move(st.op));
  leave();
  return Status::ok();
}

Status Parser::parseGenericBody(OpState &st) {
  Operation &op = st.op;
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  if (!is(Tok::kRParen))
    RS_RETURN_IF_ERROR(parseValueUseList(&op.operands));
  RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  if (is(Tok::kLSquare))
    return errorAt(tok_.pos, "block successors are not supported");
  if (is(Tok::kLess)) {
    advance();
    RS_RETURN_IF_ERROR(parseAttrDict(&op.properties));
    RS_RETURN_IF_ERROR(expect(Tok::kGreater, "'>'"));
  }
  if (is(Tok::kLParen)) {
    advance();
    bool isolated = op.name == "func.func";
    while (true) {
      Region r;
      RS_RETURN_IF_ERROR(parseRegion(&r, nullptr, isolated));
      op.regions.push_back(std::move(r));
      if (!consumeIf(Tok::kComma))
        break;
    }
    RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  }
  if (is(Tok::kLBrace))
    RS_RETURN_IF_ERROR(parseAttrDict(&op.attributes));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  if (!is(Tok::kLParen))
    return errorExpected("function type");
  size_t type_pos = tok_.pos;
  Type fn;
  RS_RETURN_IF_ERROR(parseFunctionType(&fn));
  if (fn.elements.size() != op.operands.size())
    return errorAt(type_pos, "expected " + std::to_string(op.operands.size()) +
                                 " operand types, got " + std::to_string(fn.elements.size()));
  for (size_t i = 0; i < fn.elements.size(); ++i)
    if (fn.elements[i] != valueType(op.operands[i]))
      return errorAt(type_pos, "operand #" + std::to_string(i) + " of '" + op.name + "' has type " +
                                   valueType(op.operands[i]).toString() + ", but the op says " +
                                   fn.elements[i].toString());
  st.result_types = std::move(fn.results);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Regions and blocks
//===----------------------------------------------------------------------===//

Status Parser::parseBlockArgs(std::vector<ArgDecl> *out) {
  RS_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  if (consumeIf(Tok::kRParen))
    return Status::ok();
  while (true) {
    if (!is(Tok::kValueId))
      return errorExpected("block argument");
    ArgDecl a;
    a.name = std::string(tok_.text);
    a.pos = tok_.pos;
    advance();
    RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
    RS_RETURN_IF_ERROR(parseType(&a.type));
    RS_RETURN_IF_ERROR(skipOptionalLoc());
    out->push_back(std::move(a));
    if (!consumeIf(Tok::kComma))
      break;
  }
  return expect(Tok::kRParen, "')'");
}

Status Parser::parseBlock(Block *b, bool entry, const std::vector<ArgDecl> *entry_args,
                          bool *has_label) {
  std::vector<ArgDecl> args;
  *has_label = false;
  if (is(Tok::kCaretId)) {
    if (entry && entry_args)
      return errorAt(tok_.pos, "this region's entry block arguments are already declared");
    *has_label = true;
    advance();
    if (is(Tok::kLParen))
      RS_RETURN_IF_ERROR(parseBlockArgs(&args));
    RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  } else if (entry && entry_args) {
    args = *entry_args;
  }
  for (const ArgDecl &a : args) {
    ValueId v = newValue(a.type);
    b->arguments.push_back(v);
    if (!a.name.empty())
      RS_RETURN_IF_ERROR(defineName(a.name, a.pos, v, 1));
  }
  while (!is(Tok::kRBrace) && !is(Tok::kCaretId)) {
    if (is(Tok::kEof))
      return errorExpected("'}'");
    RS_RETURN_IF_ERROR(parseOperation(&b->ops));
  }
  return Status::ok();
}

Status Parser::parseRegion(Region *out, const std::vector<ArgDecl> *entry, bool isolated) {
  RS_RETURN_IF_ERROR(enter());
  RS_RETURN_IF_ERROR(expect(Tok::kLBrace, "'{'"));
  pushScope(isolated);
  bool first = true;
  Status st = Status::ok();
  while (!is(Tok::kRBrace)) {
    Block b;
    bool has_label = false;
    st = parseBlock(&b, first, entry, &has_label);
    if (!st.isOk())
      break;
    if (!first && !has_label) {
      st = errorExpected("block label");
      break;
    }
    out->blocks.push_back(std::move(b));
    first = false;
  }
  if (st.isOk() && first && entry) // `{ }` body with declared arguments: one empty block
    st = [&] {
      Block b;
      bool has_label = false;
      Status s = parseBlock(&b, true, entry, &has_label);
      out->blocks.push_back(std::move(b));
      return s;
    }();
  popScope();
  RS_RETURN_IF_ERROR(st);
  RS_RETURN_IF_ERROR(expect(Tok::kRBrace, "'}'"));
  leave();
  return Status::ok();
}

} // namespace detail
} // namespace rs::ir
