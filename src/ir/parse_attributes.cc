//===- ir/parse_attributes.cc - StableHLO parser: attributes --------------===//
//
// Scalars (`1 : i64`, `0.5`, `true`), strings, symbols, types, arrays, dictionaries,
// dense arrays (`array<i64: 1, 2>`), aliases, and everything else (loc(...)) as opaque
// text. `#...` attributes are in parse_struct_attributes.cc, dense<...> literals in
// parse_dense.cc.
//
//===----------------------------------------------------------------------===//
#include "ir/float_bits.h"
#include "ir/parser_impl.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace rs::ir::detail {

bool parseUnsigned(std::string_view text, uint64_t *out) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && text[1] == 'x') {
    base = 16;
    text.remove_prefix(2);
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out, base);
  return ec == std::errc() && ptr == text.data() + text.size();
}

Status Parser::parseSignedInteger(int64_t *out) {
  bool neg = consumeIf(Tok::kMinus);
  uint64_t mag = 0;
  if (!is(Tok::kInteger) || !parseUnsigned(tok().text, &mag))
    return errorExpected("integer");
  if (mag > (neg ? (uint64_t{1} << 63) : static_cast<uint64_t>(INT64_MAX)))
    return errorAt(tok().pos, "integer " + std::string(tok().text) + " does not fit in 64 bits");
  *out = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
  advance();
  return Status::ok();
}

Status Parser::parseI64List(std::vector<int64_t> *out) {
  RS_RETURN_IF_ERROR(expect(Tok::kLSquare, "'['"));
  if (consumeIf(Tok::kRSquare))
    return Status::ok();
  while (true) {
    int64_t v = 0;
    RS_RETURN_IF_ERROR(parseSignedInteger(&v));
    out->push_back(v);
    if (!consumeIf(Tok::kComma))
      break;
  }
  return expect(Tok::kRSquare, "']'");
}

Status Parser::parseBoolList(std::vector<int64_t> *out) {
  RS_RETURN_IF_ERROR(expect(Tok::kLSquare, "'['"));
  if (consumeIf(Tok::kRSquare))
    return Status::ok();
  while (true) {
    if (isKeyword("true") || isKeyword("false")) {
      out->push_back(isKeyword("true") ? 1 : 0);
      advance();
    } else if (is(Tok::kInteger) && (tok().text == "0" || tok().text == "1")) {
      out->push_back(tok().text == "1" ? 1 : 0);
      advance();
    } else {
      return errorExpected("boolean");
    }
    if (!consumeIf(Tok::kComma))
      break;
  }
  return expect(Tok::kRSquare, "']'");
}

Status Parser::parseArrayAttr(Attribute *out) {
  RS_RETURN_IF_ERROR(expect(Tok::kLSquare, "'['"));
  out->kind = AttrKind::kArray;
  if (consumeIf(Tok::kRSquare))
    return Status::ok();
  while (true) {
    Attribute e;
    RS_RETURN_IF_ERROR(parseAttribute(&e));
    out->elements.push_back(std::move(e));
    if (!consumeIf(Tok::kComma))
      break;
  }
  return expect(Tok::kRSquare, "']'");
}

Status Parser::parseAttrDict(std::vector<NamedAttribute> *out) {
  RS_RETURN_IF_ERROR(enter());
  RS_RETURN_IF_ERROR(expect(Tok::kLBrace, "'{'"));
  if (!consumeIf(Tok::kRBrace)) {
    while (true) {
      NamedAttribute na;
      if (is(Tok::kBareId)) {
        na.name = std::string(tok().text);
      } else if (is(Tok::kString)) {
        if (!decodeStringLiteral(tok().text, &na.name))
          return errorExpected("attribute name");
      } else {
        return errorExpected("attribute name");
      }
      advance();
      if (consumeIf(Tok::kEqual))
        RS_RETURN_IF_ERROR(parseAttribute(&na.value));
      out->push_back(std::move(na));
      if (!consumeIf(Tok::kComma))
        break;
    }
    RS_RETURN_IF_ERROR(expect(Tok::kRBrace, "'}'"));
  }
  leave();
  return Status::ok();
}

namespace {

Status dtypeOfTypeAttr(const Type &t, DType *out) {
  if (t.kind == TypeKind::kTensor && t.is_scalar_element) {
    *out = t.element;
    return Status::ok();
  }
  return invalidArgument();
}

} // namespace

