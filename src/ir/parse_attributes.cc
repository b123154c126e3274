//===- ir/parse_attributes.cc - StableHLO parser: attributes --------------===//
//
// Scalars (`1 : i64`, `0.5`, `true`), strings, symbols, types, arrays, dictionaries,
// dense arrays (`array<i64: 1, 2>`), #stablehlo enums (`#stablehlo<precision DEFAULT>`)
// and structs (dot, gather, scatter, conv, dot_algorithm, channel_handle,
// output_operand_alias), aliases, and everything else (#sdy..., loc(...)) as opaque
// text. dense<...> literals are in parse_dense.cc.
//
//===----------------------------------------------------------------------===//
#include "ir/float_bits.h"
#include "ir/parser_impl.h"

#include <algorithm>
#include <charconv>
#include <cstring>

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

bool parseUnsigned(std::string_view text, uint64_t *out) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && text[1] == 'x') {
    base = 16;
    text.remove_prefix(2);
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out, base);
  return ec == std::errc() && ptr == text.data() + text.size();
}

} // namespace

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

Status Parser::parseAttribute(Attribute *out) {
  RS_RETURN_IF_ERROR(enter());
  *out = Attribute();
  size_t start = tok().pos;
  switch (tok().kind) {
  case Tok::kBareId: {
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
    break;
  }
  case Tok::kMinus:
  case Tok::kInteger:
  case Tok::kFloat: {
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
        break;
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
    break;
  }
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
