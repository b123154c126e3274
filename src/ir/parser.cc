//===- ir/parser.cc - StableHLO text parser: core, generic ops, regions ---===//
//
// Tokens and diagnostics, SSA value scopes, generic-form operations, regions and
// blocks. The module level is in parse_module.cc, pretty forms in pretty_ops*.cc, types
// in parse_types.cc, attributes in parse_attributes.cc and parse_dense.cc.
//
//===----------------------------------------------------------------------===//
#include "ir/parser_impl.h"

#include <algorithm>
#include <charconv>

namespace rs::ir {
namespace detail {

Parser::Parser(std::string_view text, std::string_view file, int first_line)
    : src_(text), file_(file), lex_(text), lines_(text, first_line) {
  module_.file = file_;
}

//===----------------------------------------------------------------------===//
// Tokens and diagnostics
//===----------------------------------------------------------------------===//

bool Parser::consumeIf(Tok k) {
  if (!is(k))
    return false;
  advance();
  return true;
}

bool Parser::consumeKeyword(std::string_view kw) {
  if (!isKeyword(kw))
    return false;
  advance();
  return true;
}

Status Parser::expect(Tok k, std::string_view what) {
  if (!is(k))
    return errorExpected(what);
  advance();
  return Status::ok();
}

Status Parser::expectKeyword(std::string_view kw) {
  if (!isKeyword(kw))
    return errorExpected("'" + std::string(kw) + "'");
  advance();
  return Status::ok();
}

Location Parser::locationAt(size_t pos) const {
  Location l;
  l.file = file_;
  l.line = lines_.line(pos);
  l.col = lines_.column(pos);
  return l;
}

Status Parser::errorAt(size_t pos, std::string_view msg) const {
  return invalidArgument() << locationAt(pos).toString() << ": error: " << msg;
}

Status Parser::errorExpected(std::string_view what) const {
  std::string got;
  if (is(Tok::kEof)) {
    got = "<eof>";
  } else {
    std::string_view t = tok_.text;
    if (t.size() > 40)
      t = t.substr(0, 40);
    for (char c : t)
      got.push_back(static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  }
  return errorAt(tok_.pos, "expected " + std::string(what) + ", got '" + got + "'");
}

Token Parser::peek() {
  size_t saved = lex_.position();
  Token t = lex_.lex();
  lex_.resetTo(saved);
  return t;
}

bool Parser::nextCharIs(char c) const {
  size_t p = tok_.pos + tok_.text.size();
  return p < src_.size() && src_[p] == c;
}

Status Parser::enter() {
  if (++depth_ > kMaxDepth) {
    --depth_;
    return errorAt(tok_.pos, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  return Status::ok();
}

Status Parser::skipBalanced(std::string_view *text) {
  size_t start = tok_.pos;
  if (start >= src_.size())
    return errorExpected("'(', '[', '{' or '<'");
  std::string stack;
  size_t p = start;
  while (p < src_.size()) {
    char c = src_[p];
    if (c == '"') {
      ++p;
      while (p < src_.size() && src_[p] != '"' && src_[p] != '\n')
        p += (src_[p] == '\\') ? 2 : 1;
      if (p >= src_.size() || src_[p] != '"')
        return errorAt(start, "unterminated string in attribute");
      ++p;
      continue;
    }
    if (c == '/' && p + 1 < src_.size() && src_[p + 1] == '/') {
      while (p < src_.size() && src_[p] != '\n')
        ++p;
      continue;
    }
    if (c == '-' && p + 1 < src_.size() && src_[p + 1] == '>') {
      p += 2;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (stack.size() >= static_cast<size_t>(kMaxDepth))
        return errorAt(p, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      stack.push_back(c == '(' ? ')' : c == '[' ? ']' : c == '{' ? '}' : '>');
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (stack.empty() || stack.back() != c)
        return errorAt(p, std::string("unbalanced '") + c + "'");
      stack.pop_back();
      if (stack.empty()) {
        ++p;
        *text = src_.substr(start, p - start);
        lex_.resetTo(p);
        advance();
        prev_end_ = p;
        return Status::ok();
      }
    } else if (stack.empty()) {
      return errorExpected("'(', '[', '{' or '<'");
    }
    ++p;
  }
  return errorAt(start, "unbalanced brackets reach the end of input");
}

Status Parser::skipOptionalLoc() {
  if (!isKeyword("loc") || !nextCharIs('('))
    return Status::ok();
  advance();
  std::string_view ignored;
  return skipBalanced(&ignored);
}

//===----------------------------------------------------------------------===//
// Values and scopes
//===----------------------------------------------------------------------===//

ValueId Parser::newValue(const Type &type) {
  module_.value_types.push_back(type);
  return static_cast<ValueId>(module_.value_types.size() - 1);
}

Status Parser::defineName(std::string_view name, size_t pos, ValueId first, int count) {
  std::string key(name);
  auto [it, inserted] = names_.emplace(key, NameDef{first, count});
  if (!inserted)
    return errorAt(pos, "redefinition of SSA value '" + key + "'");
  scope_log_.push_back(std::move(key));
  return Status::ok();
}

Status Parser::parseValueUse(ValueId *out) {
  if (!is(Tok::kValueId))
    return errorExpected("SSA value");
  size_t pos = tok_.pos;
  auto it = names_.find(std::string(tok_.text));
  if (it == names_.end())
    return errorAt(pos, "use of undefined value '" + std::string(tok_.text) + "'");
  NameDef def = it->second;
  int64_t index = 0;
  bool has_index = nextCharIs('#');
  advance();
  if (has_index) {
    if (!is(Tok::kHashId))
      return errorExpected("result number");
    std::string_view digits = tok_.text.substr(1);
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec != std::errc() || ptr != digits.data() + digits.size())
      return errorExpected("result number");
    advance();
  }
  if (index < 0 || index >= def.count)
    return errorAt(pos, "result number " + std::to_string(index) + " out of range for a group of " +
                            std::to_string(def.count) + " values");
  *out = def.first + static_cast<ValueId>(index);
  return Status::ok();
}

Status Parser::parseValueUseList(std::vector<ValueId> *out) {
  while (true) {
    ValueId v = 0;
    RS_RETURN_IF_ERROR(parseValueUse(&v));
    out->push_back(v);
    if (!is(Tok::kComma) || peek().kind != Tok::kValueId)
      return Status::ok();
    advance();
  }
}

void Parser::pushScope(bool isolated) {
  scope_marks_.push_back(ScopeMark{scope_log_.size(), isolated});
  if (isolated) {
    isolated_saved_.push_back(std::move(names_));
    names_.clear();
  }
}

void Parser::popScope() {
  ScopeMark mark = scope_marks_.back();
  scope_marks_.pop_back();
  if (mark.isolated) {
    names_ = std::move(isolated_saved_.back());
    isolated_saved_.pop_back();
  } else {
    for (size_t i = mark.log_size; i < scope_log_.size(); ++i)
      names_.erase(scope_log_[i]);
  }
  scope_log_.resize(mark.log_size);
}

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