Status Parser::parseKeywordAttr(size_t start, Attribute *out) {
  std::string_view kw = tok().text;
  if (kw == "true" || kw == "false") {
    out->kind = AttrKind::kBool;
    out->scalar_type = DType::kBool;
    out->int_value = kw == "true";
    advance();
  } else if (kw == "unit") {
    out->kind = AttrKind::kUnit;
    advance();
  } else if (kw == "dense" && nextCharIs('<')) {
    RS_RETURN_IF_ERROR(parseDense(out, nullptr));
  } else if (kw == "dense_resource" && nextCharIs('<')) {
    RS_RETURN_IF_ERROR(parseDenseResource(out, nullptr));
  } else if (kw == "array" && nextCharIs('<')) {
    RS_RETURN_IF_ERROR(parseDenseArray(start, out));
  } else if (atTypeStart()) {
    out->kind = AttrKind::kType;
    out->type = std::make_shared<Type>();
    RS_RETURN_IF_ERROR(parseType(out->type.get()));
  } else if (nextCharIs('<') || nextCharIs('(')) {
    // affine_map<...>, loc(...), sparse<...>, distinct[...]: kept verbatim
    advance();
    std::string_view body;
    RS_RETURN_IF_ERROR(skipBalanced(&body));
    out->kind = AttrKind::kOpaque;
    out->str = std::string(src_.substr(start, body.data() + body.size() - (src_.data() + start)));
  } else {
    return errorExpected("attribute");
  }
  return Status::ok();
}

Status Parser::parseDenseArray(size_t start, Attribute *out) {
  advance();
  RS_RETURN_IF_ERROR(expect(Tok::kLess, "'<'"));
  Type et;
  RS_RETURN_IF_ERROR(parseType(&et));
  DType dt = DType::kInvalid;
  if (!dtypeOfTypeAttr(et, &dt).isOk() || isComplex(dt))
    return errorAt(start, "unsupported dense array element type");
  out->kind = AttrKind::kDenseArray;
  out->scalar_type = dt;
  if (consumeIf(Tok::kColon)) {
    while (true) {
      if (dt == DType::kBool) {
        if (isKeyword("true") || isKeyword("false")) {
          out->ints.push_back(isKeyword("true"));
          advance();
        } else {
          int64_t v = 0;
          RS_RETURN_IF_ERROR(parseSignedInteger(&v));
          out->ints.push_back(v != 0);
        }
      } else if (isFloat(dt)) {
        Attribute f;
        RS_RETURN_IF_ERROR(parseAttribute(&f));
        if (f.kind == AttrKind::kFloat)
          out->floats.push_back(roundToFloatType(f.float_value, dt));
        else if (f.kind == AttrKind::kInteger)
          out->floats.push_back(roundToFloatType(static_cast<double>(f.int_value), dt));
        else
          return errorAt(start, "expected float in dense array");
      } else {
        int64_t v = 0;
        RS_RETURN_IF_ERROR(parseSignedInteger(&v));
        out->ints.push_back(v);
      }
      if (!consumeIf(Tok::kComma))
        break;
    }
  }
  RS_RETURN_IF_ERROR(expect(Tok::kGreater, "'>'"));
  return Status::ok();
}

Status Parser::parseNumberAttr(size_t start, Attribute *out) {
  bool neg = consumeIf(Tok::kMinus);
  if (!is(Tok::kInteger) && !is(Tok::kFloat))
    return errorExpected("number");
  Token lit = tok();
  advance();
  DType dt = lit.kind == Tok::kFloat ? DType::kF64 : DType::kI64;
  if (consumeIf(Tok::kColon)) {
    size_t type_pos = tok().pos;
    Type t;
    RS_RETURN_IF_ERROR(parseType(&t));
    if (!dtypeOfTypeAttr(t, &dt).isOk()) {
      out->kind = AttrKind::kOpaque; // e.g. `1 : index`
      out->str = std::string(src_.substr(start, prevEnd() - start));
      return Status::ok();
    }
    if (isComplex(dt))
      return errorAt(type_pos, "complex scalar attributes are not supported");
  }
  if (isFloat(dt)) {
    out->kind = AttrKind::kFloat;
    out->scalar_type = dt;
    RS_RETURN_IF_ERROR(parseFloatLiteral(lit, neg, dt, &out->float_value));
    // An attribute `v : t` holds v rounded to t.
    out->float_value = roundToFloatType(out->float_value, dt);
  } else {
    if (lit.kind == Tok::kFloat)
      return errorAt(lit.pos, "expected integer literal for an integer type");
    uint64_t mag = 0;
    if (!parseUnsigned(lit.text, &mag) ||
        mag > (neg ? (uint64_t{1} << 63) : static_cast<uint64_t>(UINT64_MAX)))
      return errorAt(lit.pos, "integer literal out of range");
    out->kind = dt == DType::kBool ? AttrKind::kBool : AttrKind::kInteger;
    out->scalar_type = dt;
    out->int_value = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
  }
  return Status::ok();
}

