//===- ir/parse_dense.cc - StableHLO parser: dense<...> literals ----------===//
//
// dense<...> : tensor<...> in all the spellings exporters use: splats (`dense<1.0>`),
// nested lists, per-element hex bit patterns of floats (`0x7F80` for bf16), booleans,
// complex pairs `(1.0, 2.0)`, and whole-tensor hex blobs `dense<"0x...">` (little-endian
// raw bytes; a blob of one element's size is a splat). The literal is tokenised into a
// flat list of scalars plus its nested shape, then converted once the type is known.
// Element types the Tensor cannot hold (i4, f8, quantized) keep the verbatim text as an
// opaque attribute. dense_resource<...> and the `{-# dialect_resources #-}` trailer are in
// parse_resources.cc.
//
//===----------------------------------------------------------------------===//
#include "ir/float_bits.h"
#include "ir/parser_impl.h"
#include "support/text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace rs::ir::detail {
namespace {

struct Scalar {
  Token tok; // kInteger, kFloat, or kBareId true/false
  bool neg = false;
};

struct Literal {
  std::vector<Scalar> scalars; // complex: re, im pairs
  Shape dims;                  // nesting extents, outermost first
  int leaf_depth = -1;
  bool is_list = false;
  bool complex = false;
  bool is_hex_blob = false;
  std::string blob;
};

bool isHexText(std::string_view t) { return t.size() > 2 && t[0] == '0' && t[1] == 'x'; }

bool parseU64(std::string_view text, uint64_t *out) {
  int base = 10;
  if (isHexText(text)) {
    base = 16;
    text.remove_prefix(2);
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out, base);
  return ec == std::errc() && ptr == text.data() + text.size();
}

double parseDecimal(std::string_view text, bool *ok) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  *ok = ptr == text.data() + text.size() &&
        (ec == std::errc() || ec == std::errc::result_out_of_range);
  if (ec == std::errc::result_out_of_range) // overflow to inf / underflow to 0, as strtod
    v = std::strtod(std::string(text).c_str(), nullptr);
  return v;
}

} // namespace

