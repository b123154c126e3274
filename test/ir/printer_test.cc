//===- test/ir/printer_test.cc - generic-form printer ----------------------===//
#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

namespace rs::ir {
namespace {

Module parseOk(std::string_view text) {
  Result<Module> m = parseModule(text, "p.mlir");
  EXPECT_TRUE(m.isOk()) << m.status().toString();
  return m.isOk() ? std::move(m).value() : Module();
}

/// The value attribute of the first op of the first function.
std::string printedConstant(std::string_view literal) {
  Module m = parseOk("func.func @f() {\n  %0 = stablehlo.constant " + std::string(literal) +
                     "\n  return\n}\n");
  if (m.ops.empty())
    return "";
  return printAttribute(*m.ops[0].regions[0].blocks[0].ops[0].attr("value"));
}

void expectRoundTrip(const Module &m) {
  std::string printed = printGeneric(m);
  Result<Module> again = parseModule(printed, "printed");
  ASSERT_TRUE(again.isOk()) << again.status().toString() << "\n" << printed;
  EXPECT_TRUE(*again == m) << printed;
  EXPECT_EQ(printGeneric(*again), printed);
}

TEST(Printer, PrintsTheWholeModuleInGenericForm) {
  Module m = parseOk(R"(
module @m attributes {mhlo.num_partitions = 1 : i32} {
  func.func @main(%arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
    %0:2 = stablehlo.optimization_barrier %arg0, %arg0 : tensor<2xf32>, tensor<2xf32>
    %cst = stablehlo.constant dense<[1.5, 0x7FC00001]> : tensor<2xf32>
    %1 = stablehlo.add %0#1, %cst : tensor<2xf32>
    return %0#0, %1 : tensor<2xf32>, tensor<2xf32>
  }
}
)");
  EXPECT_EQ(printGeneric(m),
            R"("builtin.module"() <{sym_name = "m"}> ({
  "func.func"() <{function_type = (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>), sym_name = "main"}> ({
  ^bb0(%0: tensor<2xf32>):
    %1:2 = "stablehlo.optimization_barrier"(%0, %0) : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    %3 = "stablehlo.constant"() <{value = dense<[1.5, 0x7FC00001]> : tensor<2xf32>}> : () -> tensor<2xf32>
    %4 = "stablehlo.add"(%1#1, %3) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%1#0, %4) : (tensor<2xf32>, tensor<2xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32} : () -> ()
)");
  const Operation &add = m.ops[0].regions[0].blocks[0].ops[2];
  EXPECT_EQ(printOperation(add, m),
            "%4 = \"stablehlo.add\"(%2, %3) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>");
  expectRoundTrip(m);
}

TEST(Printer, DenseConstantsAreExact) {
  EXPECT_EQ(printedConstant("dense<5.000000e-01> : tensor<2x2xf32>"),
            "dense<0.5> : tensor<2x2xf32>");
  EXPECT_EQ(printedConstant("dense<[1.0e+20, -0.0, 0.1]> : tensor<3xf64>"),
            "dense<[1.0e+20, -0.0, 0.1]> : tensor<3xf64>");
  EXPECT_EQ(printedConstant("dense<[0x7E01, 0xFC00, 1.0]> : tensor<3xf16>"),
            "dense<[0x7E01, 0xFC00, 1.0]> : tensor<3xf16>");
  EXPECT_EQ(printedConstant("dense<[-1.5, 3.0e38]> : tensor<2xbf16>"),
            "dense<[-1.5, 3.0040553e+38]> : tensor<2xbf16>");
  EXPECT_EQ(printedConstant("dense<[true, false]> : tensor<2xi1>"),
            "dense<[true, false]> : tensor<2xi1>");
  EXPECT_EQ(printedConstant("dense<[[1, -2], [3, 4]]> : tensor<2x2xi8>"),
            "dense<[[1, -2], [3, 4]]> : tensor<2x2xi8>");
  EXPECT_EQ(printedConstant("dense<18446744073709551615> : tensor<ui64>"),
            "dense<18446744073709551615> : tensor<ui64>");
  EXPECT_EQ(printedConstant("dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>"),
            "dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>");
  EXPECT_EQ(printedConstant("dense<> : tensor<0xf32>"), "dense<> : tensor<0xf32>");
  // More than 16 distinct elements: a little-endian hex blob.
  EXPECT_EQ(printedConstant("dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]> : "
                            "tensor<17xi8>"),
            "dense<\"0x000102030405060708090A0B0C0D0E0F10\"> : tensor<17xi8>");
  EXPECT_EQ(printedConstant("dense<[1, 2]> : tensor<2xi4>"), "dense<[1, 2]> : tensor<2xi4>");
}

TEST(Printer, AttributeSpellings) {
  Module m = parseOk(R"(func.func @f() attributes {
    a = 7 : i32, b = 5.000000e-01 : f32, c = true, d = unit, e = "q\"\0A", f = @"a b",
    g = array<i64: 1, -2>, h = array<i1: true>, i = array<f32: 0.25>, j = [1, "x"],
    k = #stablehlo<comparison_direction GE>, l = {z, y = 1 : i16},
    m = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3,
        input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2,
        kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1],
        output_batch_dimension = 0, output_feature_dimension = 3,
        output_spatial_dimensions = [1, 2]>,
    n = #sdy.sharding<@mesh, [{}]>, o = tensor<2x?xf32>, p = 0xFF800000 : f32, q = 1 : ui8} {
  return
}
)");
  ASSERT_FALSE(m.ops.empty());
  std::string dict;
  for (const NamedAttribute &a : m.ops[0].properties)
    if (a.name.size() == 1)
      dict += a.name + "=" + printAttribute(a.value) + "\n";
  EXPECT_EQ(dict, "a=7 : i32\n"
                  "b=0.5 : f32\n"
                  "c=true\n"
                  "d=unit\n"
                  "e=\"q\\\"\\0A\"\n"
                  "f=@\"a b\"\n"
                  "g=array<i64: 1, -2>\n"
                  "h=array<i1: true>\n"
                  "i=array<f32: 0.25>\n"
                  "j=[1 : i64, \"x\"]\n"
                  "k=#stablehlo<comparison_direction GE>\n"
                  "l={y = 1 : i16, z}\n"
                  "m=#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>\n"
                  "n=#sdy.sharding<@mesh, [{}]>\n"
                  "o=tensor<2x?xf32>\n"
                  "p=0xFF800000 : f32\n"
                  "q=1 : ui8\n");
  expectRoundTrip(m);
}

TEST(Printer, SpecialValuesRoundTrip) {
  Module m = parseOk(R"(func.func @f() {
  %0 = stablehlo.constant dense<[0x7FC00001, 0xFF800000, -0.0, 1.0e-45, 3.4028235e38]> : tensor<5xf32>
  %1 = stablehlo.constant dense<[0x7FF4000000000001, 4.9e-324, -1.7976931348623157e308]> : tensor<3xf64>
  %2 = stablehlo.constant dense<[0x0001, 0x7C01, 0x8000]> : tensor<3xf16>
  %3 = stablehlo.constant dense<[0x0001, 0xFFC1, 0x7F7F]> : tensor<3xbf16>
  %4 = stablehlo.constant dense<[-9223372036854775808, 9223372036854775807]> : tensor<2xi64>
  %5 = stablehlo.constant dense<[(0x7FC00000, -0.0)]> : tensor<1xcomplex<f32>>
  %6 = stablehlo.constant dense<"0x0102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F20"> : tensor<4x4xui16>
  return
}
)");
  expectRoundTrip(m);
}

TEST(Printer, EmptyModuleAndEmptyBlocksRoundTrip) {
  Module empty = parseOk("// nothing here\n");
  EXPECT_TRUE(empty.ops.empty());
  EXPECT_EQ(printGeneric(empty), "\"builtin.module\"() ({\n^bb0:\n}) : () -> ()\n");
  expectRoundTrip(empty);
  Module decl = parseOk("func.func private @ext(tensor<f32>) -> tensor<f32>\n"
                        "func.func @body() {\n}\n");
  ASSERT_EQ(decl.ops.size(), 2u);
  EXPECT_TRUE(decl.ops[0].regions[0].blocks.empty());
  EXPECT_EQ(decl.ops[1].regions[0].blocks.size(), 1u);
  expectRoundTrip(decl);
}

TEST(Printer, ChloScanRecordsOperandSegments) {
  Module m = parseOk(R"(func.func @main() {
  %input = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
  %init = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = chlo.scan(%input) inits(%init) dimension=0 attributes {is_reverse = true} {
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %1 = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %1, %1 : tensor<i32>, tensor<i32>
  } : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)
  func.return
}
)");
  const Operation &scan = m.ops[0].regions[0].blocks[0].ops[2];
  EXPECT_EQ(printAttribute(*scan.attr("operandSegmentSizes")), "array<i32: 1, 1>");
  EXPECT_EQ(printAttribute(*scan.attr("resultSegmentSizes")), "array<i32: 1, 1>");
  EXPECT_EQ(scan.attr("is_reverse")->int_value, 1);
  EXPECT_EQ(scan.attr("dimension")->int_value, 0);
  expectRoundTrip(m);
}

