//===- test/ir/attributes_test.cc - dense literals and attribute syntax ----===//
#include "ir/float_bits.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace rs::ir {
namespace {

using testing::constant;

std::string constantError(std::string_view literal) {
  std::string text = "func.func @f() {\n  %0 = stablehlo.constant " + std::string(literal) +
                     "\n  func.return\n}\n";
  Result<Module> m = parseModule(text, "c.mlir");
  return m.isOk() ? std::string("ok") : m.status().message();
}

template <typename T> std::vector<T> values(const Attribute &a) {
  std::vector<T> out(static_cast<size_t>(a.tensor.byteSize()) / sizeof(T));
  if (!out.empty())
    std::memcpy(out.data(), a.tensor.data(), out.size() * sizeof(T));
  return out;
}

/// The attribute of `k` in `func.func @f() attributes {k = <text>}`.
Attribute funcAttr(std::string_view text) {
  std::string src = "func.func @f() attributes {k = " + std::string(text) + "} {\n  return\n}\n";
  Result<Module> m = parseModule(src, "a.mlir");
  EXPECT_TRUE(m.isOk()) << text << ": " << m.status().toString();
  if (!m.isOk())
    return Attribute();
  const Attribute *a = m->ops[0].attr("k");
  return a ? *a : Attribute();
}

TEST(Dense, SplatsListsAndNesting) {
  Attribute a = constant("dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>");
  EXPECT_EQ(a.kind, AttrKind::kDenseElements);
  EXPECT_EQ(a.tensor.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<int32_t>(a), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(a.tensor_type->toString(), "tensor<2x3xi32>");

  Attribute s = constant("dense<2.500000e-01> : tensor<2x2xf32>");
  EXPECT_EQ(values<float>(s), (std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f}));

  Attribute i = constant("dense<1> : tensor<3xf64>"); // integer literal for a float type
  EXPECT_EQ(values<double>(i), (std::vector<double>{1.0, 1.0, 1.0}));

  Attribute e = constant("dense<> : tensor<0x3xf32>");
  EXPECT_EQ(e.tensor.numElements(), 0);
  Attribute e2 = constant("dense<[]> : tensor<0xi64>");
  EXPECT_EQ(e2.tensor.shape(), (Shape{0}));
  // A splat of a zero-element tensor is validated but writes nothing.
  EXPECT_EQ(constant("dense<(1.0, 2.0)> : tensor<3x0xcomplex<f64>>").tensor.numElements(), 0);
  EXPECT_EQ(constant("dense<7> : tensor<0xi64>").tensor.byteSize(), 0);
}

TEST(Dense, IntegerRangesAndBooleans) {
  EXPECT_EQ(values<int8_t>(constant("dense<[-128, 127, 255]> : tensor<3xi8>")),
            (std::vector<int8_t>{-128, 127, -1}));
  EXPECT_EQ(values<uint64_t>(constant("dense<18446744073709551615> : tensor<ui64>")),
            (std::vector<uint64_t>{UINT64_MAX}));
  EXPECT_EQ(values<int64_t>(constant("dense<[-9223372036854775808, 0x10]> : tensor<2xi64>")),
            (std::vector<int64_t>{INT64_MIN, 16}));
  EXPECT_EQ(values<uint8_t>(constant("dense<[true, false, true]> : tensor<3xi1>")),
            (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(values<uint8_t>(constant("dense<true> : tensor<2xi1>")), (std::vector<uint8_t>{1, 1}));
  EXPECT_EQ(values<uint16_t>(constant("dense<65535> : tensor<ui16>")),
            (std::vector<uint16_t>{65535}));
}

TEST(Dense, FloatBitPatternsAndRounding) {
  // bf16 bit patterns per element, and decimals rounded to nearest-even.
  EXPECT_EQ(values<uint16_t>(constant("dense<[0.0, 0x7F80, 0xFF80, -1.5]> : tensor<4xbf16>")),
            (std::vector<uint16_t>{0x0000, 0x7F80, 0xFF80, 0xBFC0}));
  // f16: max finite, overflow at the midpoint to infinity, smallest subnormal.
  EXPECT_EQ(values<uint16_t>(constant("dense<[65504.0, 65520.0, 6.0e-8, -0.0]> : tensor<4xf16>")),
            (std::vector<uint16_t>{0x7BFF, 0x7C00, 0x0001, 0x8000}));
  // f64 NaN payload is kept bit for bit.
  EXPECT_EQ(values<uint64_t>(constant("dense<0xFFF0000000000001> : tensor<f64>")),
            (std::vector<uint64_t>{0xFFF0000000000001ull}));
  std::vector<uint32_t> f =
      values<uint32_t>(constant("dense<[0xFF800000, 1.0e-40]> : tensor<2xf32>"));
  EXPECT_EQ(f[0], 0xFF800000u);
  float sub = 0;
  std::memcpy(&sub, &f[1], 4);
  EXPECT_EQ(sub, 1.0e-40f);
  // f32 decimals are rounded correctly from the text (not through double).
  EXPECT_EQ(values<float>(constant("dense<0.1> : tensor<f32>"))[0], 0.1f);
}

TEST(Dense, HexBlobsAndComplex) {
  EXPECT_EQ(values<float>(constant("dense<\"0x0000803F00000040\"> : tensor<2xf32>")),
            (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(values<float>(constant("dense<\"0x0000803F\"> : tensor<3xf32>")),
            (std::vector<float>{1.0f, 1.0f, 1.0f}));
  EXPECT_EQ(values<float>(constant("dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>")),
            (std::vector<float>{1.0f, 2.0f, 3.0f, -4.0f}));
  EXPECT_EQ(values<double>(constant("dense<(1.5,0.0)> : tensor<2xcomplex<f64>>")),
            (std::vector<double>{1.5, 0.0, 1.5, 0.0}));
}

TEST(Dense, DenseResourceBlobs) {
  Result<Module> m = parseModule(R"(func.func @f() -> tensor<2xbf16> {
  %0 = stablehlo.constant dense_resource<blob0> : tensor<2xbf16>
  return %0 : tensor<2xbf16>
}
{-#
  dialect_resources: {
    builtin: {
      blob0: "0x0200000000400040"
    }
  }
#-}
)",
                                 "r.mlir");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  const Attribute *v = m->ops[0].regions[0].blocks[0].ops[0].attr("value");
  EXPECT_EQ(values<uint16_t>(*v), (std::vector<uint16_t>{0x4000, 0x4000}));
}

TEST(Dense, TheResourceOpenerInAStringOrACommentIsNotAResourceBlock) {
  // Found by fuzz_vhlo_reader: a decoded string attribute holding "{-#" printed fine but
  // did not parse back. Only a `{-#` outside strings and comments opens the block.
  Result<Module> m = parseModule(R"(// a comment with {-# in it
func.func @f() -> (tensor<2xbf16> {jax.result_info = "a{-#b\"{-#"}) {
  %0 = stablehlo.constant dense_resource<blob0> : tensor<2xbf16>
  return %0 : tensor<2xbf16>
}
{-#
  dialect_resources: {
    builtin: {
      blob0: "0x0200000000400040"
    }
  }
#-}
)",
                                 "r.mlir");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  Result<Module> plain = parseModule(R"(func.func @f() -> (tensor<i1> {jax.result_info = "{-#"}) {
  %0 = stablehlo.constant dense<true> : tensor<i1>
  return %0 : tensor<i1>
}
)",
                                     "s.mlir");
  ASSERT_TRUE(plain.isOk()) << plain.status().toString();
}

TEST(Dense, UnsupportedElementTypesStayVerbatim) {
  Attribute a = constant("dense<[1, -2]> : tensor<2xi3>");
  EXPECT_EQ(a.kind, AttrKind::kOpaque);
  EXPECT_EQ(a.str, "dense<[1, -2]> : tensor<2xi3>");
  Attribute b = constant("dense<[1.0, 2.0]> : tensor<2xtf32>");
  EXPECT_EQ(b.str, "dense<[1.0, 2.0]> : tensor<2xtf32>");
}

TEST(Dense, SubByteAndMinifloatElementsAreHeld) {
  Attribute a = constant("dense<[1, -2]> : tensor<2xi2>");
  EXPECT_EQ(a.kind, AttrKind::kDenseElements);
  EXPECT_EQ(a.tensor.dtype(), DType::kI2);
  EXPECT_EQ(values<int8_t>(a), (std::vector<int8_t>{1, -2}));
  Attribute b = constant("dense<[1.0, 2.0]> : tensor<2xf8E4M3FN>");
  EXPECT_EQ(b.tensor.dtype(), DType::kF8E4M3FN);
  EXPECT_EQ(values<uint8_t>(b), (std::vector<uint8_t>{0x38, 0x40}));
}

TEST(Dense, BadLiteralsAreErrors) {
  EXPECT_EQ(constantError("dense<[1, 2]> : tensor<3xi32>"),
            "c.mlir:2:33: error: dense literal of shape [2] does not match type tensor<3xi32>");
  EXPECT_EQ(constantError("dense<300> : tensor<i8>"),
            "c.mlir:2:33: error: integer literal 300 does not fit i8");
  EXPECT_EQ(constantError("dense<-1> : tensor<ui8>"),
            "c.mlir:2:34: error: integer literal -1 does not fit ui8");
  EXPECT_EQ(constantError("dense<1.5> : tensor<i32>"),
            "c.mlir:2:33: error: expected integer literal, got '1.5'");
  EXPECT_EQ(constantError("dense<[[1, 2], [3]]> : tensor<2x2xi32>"),
            "c.mlir:2:45: error: dense literal has inconsistent nesting");
  EXPECT_EQ(constantError("dense<\"0x0000\"> : tensor<3xf32>"),
            "c.mlir:2:33: error: hex data has 2 bytes, type tensor<3xf32> needs 12");
  EXPECT_EQ(constantError("dense<0x1FFFF> : tensor<bf16>"),
            "c.mlir:2:33: error: hexadecimal float literal does not fit bf16");
  EXPECT_EQ(constantError("dense<1.0> : tensor<99999999999x99999999999xf32>"),
            "c.mlir:2:40: error: dense constant of type tensor<99999999999x99999999999xf32> "
            "is too large");
}

TEST(Attributes, ScalarsArraysAndDictionaries) {
  Attribute i = funcAttr("7 : i32");
  EXPECT_EQ(i.kind, AttrKind::kInteger);
  EXPECT_EQ(i.int_value, 7);
  EXPECT_EQ(i.scalar_type, DType::kI32);
  EXPECT_EQ(funcAttr("-3").scalar_type, DType::kI64);
  Attribute f = funcAttr("5.000000e-01 : f32");
  EXPECT_EQ(f.kind, AttrKind::kFloat);
  EXPECT_EQ(f.float_value, 0.5);
  EXPECT_EQ(f.scalar_type, DType::kF32);
  EXPECT_EQ(funcAttr("0x7F800000 : f32").float_value, INFINITY);
  EXPECT_EQ(funcAttr("true").kind, AttrKind::kBool);
  EXPECT_EQ(funcAttr("unit").kind, AttrKind::kUnit);
  EXPECT_EQ(funcAttr("\"a\\\"b\\0A\"").str, "a\"b\n");
  EXPECT_EQ(funcAttr("@\"weird name\"").str, "weird name");
  Attribute arr = funcAttr("[1 : i32, \"x\", [@f]]");
  ASSERT_EQ(arr.elements.size(), 3u);
  EXPECT_EQ(arr.elements[2].elements[0].kind, AttrKind::kSymbolRef);
  Attribute d = funcAttr("{z = 1, a, m = {y = 2, b = 3}}");
  ASSERT_EQ(d.fields.size(), 3u);
  EXPECT_EQ(d.fields[0].name, "a"); // dictionaries are sorted by name
  EXPECT_EQ(d.fields[0].value.kind, AttrKind::kUnit);
  EXPECT_EQ(d.field("m")->fields[0].name, "b");
  EXPECT_EQ(printAttribute(d), "{a, m = {b = 3 : i64, y = 2 : i64}, z = 1 : i64}");
  Attribute t = funcAttr("(tensor<2xf32>, !stablehlo.token) -> tuple<tensor<i1>>");
  EXPECT_EQ(t.kind, AttrKind::kType);
  EXPECT_EQ(t.type->toString(), "(tensor<2xf32>, !stablehlo.token) -> tuple<tensor<i1>>");
}

TEST(Attributes, DenseArraysEnumsAndStructs) {
  EXPECT_EQ(funcAttr("array<i64>").ints.size(), 0u);
  Attribute b = funcAttr("array<i1: true, false>");
  EXPECT_EQ(b.scalar_type, DType::kBool);
  EXPECT_EQ(b.ints, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(funcAttr("array<f32: 1.5, -2.0>").floats, (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(funcAttr("array<i64: -1, 2>").ints, (std::vector<int64_t>{-1, 2}));

  Attribute e = funcAttr("#stablehlo<precision HIGHEST>");
  EXPECT_EQ(e.kind, AttrKind::kEnum);
  EXPECT_EQ(e.dialect, "stablehlo");
  EXPECT_EQ(e.name, "precision");
  EXPECT_EQ(e.str, "HIGHEST");

  Attribute g = funcAttr("#stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], "
                         "operand_batching_dims = [], start_index_map = [0], "
                         "index_vector_dim = 2>");
  EXPECT_EQ(g.kind, AttrKind::kStruct);
  EXPECT_EQ(g.field("offset_dims")->ints, (std::vector<int64_t>{2}));
  EXPECT_EQ(g.field("operand_batching_dims"), nullptr); // empty lists are dropped
  EXPECT_EQ(g.field("index_vector_dim")->int_value, 2);
  // Field order is canonical whatever the spelling.
  Attribute s1 = funcAttr("#stablehlo.scatter<index_vector_dim = 1, update_window_dims = [1]>");
  Attribute s2 = funcAttr("#stablehlo.scatter<update_window_dims = [1], index_vector_dim = 1>");
  EXPECT_EQ(s1, s2);
  EXPECT_EQ(printAttribute(s1),
            "#stablehlo.scatter<update_window_dims = [1], index_vector_dim = 1>");

  Attribute ch = funcAttr("#stablehlo.channel_handle<handle = 1, type = 0>");
  EXPECT_EQ(ch.field("handle")->int_value, 1);

  Attribute o = funcAttr("#sdy.sharding<@mesh, [{\"x\"}, {}]>");
  EXPECT_EQ(o.kind, AttrKind::kOpaque);
  EXPECT_EQ(o.str, "#sdy.sharding<@mesh, [{\"x\"}, {}]>");
  Attribute acc = funcAttr("#stablehlo.result_accuracy<atol = 0.0, rtol = 0.0, ulps = 0, mode = "
                           "#stablehlo.result_accuracy_mode<DEFAULT>>");
  EXPECT_EQ(acc.kind, AttrKind::kOpaque);
}

TEST(Attributes, AliasesAreResolved) {
  Result<Module> m = parseModule(R"(#prec = #stablehlo<precision HIGH>
!t = tensor<2xf32>
func.func @f(%a: !t) -> !t attributes {p = #prec} {
  return %a : tensor<2xf32>
}
)",
                                 "a.mlir");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  EXPECT_EQ(m->ops[0].attr("p")->str, "HIGH");
  EXPECT_EQ(functionType(m->ops[0]).toString(), "(tensor<2xf32>) -> tensor<2xf32>");
}

TEST(Types, SpellingsAndEquality) {
  Result<Module> m = parseModule(R"(func.func @f(%a: tensor<?x4xf32, #stablehlo.bounds<8, ?>>,
    %b: tensor<2x!quant.uniform<i8:f32, 0.5:-3>>, %c: tuple<tensor<f32>, tuple<>>,
    %d: !stablehlo.token, %e: tensor<3xcomplex<f64>>, %f: tensor<4xi3>, %g: tensor<bf16>) {
  return
}
)",
                                 "t.mlir");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  const std::vector<Type> &in = functionType(m->ops[0]).elements;
  ASSERT_EQ(in.size(), 7u);
  EXPECT_EQ(in[0].kind, TypeKind::kTensor);
  EXPECT_EQ(in[0].shape, (Shape{-1, 4}));
  EXPECT_EQ(in[0].toString(), "tensor<?x4xf32, #stablehlo.bounds<8, ?>>");
  EXPECT_EQ(in[1].kind, TypeKind::kOther);
  EXPECT_EQ(in[1].toString(), "tensor<2x!quant.uniform<i8:f32, 0.5:-3>>");
  EXPECT_EQ(in[2].kind, TypeKind::kTuple);
  EXPECT_EQ(in[2].toString(), "tuple<tensor<f32>, tuple<>>");
  EXPECT_EQ(in[3].kind, TypeKind::kToken);
  EXPECT_EQ(in[4].element, DType::kComplex128);
  EXPECT_EQ(in[4].toString(), "tensor<3xcomplex<f64>>");
  EXPECT_EQ(in[5].kind, TypeKind::kOther);
  EXPECT_EQ(in[5].text, "tensor<4xi3>");
  EXPECT_TRUE(in[6].isTensor());
  EXPECT_EQ(in[6].rank(), 0);
  EXPECT_EQ(in[6].element, DType::kBF16);
  EXPECT_NE(in[0], in[6]);
  EXPECT_EQ(Type::tensor(DType::kF32, {2, 3}).toString(), "tensor<2x3xf32>");
}

TEST(FloatBits, RoundToNearestEven) {
  EXPECT_EQ(doubleToHalfBits(1.0), 0x3C00);
  EXPECT_EQ(doubleToHalfBits(1.0 + std::ldexp(1.0, -11)), 0x3C00); // tie -> even
  EXPECT_EQ(doubleToHalfBits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -25)), 0x0000); // half the smallest subnormal
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.5, -25)), 0x0001);
  EXPECT_EQ(doubleToHalfBits(NAN) & 0x7E00, 0x7E00);
  EXPECT_EQ(doubleToBF16Bits(-INFINITY), 0xFF80);
  EXPECT_EQ(doubleToBF16Bits(3.0e38), 0x7F62);
  EXPECT_EQ(halfBitsToDouble(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(bf16BitsToDouble(0xBFC0), -1.5);
  EXPECT_TRUE(std::isnan(halfBitsToDouble(0x7E00)));
}

} // namespace
} // namespace rs::ir
