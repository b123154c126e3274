//===- test/ir/minifloat_test.cc - minifloat and sub-byte literals ---------===//
//
// Exact bit patterns of ir::roundToMinifloat (round to nearest even; overflow to infinity,
// NaN or the largest finite value by format; FNUZ's unsigned zero; f8E8M0FNU's powers of
// two), minifloatToDouble, and dense literals of the sub-byte integers and minifloats
// (decimal, hexadecimal, sign extension, range errors, printing).
//
//===----------------------------------------------------------------------===//
#include "ir/float_bits.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace rs::ir {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int bitsOf(DType t, double v) { return roundToMinifloat(v, *minifloatFormat(t)); }
double valueOf(DType t, int bits) {
  return minifloatToDouble(static_cast<uint8_t>(bits), *minifloatFormat(t));
}

TEST(Minifloat, F8E4M3FN) {
  const DType t = DType::kF8E4M3FN;
  EXPECT_EQ(bitsOf(t, 1.0), 0x38);
  EXPECT_EQ(bitsOf(t, 448.0), 0x7E); // largest finite
  EXPECT_EQ(bitsOf(t, 464.0), 0x7E); // halfway to 480 (the NaN pattern): to even
  EXPECT_EQ(bitsOf(t, 465.0), 0x7F); // rounds past the largest: NaN
  EXPECT_EQ(bitsOf(t, -1e6), 0xFF);  // negative NaN
  EXPECT_EQ(bitsOf(t, kInf), 0x7F);  // no infinity
  EXPECT_EQ(bitsOf(t, kNaN), 0x7F);
  EXPECT_EQ(bitsOf(t, -0.0), 0x80);
  EXPECT_EQ(bitsOf(t, 0x1p-9), 0x01);    // smallest subnormal
  EXPECT_EQ(bitsOf(t, 0x1p-10), 0x00);   // halfway to zero: to even
  EXPECT_EQ(bitsOf(t, 0x1.8p-10), 0x01); // above halfway
  EXPECT_EQ(bitsOf(t, 0.1), 0x1D);       // 0.1015625
  EXPECT_EQ(valueOf(t, 0x7E), 448.0);
  EXPECT_TRUE(std::isnan(valueOf(t, 0xFF)));
  EXPECT_EQ(valueOf(t, 0x81), -0x1p-9);
}

TEST(Minifloat, FnuzHasNoNegativeZeroAndOneNaN) {
  const DType t = DType::kF8E4M3FNUZ;
  EXPECT_EQ(bitsOf(t, 1.0), 0x40); // bias 8
  EXPECT_EQ(bitsOf(t, -0.0), 0x00);
  EXPECT_EQ(bitsOf(t, -0x1p-20), 0x00); // rounds to -0, which is +0 here
  EXPECT_EQ(bitsOf(t, kNaN), 0x80);
  EXPECT_EQ(bitsOf(t, 240.0), 0x7F);
  EXPECT_EQ(bitsOf(t, -1000.0), 0x80);
  EXPECT_EQ(bitsOf(t, -240.0), 0xFF);
  EXPECT_TRUE(std::isnan(valueOf(t, 0x80)));
  EXPECT_EQ(valueOf(DType::kF8E5M2FNUZ, 0x01), 0x1p-17);
  EXPECT_EQ(valueOf(DType::kF8E4M3B11FNUZ, 0x7F), 30.0);
}

TEST(Minifloat, IeeeLikeFormatsOverflowToInfinity) {
  EXPECT_EQ(bitsOf(DType::kF8E5M2, 57344.0), 0x7B);
  EXPECT_EQ(bitsOf(DType::kF8E5M2, 61440.0), 0x7C); // halfway to 2^16: to even, infinity
  EXPECT_EQ(bitsOf(DType::kF8E5M2, -kInf), 0xFC);
  EXPECT_EQ(bitsOf(DType::kF8E5M2, kNaN), 0x7E); // quiet
  EXPECT_EQ(bitsOf(DType::kF8E4M3, 240.0), 0x77);
  EXPECT_EQ(bitsOf(DType::kF8E4M3, 1e4), 0x78);
  EXPECT_EQ(bitsOf(DType::kF8E3M4, 15.5), 0x6F);
  EXPECT_EQ(valueOf(DType::kF8E3M4, 0x70), kInf);
}

TEST(Minifloat, FiniteOnlyFormatsSaturate) {
  const DType t = DType::kF4E2M1FN;
  EXPECT_EQ(bitsOf(t, 6.0), 0x7);
  EXPECT_EQ(bitsOf(t, 7.0), 0x7);
  EXPECT_EQ(bitsOf(t, -100.0), 0xF);
  EXPECT_EQ(bitsOf(t, kInf), 0x7);
  EXPECT_EQ(bitsOf(t, kNaN), 0x0);
  EXPECT_EQ(bitsOf(t, 0.25), 0x0); // halfway between 0 and 0.5: to even
  EXPECT_EQ(bitsOf(t, 0.75), 0x2); // halfway between 0.5 and 1: to even (1)
  EXPECT_EQ(bitsOf(DType::kF6E3M2FN, 1e9), 0x1F);
  EXPECT_EQ(valueOf(DType::kF6E3M2FN, 0x3F), -28.0);
  EXPECT_EQ(valueOf(DType::kF6E2M3FN, 0x1F), 7.5);
}

