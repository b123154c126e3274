//===- test/ir/parser_test.cc - pretty forms normalise to the generic form -===//
//
// Each case writes one function in pretty form and in MLIR's generic form and checks
// that both parse to the same Module; a few check the resulting Operation directly
// (value numbering, locations, scoping).
//
//===----------------------------------------------------------------------===//
#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

namespace rs::ir {
namespace {

Module parseOk(std::string_view text, int first_line = 1) {
  Result<Module> m = parseModule(text, "t.mlir", first_line);
  EXPECT_TRUE(m.isOk()) << m.status().toString();
  return m.isOk() ? std::move(m).value() : Module();
}

void expectSame(std::string_view pretty, std::string_view generic) {
  Module p = parseOk(pretty);
  Module g = parseOk(generic);
  EXPECT_TRUE(p == g) << "pretty:\n" << printGeneric(p) << "generic:\n" << printGeneric(g);
}

const Operation &bodyOp(const Module &m, size_t i) {
  return m.ops.at(0).regions.at(0).blocks.at(0).ops.at(i);
}

TEST(Parser, CommonPrettyFormsEqualGenericForm) {
  expectSame(R"(
func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<i32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, HIGHEST] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = stablehlo.transpose %0, dims = [1, 0] : (tensor<2x4xf32>) -> tensor<4x2xf32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x2xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = stablehlo.broadcast_in_dim %2, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %4 = stablehlo.iota dim = 1 : tensor<2x4xi32>
  %5 = stablehlo.compare  LT, %4, %4,  SIGNED : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
  %6 = stablehlo.select %5, %3, %0 : tensor<2x4xi1>, tensor<2x4xf32>
  %7 = stablehlo.slice %6 [0:2, 1:4:2] : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %8 = stablehlo.dynamic_slice %6, %arg2, %arg2, sizes = [1, 2] : (tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
  %9 = stablehlo.concatenate %7, %7, dim = 0 : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %10 = stablehlo.pad %9, %cst, low = [0, 1], high = [0, 1], interior = [0, 0] : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x4xf32>
  %11 = stablehlo.reduce_precision %10, format = e5m10 : tensor<4x4xf32>
  %12 = stablehlo.custom_call @foo(%11) {backend_config = "", mhlo.frontend_attributes = {a = "b"}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %values, %indices = chlo.top_k(%12, k = 2) : tensor<4x4xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
  %13 = stablehlo.add %values, %values : tensor<4x2xf32>
  %14 = chlo.erfc %13 : tensor<4x2xf32> -> tensor<4x2xf32>
  return %6 : tensor<2x4xf32>
}
)",
             R"(
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x3xf32>, tensor<3x4xf32>, tensor<i32>) -> tensor<2x4xf32>, sym_name = "main"}> ({
  ^bb0(%a0: tensor<2x3xf32>, %a1: tensor<3x4xf32>, %a2: tensor<i32>):
    %0 = "stablehlo.dot_general"(%a0, %a1) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %1 = "stablehlo.transpose"(%0) <{permutation = array<i64: 1, 0>}> : (tensor<2x4xf32>) -> tensor<4x2xf32>
    %2 = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %s = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<4x2xf32>, tensor<f32>) -> tensor<4xf32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<2x4xf32>
    %5 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<2x4xi32>
    %6 = "stablehlo.compare"(%5, %5) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2x4xi32>, tensor<2x4xi32>) -> tensor<2x4xi1>
    %7 = "stablehlo.select"(%6, %4, %0) : (tensor<2x4xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    %8 = "stablehlo.slice"(%7) <{limit_indices = array<i64: 2, 4>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 2>}> : (tensor<2x4xf32>) -> tensor<2x2xf32>
    %9 = "stablehlo.dynamic_slice"(%7, %a2, %a2) <{slice_sizes = array<i64: 1, 2>}> : (tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
    %10 = "stablehlo.concatenate"(%8, %8) {dimension = 0 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
    %11 = "stablehlo.pad"(%10, %2) <{edge_padding_high = array<i64: 0, 1>, edge_padding_low = array<i64: 0, 1>, interior_padding = array<i64: 0, 0>}> : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x4xf32>
    %12 = "stablehlo.reduce_precision"(%11) <{exponent_bits = 5 : i32, mantissa_bits = 10 : i32}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %13 = "stablehlo.custom_call"(%12) <{backend_config = "", call_target_name = "foo"}> {mhlo.frontend_attributes = {a = "b"}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %14:2 = "chlo.top_k"(%13) <{is_stable = true, k = 2 : i64}> : (tensor<4x4xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
    %15 = "stablehlo.add"(%14#0, %14#0) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    %16 = "chlo.erfc"(%15) : (tensor<4x2xf32>) -> tensor<4x2xf32>
    "func.return"(%7) : (tensor<2x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
)");
}

TEST(Parser, WhileAndRegionReduceEqualGenericForm) {
  expectSame(R"(
module @m attributes {mhlo.num_replicas = 1 : i32, mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {jax.arg = "x"}, %arg1: tensor<4xi32>) -> (tensor<f32>, tensor<i32> {jax.result_info = "r"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<4xf32>
    cond {
      %c_1 = stablehlo.constant dense<3> : tensor<i32>
      %2 = stablehlo.compare LT, %iterArg, %c_1 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      %2 = stablehlo.sine %iterArg_0 : tensor<4xf32>
      stablehlo.return %iterArg, %2 : tensor<i32>, tensor<4xf32>
    }
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1:2 = stablehlo.reduce(%0#1 init: %cst), (%arg1 init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
     reducer(%a: tensor<f32>, %c2: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>)  {
      %2 = stablehlo.maximum %a, %c2 : tensor<f32>
      %3 = stablehlo.minimum %b, %d : tensor<i32>
      stablehlo.return %2, %3 : tensor<f32>, tensor<i32>
    }
    return %1#0, %1#1 : tensor<f32>, tensor<i32>
  }
}
)",
             R"(
"builtin.module"() <{sym_name = "m"}> ({
  "func.func"() <{arg_attrs = [{jax.arg = "x"}, {}], function_type = (tensor<4xf32>, tensor<4xi32>) -> (tensor<f32>, tensor<i32>), res_attrs = [{}, {jax.result_info = "r"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xf32>, %arg1: tensor<4xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1:2 = "stablehlo.while"(%0, %arg0) ({
    ^bb0(%x: tensor<i32>, %y: tensor<4xf32>):
      %2 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
      %3 = "stablehlo.compare"(%x, %2) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%3) : (tensor<i1>) -> ()
    }, {
    ^bb0(%x: tensor<i32>, %y: tensor<4xf32>):
      %2 = "stablehlo.sine"(%y) : (tensor<4xf32>) -> tensor<4xf32>
      "stablehlo.return"(%x, %2) : (tensor<i32>, tensor<4xf32>) -> ()
    }) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
    %4 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %5:2 = "stablehlo.reduce"(%1#1, %arg1, %4, %0) <{dimensions = array<i64: 0>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<i32>):
      %6 = "stablehlo.maximum"(%a, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      %7 = "stablehlo.minimum"(%b, %d) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%6, %7) : (tensor<f32>, tensor<i32>) -> ()
    }) : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
    "func.return"(%5#0, %5#1) : (tensor<f32>, tensor<i32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
)");
}

TEST(Parser, ConvolutionCompactAndRawFormsAreEqual) {
  expectSame(R"(
func.func @main(%arg0: tensor<1x8x8x1xf32>, %arg1: tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x8x8x1xf32>, tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}
)",
             R"(
func.func @main(%arg0: tensor<1x8x8x1xf32>, %arg1: tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 2, 2>}> : (tensor<1x8x8x1xf32>, tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32>
  "func.return"(%0) : (tensor<1x4x4x4xf32>) -> ()
}
)");
  Module m = parseOk(R"(
func.func @main(%x: tensor<1x3x6xf32>, %w: tensor<2x3x5xf32>) -> tensor<2x2x1xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[0, f, b], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x6xf32>, tensor<2x3x5xf32>) -> tensor<2x2x1xf32>
  return %0 : tensor<2x2x1xf32>
}
)");
  const Attribute *dn = bodyOp(m, 0).attr("dimension_numbers");
  ASSERT_NE(dn, nullptr);
  EXPECT_EQ(dn->field("input_feature_dimension")->int_value, 1);
  EXPECT_EQ(dn->field("kernel_output_feature_dimension")->int_value, 0);
  EXPECT_EQ(dn->field("kernel_input_feature_dimension")->int_value, 1);
  EXPECT_EQ(dn->field("output_batch_dimension")->int_value, 2);
  EXPECT_EQ(dn->field("output_spatial_dimensions")->ints, (std::vector<int64_t>{0}));
  EXPECT_EQ(printAttribute(*dn), "#stablehlo.conv<[b, f, 0]x[o, i, 0]->[0, f, b]>");
}

TEST(Parser, SdyMeshCallAndAttributesEqualGenericForm) {
  expectSame(R"(
module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]> {stablehlo.mesh = {axes = []}}
  func.func public @main(%arg0: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>} loc("x")) -> (tensor<4xf32> {jax.result_info = "result"}) {
    %0 = call @relu(%arg0) : (tensor<4xf32>) -> tensor<4xf32> loc(#loc3)
    return %0 : tensor<4xf32>
  } loc(#loc)
  func.func private @relu(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.abs %arg0 : tensor<4xf32>
    func.return %0 : tensor<4xf32>
  }
} loc(#loc)
#loc = loc(unknown)
#loc3 = loc("f.py":12:3 to :9)
)",
             R"(
#loc = loc(unknown)
"builtin.module"() <{sym_name = "jit_f"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = []}} : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{}]>}], function_type = (tensor<4xf32>) -> tensor<4xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%a: tensor<4xf32> loc("x")):
    %0 = "func.call"(%a) <{callee = @relu}> : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> () loc(#loc)
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "relu", sym_visibility = "private"}> ({
  ^bb0(%a: tensor<4xf32>):
    %0 = "stablehlo.abs"(%a) : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32} : () -> ()
)");
}

TEST(Parser, ValuesAreNumberedInDefinitionOrder) {
  Module n = parseOk(R"(
func.func @main(%arg0: tensor<f32>, %arg1: tensor<i32>) -> tensor<f32> {
  %0:2 = stablehlo.optimization_barrier %arg0, %arg0 : tensor<f32>, tensor<f32>
  %1 = "stablehlo.case"(%arg1) ({
    %2 = stablehlo.negate %0#1 : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }) : (tensor<i32>) -> tensor<f32>
  return %1 : tensor<f32>
}
)");
  ASSERT_EQ(n.value_types.size(), 6u);
  const Block &entry = n.ops[0].regions[0].blocks[0];
  EXPECT_EQ(entry.arguments, (std::vector<ValueId>{0, 1}));
  EXPECT_EQ(entry.ops[0].results, (std::vector<ValueId>{2, 3}));
  // The case region's value comes before the case result.
  EXPECT_EQ(entry.ops[1].regions[0].blocks[0].ops[0].operands, (std::vector<ValueId>{3}));
  EXPECT_EQ(entry.ops[1].regions[0].blocks[0].ops[0].results, (std::vector<ValueId>{4}));
  EXPECT_EQ(entry.ops[1].results, (std::vector<ValueId>{5}));
  EXPECT_EQ(entry.ops[2].name, "func.return");
  EXPECT_EQ(entry.ops[2].operands, (std::vector<ValueId>{5}));
  EXPECT_EQ(n.typeOf(1), Type::tensor(DType::kI32, {}));
  EXPECT_EQ(functionName(n.ops[0]), "main");
  EXPECT_EQ(functionType(n.ops[0]).toString(), "(tensor<f32>, tensor<i32>) -> tensor<f32>");
  EXPECT_EQ(n.lookupFunction("main"), &n.ops[0]);
  EXPECT_EQ(n.lookupFunction("other"), nullptr);
}

TEST(Parser, EveryOpGetsItsLocation) {
  Module m = parseOk("// comment line\n"
                     "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n"
                     "    %0 = stablehlo.abs %a : tensor<f32>\n"
                     "  \"func.return\"(%0) : (tensor<f32>) -> ()\n"
                     "}\n",
                     40);
  EXPECT_EQ(m.ops[0].loc.toString(), "t.mlir:41:1");
  EXPECT_EQ(bodyOp(m, 0).loc.toString(), "t.mlir:42:5");
  EXPECT_EQ(bodyOp(m, 1).loc.line, 43);
  EXPECT_EQ(bodyOp(m, 1).loc.col, 3);
  EXPECT_EQ(bodyOp(m, 1).loc.file, "t.mlir");
  EXPECT_EQ(m.file, "t.mlir");
  EXPECT_EQ(Location().toString(), "<unknown>");
}

TEST(Parser, DiscardableAttributesAreSeparatedFromProperties) {
  Module m = parseOk(R"(
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> attributes {enzymexla.memory_effects = [], foo = 3} {
  %0 = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %1 = stablehlo.compare GT, %x, %y, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) {is_stable = true, mhlo.sharding = "{replicated}", dimension = 0 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
)");
  const Operation &sort = bodyOp(m, 0);
  ASSERT_EQ(sort.properties.size(), 2u);
  EXPECT_EQ(sort.properties[0].name, "dimension");
  EXPECT_EQ(sort.properties[1].name, "is_stable");
  ASSERT_EQ(sort.attributes.size(), 1u);
  EXPECT_EQ(sort.attributes[0].name, "mhlo.sharding");
  EXPECT_EQ(sort.attr("mhlo.sharding")->str, "{replicated}");
  EXPECT_EQ(m.ops[0].attributes[0].name, "enzymexla.memory_effects");
  EXPECT_NE(m.ops[0].attr("foo"), nullptr);
}

TEST(Parser, ScopesFollowRegions) {
  // Sibling regions may reuse names; a function body sees no other function's values.
  Module m = parseOk(R"(
func.func @a(%x: tensor<i32>) -> tensor<i32> {
  %0 = "stablehlo.case"(%x) ({
    %1 = stablehlo.negate %x : tensor<i32>
    stablehlo.return %1 : tensor<i32>
  }, {
    %1 = stablehlo.abs %x : tensor<i32>
    stablehlo.return %1 : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  %1 = stablehlo.add %0, %0 : tensor<i32>
  return %1 : tensor<i32>
}
func.func @b(%x: tensor<i32>) -> tensor<i32> {
  return %x : tensor<i32>
}
)");
  EXPECT_EQ(m.ops.size(), 2u);
}

TEST(Parser, CheckAndInterpreterOpsParse) {
  Module m = parseOk(R"(
func.func @main() {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf64>
  check.expect_almost_eq_const %0, dense<[1.0, 2.0]> : tensor<2xf64> {tolerance = 0.1 : f64}
  check.expect_almost_eq %0, %0, tolerance = 0.5 : tensor<2xf64>
  check.expect_close %0, %0, max_ulp_difference = 3 : tensor<2xf64>, tensor<2xf64>
  %1 = interpreter.probe %0, probe_id = "p" : tensor<2xf64>
  stablehlo.custom_call @check.expect_eq(%1, %0) {has_side_effect = true} : (tensor<2xf64>, tensor<2xf64>) -> ()
  func.return
}
)");
  const Block &b = m.ops[0].regions[0].blocks[0];
  ASSERT_EQ(b.ops.size(), 7u);
  EXPECT_EQ(b.ops[1].attr("tolerance")->float_value, 0.1);
  EXPECT_EQ(b.ops[1].attr("value")->tensor.numElements(), 2);
  EXPECT_EQ(b.ops[2].attr("tolerance")->float_value, 0.5);
  EXPECT_EQ(b.ops[2].attr("tolerance")->scalar_type, DType::kF64);
  EXPECT_EQ(b.ops[3].attr("max_ulp_difference")->int_value, 3);
  EXPECT_EQ(b.ops[4].attr("probe_id")->str, "p");
  EXPECT_EQ(b.ops[4].results.size(), 1u);
  EXPECT_EQ(b.ops[5].attr("call_target_name")->str, "check.expect_eq");
  EXPECT_TRUE(b.ops[5].results.empty());
}

TEST(Parser, DotGeneralBatchingAndAlgorithm) {
  Module m = parseOk(R"(
func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %0 : tensor<2x3x5xf32>
}
)");
  const Operation &dot = bodyOp(m, 0);
  EXPECT_EQ(printAttribute(*dot.attr("dot_dimension_numbers")),
            "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
            "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>");
  const Attribute *alg = dot.attr("algorithm");
  ASSERT_NE(alg, nullptr);
  EXPECT_EQ(alg->kind, AttrKind::kStruct);
  EXPECT_EQ(alg->field("lhs_precision_type")->type->toString(), "tf32");
  EXPECT_EQ(alg->field("accumulation_type")->type->toString(), "f32");
  EXPECT_EQ(alg->field("num_primitive_operations")->int_value, 1);
  EXPECT_EQ(alg->field("allow_imprecise_accumulation")->kind, AttrKind::kBool);
  EXPECT_EQ(printAttribute(*alg),
            "#stablehlo.dot_algorithm<lhs_precision_type = tf32, rhs_precision_type = tf32, "
            "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
            "num_primitive_operations = 1, allow_imprecise_accumulation = false>");
}

TEST(Parser, OlderSpellingsAndOtherProducersNormalise) {
  // Array properties written as dense elements, inherent attributes in `{...}`.
  expectSame(R"(
func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<3x2xf32>
  return %1 : tensor<3x2xf32>
}
)",
             R"(
func.func @main(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "stablehlo.transpose"(%a) {permutation = dense<[1, 0]> : tensor<2xi64>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "sdy.sharding_constraint"(%0) <{sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}> : (tensor<3x2xf32>) -> tensor<3x2xf32>
  "func.return"(%1) : (tensor<3x2xf32>) -> ()
}
)");
  Module m = parseOk(R"(
func.func @main() -> (tensor<2xf32>, i32) {
  %0 = sdy.constant dense<1.0> : tensor<2xf32>
  %1 = arith.constant 7 : i32
  return %0, %1 : tensor<2xf32>, i32
}
)");
  EXPECT_EQ(printOperation(bodyOp(m, 0), m),
            "%0 = \"sdy.constant\"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>");
  EXPECT_EQ(printOperation(bodyOp(m, 1), m),
            "%1 = \"arith.constant\"() <{value = 7 : i32}> : () -> i32");
}

} // namespace
} // namespace rs::ir
