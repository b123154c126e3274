//===- ir/parse_types.cc - StableHLO parser: types ------------------------===//
//
// tensor<2x3xf32>, tensor<?x4xf32, #enc>, tensor<f32>, bare element types (f32),
// complex<f32>, tuple<...>, !stablehlo.token, function types, and anything else
// (quantized, sub-byte or f8 element types, other dialects' types) as kOther with its
// verbatim spelling. Also the `: ...` type section of pretty ops and how it assigns
// result types.
//
//===----------------------------------------------------------------------===//
#include "ir/parser_impl.h"

namespace rs::ir::detail {
namespace {

bool allDigits(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

/// Builtin scalar type names that DType cannot hold: i4, ui2, f8E4M3FN, tf32, index...
bool isOtherScalarTypeName(std::string_view s) {
  if (s == "index" || s == "none" || s == "bf16" || s == "tf32")
    return true;
  if (s.size() >= 2 && s[0] == 'i' && allDigits(s.substr(1)))
    return true;
  if (s.size() >= 3 && (s.substr(0, 2) == "ui" || s.substr(0, 2) == "si") && allDigits(s.substr(2)))
    return true;
  if (s.size() >= 2 && s[0] == 'f' && s[1] >= '0' && s[1] <= '9')
    return true; // f16, f32, f8E4M3FN, f4E2M1FN, f6E3M2FN...
  return false;
}

} // namespace

bool Parser::atTypeStart() const {
  switch (tok().kind) {
  case Tok::kBangId:
  case Tok::kLParen: return true;
  case Tok::kBareId: {
    std::string_view t = tok().text;
    return t == "tensor" || t == "tuple" || t == "complex" || t == "vector" || t == "memref" ||
           isOtherScalarTypeName(t);
  }
  default: return false;
  }
}

Status Parser::parseTypeList(std::vector<Type> *out) {
  while (true) {
    Type t;
    RS_RETURN_IF_ERROR(parseType(&t));
    out->push_back(std::move(t));
    if (!is(Tok::kComma))
      return Status::ok();
    advance();
  }
}

Status Parser::parseFunctionType(Type *out) {
  *out = Type();
  out->kind = TypeKind::kFunction;
  if (consumeIf(Tok::kLParen)) {
    if (!is(Tok::kRParen))
      RS_RETURN_IF_ERROR(parseTypeList(&out->elements));
    RS_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  } else {
    Type t;
    RS_RETURN_IF_ERROR(parseType(&t));
    out->elements.push_back(std::move(t));
  }
  RS_RETURN_IF_ERROR(expect(Tok::kArrow, "'->'"));
  return parseResultTypes(&out->results);
}

Status Parser::parseResultTypes(std::vector<Type> *out) {
  if (consumeIf(Tok::kLParen)) {
    if (!is(Tok::kRParen))
      RS_RETURN_IF_ERROR(parseTypeList(out));
    return expect(Tok::kRParen, "')'");
  }
  Type r;
  RS_RETURN_IF_ERROR(parseType(&r));
  out->push_back(std::move(r));
  return Status::ok();
}

namespace {

/// Scans `2x?x3x` at `p`; returns the position after the last 'x'.
size_t scanDims(std::string_view src, size_t p, Shape *shape, bool *unranked, bool *overflow) {
  while (p < src.size()) {
    size_t q = p;
    int64_t dim = 0;
    if (src[q] == '?') {
      dim = -1;
      ++q;
    } else if (src[q] == '*') {
      ++q;
      if (q < src.size() && src[q] == 'x') {
        *unranked = true;
        p = q + 1;
      }
      return p;
    } else if (src[q] >= '0' && src[q] <= '9') {
      while (q < src.size() && src[q] >= '0' && src[q] <= '9') {
        if (dim > (int64_t{1} << 50)) {
          *overflow = true;
          return p;
        }
        dim = dim * 10 + (src[q] - '0');
        ++q;
      }
    } else {
      return p;
    }
    if (q >= src.size() || src[q] != 'x')
      return p;
    shape->push_back(dim);
    p = q + 1;
  }
  return p;
}

} // namespace

Status Parser::parseType(Type *out) {
  RS_RETURN_IF_ERROR(enter());
  *out = Type();
  size_t start = tok().pos;
  if (is(Tok::kLParen)) {
    RS_RETURN_IF_ERROR(parseFunctionType(out));
    leave();
    return Status::ok();
  }
  if (is(Tok::kBangId)) {
    std::string_view name = tok().text;
    if (name == "!stablehlo.token" && !nextCharIs('<')) {
      out->kind = TypeKind::kToken;
      advance();
    } else if (auto it = type_aliases_.find(name); it != type_aliases_.end() && !nextCharIs('<')) {
      *out = it->second;
      advance();
    } else {
      bool has_params = nextCharIs('<');
      advance();
      std::string_view params;
      if (has_params)
        RS_RETURN_IF_ERROR(skipBalanced(&params));
      out->kind = TypeKind::kOther;
      size_t end = has_params ? static_cast<size_t>(params.data() + params.size() - src_.data())
                              : start + name.size();
      out->text = std::string(src_.substr(start, end - start));
    }
    leave();
    return Status::ok();
  }
  if (!is(Tok::kBareId))
    return errorExpected("type");
  std::string_view name = tok().text;
  if (name == "tensor") {
    advance();
    if (!is(Tok::kLess))
      return errorExpected("'<'");
    size_t dims_start = tok().pos + 1;
    bool unranked = false, overflow = false;
    size_t after = scanDims(src_, dims_start, &out->shape, &unranked, &overflow);
    if (overflow)
      return errorAt(dims_start, "tensor dimension too large");
    lex_.resetTo(after);
    advance();
    Type elem;
    RS_RETURN_IF_ERROR(parseType(&elem));
    if (is(Tok::kComma)) {
      advance();
      size_t enc_start = tok().pos;
      Attribute enc;
      RS_RETURN_IF_ERROR(parseAttribute(&enc));
      size_t enc_end = prevEnd();
      out->text = std::string(src_.substr(enc_start, enc_end - enc_start));
    }
    if (!is(Tok::kGreater))
      return errorExpected("'>'");
    size_t end = tok().pos + 1;
    advance();
    bool plain = elem.kind == TypeKind::kTensor && elem.is_scalar_element && !unranked;
    if (plain) {
      out->kind = TypeKind::kTensor;
      out->element = elem.element;
    } else {
      out->kind = TypeKind::kOther;
      out->text = std::string(src_.substr(start, end - start));
    }
    leave();
    return Status::ok();
  }
  if (name == "tuple") {
    advance();
    RS_RETURN_IF_ERROR(expect(Tok::kLess, "'<'"));
    out->kind = TypeKind::kTuple;
    if (!is(Tok::kGreater))
      RS_RETURN_IF_ERROR(parseTypeList(&out->elements));
    RS_RETURN_IF_ERROR(expect(Tok::kGreater, "'>'"));
    leave();
    return Status::ok();
  }
  if (name == "complex" || name == "vector" || name == "memref") {
    advance();
    if (!is(Tok::kLess))
      return errorExpected("'<'");
    std::string_view params;
    RS_RETURN_IF_ERROR(skipBalanced(&params));
    std::string text = std::string(name) + std::string(params);
    if (text == "complex<f32>" || text == "complex<f64>") {
      out->kind = TypeKind::kTensor;
      out->is_scalar_element = true;
      out->element = text == "complex<f32>" ? DType::kComplex64 : DType::kComplex128;
    } else {
      out->kind = TypeKind::kOther;
      out->text = std::move(text);
    }
    leave();
    return Status::ok();
  }
  if (auto dt = dtypeFromMlirName(name); dt && name.substr(0, 2) != "si") {
    out->kind = TypeKind::kTensor;
    out->is_scalar_element = true;
    out->element = *dt;
    advance();
    leave();
    return Status::ok();
  }
  if (isOtherScalarTypeName(name)) {
    out->kind = TypeKind::kOther;
    out->text = std::string(name);
    advance();
    leave();
    return Status::ok();
  }
  return errorExpected("type");
}

Status Parser::parseTypeSection(TypeSection *out) {
  if (is(Tok::kLParen)) {
    Type fn;
    RS_RETURN_IF_ERROR(parseFunctionType(&fn));
    out->functional = true;
    out->inputs = std::move(fn.elements);
    out->results = std::move(fn.results);
    return Status::ok();
  }
  Type first;
  RS_RETURN_IF_ERROR(parseType(&first));
  if (is(Tok::kArrow)) { // chlo style `a -> r` / `a -> (r, s)`
    advance();
    out->functional = true;
    out->inputs.push_back(std::move(first));
    return parseResultTypes(&out->results);
  }
  out->inputs.push_back(std::move(first));
  while (is(Tok::kComma)) {
    Token next = peek();
    if (next.kind != Tok::kBangId && next.kind != Tok::kBareId)
      break;
    advance();
    if (!atTypeStart())
      return errorExpected("type");
    Type t;
    RS_RETURN_IF_ERROR(parseType(&t));
    out->inputs.push_back(std::move(t));
  }
  if (consumeIf(Tok::kArrow)) { // chlo binary ops: `a, b -> r`
    out->functional = true;
    return parseResultTypes(&out->results);
  }
  return Status::ok();
}

// Pretty forms print either a function type (operand types -> result types) or a list:
// one type shared by operands and the result (`stablehlo.add %a, %b : tensor<4xf32>`),
// one type per result (`optimization_barrier`), or operand types followed by the result
// types (`select : tensor<i1>, tensor<4xf32>`). Operand types are known from their
// definitions, so only the results are taken from a list: as many types as results,
// else the last ones.
Status Parser::assignResultTypes(OpState &st, const TypeSection &ts) {
  const std::vector<ValueId> &operands = st.op.operands;
  if (ts.functional) {
    if (ts.inputs.size() != operands.size())
      return errorAt(st.pos, "'" + st.op.name + "' has " + std::to_string(operands.size()) +
                                 " operands but its type lists " +
                                 std::to_string(ts.inputs.size()));
    for (size_t i = 0; i < operands.size(); ++i)
      if (ts.inputs[i] != valueType(operands[i]))
        return errorAt(st.pos, "operand #" + std::to_string(i) + " of '" + st.op.name +
                                   "' has type " + valueType(operands[i]).toString() +
                                   ", but the op says " + ts.inputs[i].toString());
    st.result_types = ts.results;
    return Status::ok();
  }
  size_t n = static_cast<size_t>(st.num_results);
  const std::vector<Type> &l = ts.inputs;
  st.result_types.clear();
  if (n == 0)
    return Status::ok();
  if (l.size() < n)
    return errorAt(st.pos, "'" + st.op.name + "' binds " + std::to_string(n) +
                               " results but its type lists " + std::to_string(l.size()));
  st.result_types.assign(l.end() - static_cast<std::ptrdiff_t>(n), l.end());
  return Status::ok();
}

} // namespace rs::ir::detail