TEST(Printer, LocationsEndEveryOpThatHasOneAndParseBack) {
  Module m = parseOk("func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
                     "  %0 = stablehlo.abs %a : tensor<f32>\n"
                     "  return %0 : tensor<f32>\n"
                     "}\n");
  PrintOptions with_locations;
  with_locations.locations = true;
  const std::string printed = printGeneric(m, with_locations);
  EXPECT_EQ(printed, R"("builtin.module"() ({
  "func.func"() <{function_type = (tensor<f32>) -> tensor<f32>, sym_name = "main"}> ({
  ^bb0(%0: tensor<f32>):
    %1 = "stablehlo.abs"(%0) : (tensor<f32>) -> tensor<f32> loc("p.mlir":2:3)
    "func.return"(%1) : (tensor<f32>) -> () loc("p.mlir":3:3)
  }) : () -> () loc("p.mlir":1:1)
}) : () -> ()
)");
  Result<Module> again = parseModule(printed, "again.mlir");
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_TRUE(*again == m);
  EXPECT_EQ(printGeneric(m, PrintOptions()), printGeneric(m));

  // A portable artifact's op: the source position of its debug location, not the
  // artifact's byte offset; numbers the location lacks print as 0; no source, no loc.
  Operation &abs = m.ops[0].regions[0].blocks[0].ops[0];
  auto printedAbs = [&](std::string_view source) {
    abs.loc = Location();
    abs.loc.file = "model.mlirbc";
    abs.loc.byte_offset = 518;
    abs.loc.source = std::string(source);
    const std::string all = printGeneric(m, with_locations);
    const size_t at = all.find("%1 = ");
    return all.substr(at, all.find('\n', at) - at);
  };
  const std::string op = R"(%1 = "stablehlo.abs"(%0) : (tensor<f32>) -> tensor<f32>)";
  EXPECT_EQ(printedAbs("/src/model.py:234:25"), op + R"( loc("/src/model.py":234:25))");
  EXPECT_EQ(printedAbs("C:/a \"b\".py:7"), op + R"( loc("C:/a \"b\".py":7:0))");
  EXPECT_EQ(printedAbs("model.py"), op + R"( loc("model.py":0:0))");
  EXPECT_EQ(printedAbs(""), op);
}

TEST(Printer, AResultOfFunctionTypeIsWrappedAsMlirWrapsIt) {
  // `-> (tensor<i1>) -> tensor<i1>` would read back as an op with two results.
  Module m = parseOk(R"(func.func @f(%t: tuple<tensor<f32>>) {
  %0 = "stablehlo.get_tuple_element"(%t) <{index = 0 : i32}> : (tuple<tensor<f32>>) -> ((tensor<i1>) -> tensor<i1>)
  "func.return"() : () -> ()
}
)");
  ASSERT_EQ(m.ops.size(), 1u);
  const Operation &op = m.ops[0].regions[0].blocks[0].ops[0];
  ASSERT_EQ(op.results.size(), 1u);
  EXPECT_EQ(m.typeOf(op.results[0]).kind, TypeKind::kFunction);
  EXPECT_EQ(printOperation(op, m), "%1 = \"stablehlo.get_tuple_element\"(%0) <{index = 0 : i32}> : "
                                   "(tuple<tensor<f32>>) -> ((tensor<i1>) -> tensor<i1>)");
  expectRoundTrip(m);
}

} // namespace
} // namespace rs::ir