TEST(Minifloat, F8E8M0FNUHoldsPowersOfTwo) {
  const DType t = DType::kF8E8M0FNU;
  EXPECT_EQ(bitsOf(t, 1.0), 0x7F);
  EXPECT_EQ(bitsOf(t, 3.0), 0x81); // 1.5 * 2: halfway, rounds up to 4
  EXPECT_EQ(bitsOf(t, 2.9), 0x80);
  EXPECT_EQ(bitsOf(t, 0.0), 0xFF);  // no zero: NaN
  EXPECT_EQ(bitsOf(t, -1.0), 0xFF); // no sign: NaN
  EXPECT_EQ(bitsOf(t, 0x1p-127), 0x00);
  EXPECT_EQ(bitsOf(t, 0x1p127), 0xFE);
  EXPECT_EQ(bitsOf(t, 0x1p128), 0xFF);
  EXPECT_EQ(valueOf(t, 0x00), 0x1p-127);
  EXPECT_TRUE(std::isnan(valueOf(t, 0xFF)));
}

using testing::constant;

std::vector<uint8_t> bytes(const Attribute &a) {
  return std::vector<uint8_t>(a.tensor.data(), a.tensor.data() + a.tensor.byteSize());
}

TEST(MinifloatLiterals, DecimalAndHexElements) {
  Attribute a = constant("dense<[1.0, -0.0, 0.1, 0x7F, 0xFF, 1000.0]> : tensor<6xf8E4M3FN>");
  EXPECT_EQ(a.tensor.dtype(), DType::kF8E4M3FN);
  EXPECT_EQ(bytes(a), (std::vector<uint8_t>{0x38, 0x80, 0x1D, 0x7F, 0xFF, 0x7F}));
  EXPECT_EQ(bytes(constant("dense<[0x07, 0x0F, 3.1415]> : tensor<3xf4E2M1FN>")),
            (std::vector<uint8_t>{0x07, 0x0F, 0x05}));
}

TEST(MinifloatLiterals, HexMustFitTheBitWidth) {
  std::string text = "func.func @f() {\n  %0 = stablehlo.constant dense<0x10> : "
                     "tensor<f4E2M1FN>\n  func.return\n}\n";
  Result<Module> m = parseModule(text, "c.mlir");
  ASSERT_FALSE(m.isOk());
  EXPECT_NE(m.status().message().find("does not fit f4E2M1FN"), std::string::npos)
      << m.status().message();
}

TEST(SubByteLiterals, StoredSignExtendedAndRangeChecked) {
  EXPECT_EQ(bytes(constant("dense<[-8, -1, 7, 15]> : tensor<4xi4>")),
            (std::vector<uint8_t>{0xF8, 0xFF, 0x07, 0xFF})); // 15 : i4 (signless) is -1
  EXPECT_EQ(bytes(constant("dense<[0, 3]> : tensor<2xui2>")), (std::vector<uint8_t>{0, 3}));
  for (const char *bad : {"dense<16> : tensor<i4>", "dense<-9> : tensor<i4>",
                          "dense<-1> : tensor<ui4>", "dense<4> : tensor<ui2>"}) {
    std::string text =
        "func.func @f() {\n  %0 = stablehlo.constant " + std::string(bad) + "\n  func.return\n}\n";
    Result<Module> m = parseModule(text, "c.mlir");
    EXPECT_FALSE(m.isOk()) << bad;
  }
}

TEST(MinifloatLiterals, PrintedValuesParseBack) {
  const std::string text = "func.func @f() {\n  %0 = stablehlo.constant dense<[1.5, -0.0, "
                           "0x7F, 0.001953125]> : tensor<4xf8E4M3FN>\n  %1 = "
                           "stablehlo.constant dense<[-8, 7]> : tensor<2xi4>\n  func.return\n}\n";
  Result<Module> m = parseModule(text, "c.mlir");
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  const std::string printed = printGeneric(*m);
  EXPECT_NE(printed.find("0x7F"), std::string::npos) << printed;
  EXPECT_NE(printed.find("[-8, 7]"), std::string::npos) << printed;
  Result<Module> again = parseModule(printed, "printed.mlir");
  ASSERT_TRUE(again.isOk()) << again.status().toString() << "\n" << printed;
  EXPECT_EQ(bytes(*again->ops[0].regions[0].blocks[0].ops[0].attr("value")),
            bytes(*m->ops[0].regions[0].blocks[0].ops[0].attr("value")));
}

} // namespace
} // namespace rs::ir