bool decodeHexBlob(std::string_view hex, std::string *out) {
  if (hex.size() < 2 || hex[0] != '0' || hex[1] != 'x' || hex.size() % 2)
    return false;
  out->clear();
  out->reserve(hex.size() / 2 - 1);
  for (size_t i = 2; i < hex.size(); i += 2) {
    int hi = hexDigitValue(hex[i]), lo = hexDigitValue(hex[i + 1]);
    if (hi < 0 || lo < 0)
      return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

Status Parser::parseFloatLiteral(const Token &lit, bool neg, DType dt, double *out) {
  int64_t width = dtypeBitWidth(dt);
  if (lit.kind == Tok::kInteger && isHexText(lit.text)) {
    uint64_t bits = 0;
    if (neg || !parseU64(lit.text, &bits) || (width < 64 && (bits >> width) != 0))
      return errorAt(lit.pos,
                     "hexadecimal float literal does not fit " + std::string(dtypeMlirName(dt)));
    *out = floatFromBits(bits, dt);
    return Status::ok();
  }
  bool ok = false;
  double v = parseDecimal(lit.text, &ok);
  if (!ok)
    return errorAt(lit.pos, "malformed float literal '" + std::string(lit.text) + "'");
  *out = neg ? -v : v;
  return Status::ok();
}

namespace {

/// Writes one element of type `dt` from a literal scalar (or a complex pair).
struct ElementWriter {
  Parser &p;
  DType dt;

  Status writeInt(const Scalar &s, uint8_t *dst) {
    if (s.tok.kind == Tok::kBareId) {
      if (dt != DType::kBool)
        return p.errorAt(s.tok.pos,
                         "expected integer literal, got '" + std::string(s.tok.text) + "'");
      *dst = s.tok.text == "true";
      return Status::ok();
    }
    uint64_t mag = 0;
    if (s.tok.kind != Tok::kInteger || !parseU64(s.tok.text, &mag))
      return p.errorAt(s.tok.pos,
                       "expected integer literal, got '" + std::string(s.tok.text) + "'");
    int64_t bits = dtypeBitWidth(dt);
    bool sign = isSigned(dt);
    // MLIR's iN are signless: a non-negative literal may use all N bits.
    bool fits = true;
    if (dt == DType::kBool)
      fits = !s.neg && mag <= 1;
    else if (s.neg)
      fits = sign && mag <= (uint64_t{1} << (bits - 1));
    else if (bits < 64)
      fits = mag < (uint64_t{1} << bits);
    if (!fits)
      return p.errorAt(s.tok.pos, "integer literal " + std::string(s.neg ? "-" : "") +
                                      std::string(s.tok.text) + " does not fit " +
                                      std::string(dtypeMlirName(dt)));
    uint64_t v = s.neg ? 0 - mag : mag;
    if (isSubByteInt(dt) && sign) { // stored sign-extended: 15 : i4 is -1
      const int shift = static_cast<int>(64 - bits);
      v = static_cast<uint64_t>(static_cast<int64_t>(v << shift) >> shift);
    }
    std::memcpy(dst, &v, static_cast<size_t>(dtypeSize(dt))); // little-endian host
    return Status::ok();
  }

  Status writeFloat(const Scalar &s, DType ft, uint8_t *dst) {
    if (s.tok.kind == Tok::kBareId)
      return p.errorAt(s.tok.pos, "expected float literal, got '" + std::string(s.tok.text) + "'");
    bool hex = s.tok.kind == Tok::kInteger && isHexText(s.tok.text);
    if (ft == DType::kF32 && !hex) { // correctly rounded straight from the decimal text
      float f = 0;
      auto [ptr, ec] = std::from_chars(s.tok.text.data(), s.tok.text.data() + s.tok.text.size(), f);
      if (ptr != s.tok.text.data() + s.tok.text.size() ||
          (ec != std::errc() && ec != std::errc::result_out_of_range))
        return p.errorAt(s.tok.pos, "malformed float literal '" + std::string(s.tok.text) + "'");
      if (ec == std::errc::result_out_of_range)
        f = std::strtof(std::string(s.tok.text).c_str(), nullptr);
      if (s.neg)
        f = -f;
      std::memcpy(dst, &f, 4);
      return Status::ok();
    }
    if (hex && (ft == DType::kF16 || ft == DType::kBF16 || ft == DType::kF32 || isMinifloat(ft))) {
      uint64_t bits = 0;
      int64_t width = dtypeBitWidth(ft);
      if (s.neg || !parseU64(s.tok.text, &bits) || (bits >> width) != 0)
        return p.errorAt(s.tok.pos, "hexadecimal float literal does not fit " +
                                        std::string(dtypeMlirName(ft)));
      std::memcpy(dst, &bits, static_cast<size_t>(dtypeSize(ft)));
      return Status::ok();
    }
    double v = 0;
    RS_RETURN_IF_ERROR(p.parseFloatLiteral(s.tok, s.neg, ft, &v));
    uint64_t bits = floatBitsOf(v, ft);
    std::memcpy(dst, &bits, static_cast<size_t>(dtypeSize(ft))); // little-endian
    return Status::ok();
  }

  /// `s` points at one scalar (two for complex).
  Status write(const Scalar *s, uint8_t *dst) {
    if (isComplex(dt)) {
      DType part = dt == DType::kComplex64 ? DType::kF32 : DType::kF64;
      RS_RETURN_IF_ERROR(writeFloat(s[0], part, dst));
      return writeFloat(s[1], part, dst + dtypeSize(part));
    }
    if (isFloat(dt))
      return writeFloat(*s, dt, dst);
    return writeInt(*s, dst);
  }
};

} // namespace

namespace {

struct LiteralParser {
  Parser &p;
  Literal &lit;
  int depth = 0;

  Status scalar() {
    Scalar s;
    s.neg = p.consumeIf(Tok::kMinus);
    if (!p.is(Tok::kInteger) && !p.is(Tok::kFloat) &&
        !(!s.neg && (p.isKeyword("true") || p.isKeyword("false"))))
      return p.errorExpected("element literal");
    s.tok = p.tok();
    p.advance();
    lit.scalars.push_back(s);
    return Status::ok();
  }

  Status leaf(int d) {
    if (lit.leaf_depth < 0)
      lit.leaf_depth = d;
    else if (lit.leaf_depth != d)
      return p.errorAt(p.tok().pos, "dense literal has inconsistent nesting");
    if (p.is(Tok::kLParen)) {
      if (!lit.scalars.empty() && !lit.complex)
        return p.errorAt(p.tok().pos, "dense literal mixes complex and real elements");
      lit.complex = true;
      p.advance();
      RS_RETURN_IF_ERROR(scalar());
      RS_RETURN_IF_ERROR(p.expect(Tok::kComma, "','"));
      RS_RETURN_IF_ERROR(scalar());
      return p.expect(Tok::kRParen, "')'");
    }
    if (lit.complex)
      return p.errorAt(p.tok().pos, "dense literal mixes complex and real elements");
    return scalar();
  }

  Status element(int d) {
    if (!p.is(Tok::kLSquare))
      return leaf(d);
    if (d >= kMaxDepth)
      return p.errorAt(p.tok().pos, "dense literal nested too deeply");
    lit.is_list = true;
    p.advance();
    int64_t count = 0;
    if (!p.is(Tok::kRSquare)) {
      while (true) {
        RS_RETURN_IF_ERROR(element(d + 1));
        ++count;
        if (!p.consumeIf(Tok::kComma))
          break;
      }
    }
    RS_RETURN_IF_ERROR(p.expect(Tok::kRSquare, "']'"));
    // Inner lists finish first, so extents are filled by depth, -1 until known.
    if (static_cast<int>(lit.dims.size()) <= d)
      lit.dims.resize(static_cast<size_t>(d) + 1, -1);
    int64_t &extent = lit.dims[static_cast<size_t>(d)];
    if (extent >= 0 && extent != count)
      return p.errorAt(p.tok().pos, "dense literal has inconsistent nesting");
    extent = count;
    return Status::ok();
  }
};

} // namespace

Status Parser::parseDense(Attribute *out, Type *type_out) {
  size_t start = tok().pos;
  advance(); // dense
  RS_RETURN_IF_ERROR(expect(Tok::kLess, "'<'"));
  Literal lit;
  size_t lit_pos = tok().pos;
  bool empty = false;
  if (is(Tok::kGreater)) {
    empty = true;
  } else if (is(Tok::kString)) {
    std::string hex;
    if (!decodeStringLiteral(tok().text, &hex) || !decodeHexBlob(hex, &lit.blob))
      return errorAt(tok().pos, "expected hexadecimal blob \"0x...\"");
    lit.is_hex_blob = true;
    advance();
  } else {
    LiteralParser lp{*this, lit};
    RS_RETURN_IF_ERROR(lp.element(0));
  }
  RS_RETURN_IF_ERROR(expect(Tok::kGreater, "'>'"));
  RS_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
  size_t type_pos = tok().pos;
  Type t;
  RS_RETURN_IF_ERROR(parseType(&t));
  size_t end = prevEnd();
  if (type_out)
    *type_out = t;
  *out = Attribute();
  bool static_shape = true;
  for (int64_t d : t.shape)
    static_shape = static_shape && d >= 0;
  if (!t.isTensor() || !static_shape || t.element == DType::kInvalid) {
    if (t.kind != TypeKind::kOther)
      return errorAt(type_pos, "expected static tensor type for dense literal");
    out->kind = AttrKind::kOpaque;
    out->str = std::string(src_.substr(start, end - start));
    out->tensor_type = std::make_shared<Type>(t);
    return Status::ok();
  }
  Result<int64_t> count = checkedElementCount(t.shape);
  int64_t esize = dtypeSize(t.element);
  if (!count.isOk() || *count > kMaxDenseBytes / esize)
    return errorAt(type_pos, "dense constant of type " + t.toString() + " is too large");
  int64_t n = *count;
  Tensor tensor = Tensor::zeros(t.element, t.shape);
  uint8_t *data = tensor.mutableData();
  if (lit.is_hex_blob) {
    auto blob_size = static_cast<int64_t>(lit.blob.size());
    if (blob_size == n * esize) {
      std::memcpy(data, lit.blob.data(), lit.blob.size());
    } else if (blob_size == esize) {
      if (n > 0)
        std::memcpy(data, lit.blob.data(), static_cast<size_t>(esize));
      fillSplat(data, esize, n);
    } else {
      return errorAt(lit_pos, "hex data has " + std::to_string(blob_size) + " bytes, type " +
                                  t.toString() + " needs " + std::to_string(n * esize));
    }
    if (t.element == DType::kBool)
      for (int64_t i = 0; i < n; ++i)
        data[i] = data[i] != 0;
  } else if (!empty || n != 0) {
    if (empty)
      return errorAt(lit_pos, "empty dense literal for type " + t.toString());
    if (lit.complex != isComplex(t.element))
      return errorAt(lit_pos, std::string(lit.complex ? "complex" : "real") +
                                  " literal for element type " +
                                  std::string(dtypeMlirName(t.element)));
    ElementWriter w{*this, t.element};
    size_t per = lit.complex ? 2 : 1;
    if (!lit.is_list) {
      // Convert into a scratch element first: a zero-element tensor has no room.
      uint8_t element[16] = {};
      RS_RETURN_IF_ERROR(w.write(lit.scalars.data(), element));
      if (n > 0) {
        std::memcpy(data, element, static_cast<size_t>(esize));
        fillSplat(data, esize, n);
      }
    } else {
      if (lit.dims != t.shape)
        return errorAt(lit_pos, "dense literal of shape " + shapeToString(lit.dims) +
                                    " does not match type " + t.toString());
      if (lit.scalars.size() != static_cast<size_t>(n) * per)
        return errorAt(lit_pos, "dense literal has the wrong number of elements");
      for (int64_t i = 0; i < n; ++i)
        RS_RETURN_IF_ERROR(w.write(&lit.scalars[static_cast<size_t>(i) * per], data + i * esize));
    }
  }
  out->kind = AttrKind::kDenseElements;
  out->tensor = std::move(tensor);
  out->tensor_type = std::make_shared<Type>(std::move(t));
  return Status::ok();
}

} // namespace rs::ir::detail