Status Parser::parseAttribute(Attribute *out) {
  RS_RETURN_IF_ERROR(enter());
  *out = Attribute();
  size_t start = tok().pos;
  switch (tok().kind) {
  case Tok::kBareId: RS_RETURN_IF_ERROR(parseKeywordAttr(start, out)); break;
  case Tok::kMinus:
  case Tok::kInteger:
  case Tok::kFloat: RS_RETURN_IF_ERROR(parseNumberAttr(start, out)); break;
  case Tok::kString:
    out->kind = AttrKind::kString;
    if (!decodeStringLiteral(tok().text, &out->str))
      return errorExpected("string");
    advance();
    break;
  case Tok::kSymbol: {
    out->kind = AttrKind::kSymbolRef;
    std::string_view s = tok().text.substr(1);
    if (!s.empty() && s.front() == '"') {
      if (!decodeStringLiteral(s, &out->str))
        return errorExpected("symbol");
    } else {
      out->str = std::string(s);
    }
    advance();
    break;
  }
  case Tok::kLSquare: RS_RETURN_IF_ERROR(parseArrayAttr(out)); break;
  case Tok::kLBrace:
    out->kind = AttrKind::kDictionary;
    RS_RETURN_IF_ERROR(parseAttrDict(&out->fields));
    // MLIR dictionaries are sorted by name.
    std::stable_sort(
        out->fields.begin(), out->fields.end(),
        [](const NamedAttribute &a, const NamedAttribute &b) { return a.name < b.name; });
    break;
  case Tok::kHashId: RS_RETURN_IF_ERROR(parseHashAttribute(out)); break;
  case Tok::kBangId:
  case Tok::kLParen:
    out->kind = AttrKind::kType;
    out->type = std::make_shared<Type>();
    RS_RETURN_IF_ERROR(parseType(out->type.get()));
    break;
  default: return errorExpected("attribute");
  }
  leave();
  return Status::ok();
}

Status Parser::expectAttribute(Tok k, std::string_view what, Attribute *out) {
  if (!is(k))
    return errorExpected(what);
  return parseAttribute(out);
}

Status Parser::parseItemValue(Attribute *out) {
  if (!is(Tok::kMinus) && !is(Tok::kInteger) && !is(Tok::kFloat))
    return parseAttribute(out);
  *out = Attribute();
  bool neg = consumeIf(Tok::kMinus);
  if (!is(Tok::kInteger) && !is(Tok::kFloat))
    return errorExpected("number");
  Token lit = tok();
  advance();
  if (lit.kind == Tok::kFloat) {
    out->kind = AttrKind::kFloat;
    out->scalar_type = DType::kF64;
    return parseFloatLiteral(lit, neg, DType::kF64, &out->float_value);
  }
  uint64_t mag = 0;
  if (!parseUnsigned(lit.text, &mag) || mag > (neg ? (uint64_t{1} << 63) : uint64_t{INT64_MAX}))
    return errorAt(lit.pos, "integer literal out of range");
  out->kind = AttrKind::kInteger;
  out->scalar_type = DType::kI64;
  out->int_value = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
  return Status::ok();
}

Status Parser::parseTopLevelAlias() {
  std::string name(tok().text);
  bool is_type = is(Tok::kBangId);
  advance();
  RS_RETURN_IF_ERROR(expect(Tok::kEqual, "'='"));
  if (is_type) {
    Type t;
    RS_RETURN_IF_ERROR(parseType(&t));
    type_aliases_[name] = std::move(t);
    return Status::ok();
  }
  if (isKeyword("loc")) // location aliases are ignored
    return skipOptionalLoc();
  Attribute a;
  RS_RETURN_IF_ERROR(parseAttribute(&a));
  attr_aliases_[name] = std::move(a);
  return Status::ok();
}

} // namespace rs::ir::detail
