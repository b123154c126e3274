//===- ir/parser.cc - StableHLO text parser: tokens and value scopes ------===//
//
// Tokens and diagnostics, and SSA value scopes. Operations, regions and blocks are in
// parse_operations.cc, the module level in parse_module.cc, pretty forms in
// pretty_ops*.cc, types in parse_types.cc, attributes in parse_attributes.cc and
// parse_dense.cc.
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

} // namespace detail
} // namespace rs::ir
