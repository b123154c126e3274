//===- test/passes/refine_shapes_test.cc - The shape-refinement pass -------===//
//
// Each case parses a shape-polymorphic module, refines it for concrete argument types and
// dimension values, and compares the printed (generic) module with the exact expected
// text; the error cases compare the message. The refined module must parse back equal.
//
//===----------------------------------------------------------------------===//
#include "passes/refine_shapes.h"

#include "ir/parser.h"
#include "ir/printer.h"

#include <gtest/gtest.h>

namespace rs::passes {
namespace {

ir::Type tensor(DType t, Shape s) { return ir::Type::tensor(t, std::move(s)); }

/// Options for an entry (%d: tensor<i64>, %x: tensor<...xf32>): %x of `shape`, %d holding
/// `value`.
RefineOptions dimensionAndF32(int64_t value, Shape shape) {
  RefineOptions o;
  o.arg_types = {tensor(DType::kI64, {}), tensor(DType::kF32, std::move(shape))};
  o.dimension_values = {value};
  return o;
}

/// Parses `text`, refines it with `options`; the printed module, or the error message.
std::string refine(std::string_view text, const RefineOptions &options,
                   RefineReport *report = nullptr) {
  Result<ir::Module> m = ir::parseModule(text, "refine.mlir");
  if (!m.isOk())
    return "parse: " + m.status().message();
  Result<RefineReport> r = refineShapes(*m, options);
  if (!r.isOk())
    return r.status().message();
  if (report)
    *report = *r;
  const std::string printed = ir::printGeneric(*m);
  Result<ir::Module> again = ir::parseModule(printed, "refine.mlir");
  EXPECT_TRUE(again.isOk()) << again.status().toString();
  if (again.isOk()) {
    EXPECT_EQ(ir::printGeneric(*again), printed) << "the refined module does not print back";
  }
  return printed;
}

TEST(RefineShapes, DynamicBroadcastFromDimensionArgument) {
  // As testdata/add_dynamic.mlir: the shape operand is built from the dimension argument.
  const char *text =
      R"(func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?x4xf32>) -> tensor<2x?x4xf32> {
  %0 = stablehlo.constant dense<2> : tensor<1xi32>
  %1 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
  %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %3 = stablehlo.constant dense<4> : tensor<1xi32>
  %4 = stablehlo.concatenate %0, %2, %3, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
  %5 = stablehlo.dynamic_broadcast_in_dim %arg1, %4, dims = [1, 2] : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<2x?x4xf32>
  %6 = stablehlo.add %5, %5 : tensor<2x?x4xf32>
  return %6 : tensor<2x?x4xf32>
}
)";
  RefineOptions o;
  o.arg_types = {tensor(DType::kI64, {}), tensor(DType::kF32, {3, 4})};
  o.dimension_values = {3, std::nullopt};
  RefineReport report;
  EXPECT_EQ(refine(text, o, &report),
            R"("builtin.module"() ({
  "func.func"() <{function_type = (tensor<i64>, tensor<3x4xf32>) -> tensor<2x3x4xf32>, sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%0: tensor<i64>, %1: tensor<3x4xf32>):
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
    %3 = "stablehlo.add"(%2, %2) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    "func.return"(%3) : (tensor<2x3x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
)");
  EXPECT_EQ(report.ops_folded, 3);      // convert, reshape, concatenate
  EXPECT_EQ(report.ops_made_static, 1); // dynamic_broadcast_in_dim
  EXPECT_EQ(report.constants_removed, 5);
}

TEST(RefineShapes, DynamicReshapeAndIotaFromDimensionSize) {
  const char *text =
      R"(func.func @main(%arg0: tensor<?x2x3xf32>) -> (tensor<?x6xf32>, tensor<?xi32>) {
  %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x2x3xf32>) -> tensor<i32>
  %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %2 = stablehlo.constant dense<6> : tensor<1xi32>
  %3 = stablehlo.concatenate %1, %2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %4 = stablehlo.dynamic_reshape %arg0, %3 : (tensor<?x2x3xf32>, tensor<2xi32>) -> tensor<?x6xf32>
  %5 = stablehlo.multiply %1, %1 : tensor<1xi32>
  %6 = stablehlo.dynamic_iota %5, dim = 0 : (tensor<1xi32>) -> tensor<?xi32>
  return %4, %6 : tensor<?x6xf32>, tensor<?xi32>
}
)";
  RefineOptions o;
  o.arg_types = {tensor(DType::kF32, {5, 2, 3})};
  EXPECT_EQ(refine(text, o),
            R"("builtin.module"() ({
  "func.func"() <{function_type = (tensor<5x2x3xf32>) -> (tensor<5x6xf32>, tensor<25xi32>), sym_name = "main"}> ({
  ^bb0(%0: tensor<5x2x3xf32>):
    %1 = "stablehlo.reshape"(%0) : (tensor<5x2x3xf32>) -> tensor<5x6xf32>
    %2 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<25xi32>
    "func.return"(%1, %2) : (tensor<5x6xf32>, tensor<25xi32>) -> ()
  }) : () -> ()
}) : () -> ()
)");
}

TEST(RefineShapes, RealDynamicSliceAndDynamicPad) {
  const char *text =
      R"(func.func @main(%arg0: tensor<i64>, %arg1: tensor<?x2xf32>) -> (tensor<?x2xf32>, tensor<?x4xf32>) {
  %0 = stablehlo.constant dense<[1, 0]> : tensor<2xi64>
  %1 = stablehlo.reshape %arg0 : (tensor<i64>) -> tensor<1xi64>
  %2 = stablehlo.constant dense<2> : tensor<1xi64>
  %3 = stablehlo.concatenate %1, %2, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %4 = stablehlo.constant dense<1> : tensor<2xi64>
  %5 = stablehlo.real_dynamic_slice %arg1, %0, %3, %4 : (tensor<?x2xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x2xf32>
  %6 = stablehlo.constant dense<0.0> : tensor<f32>
  %7 = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
  %8 = stablehlo.constant dense<0> : tensor<2xi64>
  %9 = stablehlo.dynamic_pad %arg1, %6, %7, %7, %8 : (tensor<?x2xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x4xf32>
  return %5, %9 : tensor<?x2xf32>, tensor<?x4xf32>
}
)";
  const RefineOptions o = dimensionAndF32(4, {4, 2});
  EXPECT_EQ(refine(text, o),
            R"("builtin.module"() ({
  "func.func"() <{function_type = (tensor<i64>, tensor<4x2xf32>) -> (tensor<3x2xf32>, tensor<4x4xf32>), sym_name = "main"}> ({
  ^bb0(%0: tensor<i64>, %1: tensor<4x2xf32>):
    %2 = "stablehlo.slice"(%1) <{limit_indices = array<i64: 4, 2>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 1>}> : (tensor<4x2xf32>) -> tensor<3x2xf32>
    %3 = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.pad"(%1, %3) <{edge_padding_high = array<i64: 0, 1>, edge_padding_low = array<i64: 0, 1>, interior_padding = array<i64: 0, 0>}> : (tensor<4x2xf32>, tensor<f32>) -> tensor<4x4xf32>
    "func.return"(%2, %4) : (tensor<3x2xf32>, tensor<4x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()
)");
}

TEST(RefineShapes, DynamicGatherAndDynamicConv) {
  const char *text =
      R"(func.func @main(%arg0: tensor<i64>, %arg1: tensor<4x?xf32>, %arg2: tensor<2x1xi64>, %arg3: tensor<1x?x2xf32>, %arg4: tensor<3x2x2xf32>) -> (tensor<2x?xf32>, tensor<1x?x2xf32>) {
  %0 = stablehlo.constant dense<1> : tensor<1xi64>
  %1 = stablehlo.reshape %arg0 : (tensor<i64>) -> tensor<1xi64>
  %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %3 = "stablehlo.dynamic_gather"(%arg1, %arg2, %2) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} : (tensor<4x?xf32>, tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x?xf32>
  %4 = stablehlo.constant dense<1> : tensor<1x2xi64>
  %5 = "stablehlo.dynamic_conv"(%arg3, %arg4, %4) {batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64} : (tensor<1x?x2xf32>, tensor<3x2x2xf32>, tensor<1x2xi64>) -> tensor<1x?x2xf32>
  return %3, %5 : tensor<2x?xf32>, tensor<1x?x2xf32>
}
)";
  RefineOptions o;
  o.arg_types = {tensor(DType::kI64, {}), tensor(DType::kF32, {4, 3}), tensor(DType::kI64, {2, 1}),
                 tensor(DType::kF32, {1, 3, 2}), tensor(DType::kF32, {3, 2, 2})};
  o.dimension_values = {3};
  EXPECT_EQ(refine(text, o),
            R"("builtin.module"() ({
  "func.func"() <{function_type = (tensor<i64>, tensor<4x3xf32>, tensor<2x1xi64>, tensor<1x3x2xf32>, tensor<3x2x2xf32>) -> (tensor<2x3xf32>, tensor<1x3x2xf32>), sym_name = "main"}> ({
  ^bb0(%0: tensor<i64>, %1: tensor<4x3xf32>, %2: tensor<2x1xi64>, %3: tensor<1x3x2xf32>, %4: tensor<3x2x2xf32>):
    %5 = "stablehlo.gather"(%1, %2) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>}> : (tensor<4x3xf32>, tensor<2x1xi64>) -> tensor<2x3xf32>
    %6 = "stablehlo.convolution"(%3, %4) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, padding = dense<1> : tensor<1x2xi64>}> : (tensor<1x3x2xf32>, tensor<3x2x2xf32>) -> tensor<1x3x2xf32>
    "func.return"(%5, %6) : (tensor<2x3xf32>, tensor<1x3x2xf32>) -> ()
  }) : () -> ()
}) : () -> ()
)");
}

TEST(RefineShapes, CalleeClonedPerSignature) {
  const char *text =
      R"(func.func @main(%arg0: tensor<?xf32>, %arg1: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %0 = call @neg(%arg0) : (tensor<?xf32>) -> tensor<?xf32>
  %1 = call @neg(%arg1) : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}
func.func private @neg(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.negate %arg0 : tensor<?xf32>
  return %0 : tensor<?xf32>
}
)";
  RefineOptions o;
  o.arg_types = {tensor(DType::kF32, {2}), tensor(DType::kF32, {3})};
  RefineReport report;
  EXPECT_EQ(refine(text, o, &report),
            R"("builtin.module"() ({
  "func.func"() <{function_type = (tensor<2xf32>, tensor<3xf32>) -> (tensor<2xf32>, tensor<3xf32>), sym_name = "main"}> ({
  ^bb0(%0: tensor<2xf32>, %1: tensor<3xf32>):
    %2 = "func.call"(%0) <{callee = @neg}> : (tensor<2xf32>) -> tensor<2xf32>
    %3 = "func.call"(%1) <{callee = @neg_1}> : (tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%2, %3) : (tensor<2xf32>, tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, sym_name = "neg", sym_visibility = "private"}> ({
  ^bb0(%4: tensor<2xf32>):
    %5 = "stablehlo.negate"(%4) : (tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%5) : (tensor<2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3xf32>) -> tensor<3xf32>, sym_name = "neg_1", sym_visibility = "private"}> ({
  ^bb0(%6: tensor<3xf32>):
    %7 = "stablehlo.negate"(%6) : (tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%7) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) : () -> ()
)");
  EXPECT_EQ(report.functions_cloned, 1);
}

constexpr const char *kAssertion =
    R"(func.func @main(%arg0: tensor<i64>, %arg1: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?xf32>) -> tensor<i32>
  %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>
  %2 = stablehlo.compare EQ, %arg0, %1, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%2, %arg0, %1) {error_message = "Input shapes do not match the polymorphic shapes specification. Expected value >= 1 for dimension variable 'b'. Using the following polymorphic shapes specifications: b = {0}, got {1}", has_side_effect = true} : (tensor<i1>, tensor<i64>, tensor<i64>) -> ()
  %3 = stablehlo.add %arg1, %arg1 : tensor<?xf32>
  return %3 : tensor<?xf32>
}
)";

TEST(RefineShapes, ShapeAssertionThatHoldsIsRemoved) {
  const RefineOptions o = dimensionAndF32(3, {3});
  RefineReport report;
  EXPECT_EQ(refine(kAssertion, o, &report),
            R"("builtin.module"() ({
  "func.func"() <{function_type = (tensor<i64>, tensor<3xf32>) -> tensor<3xf32>, sym_name = "main"}> ({
  ^bb0(%0: tensor<i64>, %1: tensor<3xf32>):
    %2 = "stablehlo.add"(%1, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%2) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) : () -> ()
)");
  EXPECT_EQ(report.assertions_removed, 1);
}

TEST(RefineShapes, ShapeAssertionThatFailsQuotesItsMessage) {
  const RefineOptions o = dimensionAndF32(4, {3});
  EXPECT_EQ(refine(kAssertion, o),
            "refine.mlir:5:3: error: 'stablehlo.custom_call' op shape assertion failed: Input "
            "shapes do not match the polymorphic shapes specification. Expected value >= 1 for "
            "dimension variable 'b'. Using the following polymorphic shapes specifications: b = "
            "4, got 3");
}

TEST(RefineShapes, Errors) {
  const char *text =
      R"(func.func @main(%arg0: tensor<?x4xf32>, %arg1: tensor<2xi32>) -> tensor<?x?xf32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %arg0, %arg1, dims = [0, 1] : (tensor<?x4xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
)";
  RefineOptions o;
  o.arg_types = {tensor(DType::kF32, {3, 5}), tensor(DType::kI32, {2})};
  EXPECT_EQ(refine(text, o), "refine.mlir:1:1: error: 'func.func' op argument 0 of @main: "
                             "tensor<3x5xf32> does not refine tensor<?x4xf32>");
  o.arg_types[0] = tensor(DType::kF32, {3, 4});
  EXPECT_EQ(refine(text, o),
            "refine.mlir:2:3: error: 'stablehlo.dynamic_broadcast_in_dim' op output_dimensions "
            "(operand 1) is not a constant after refinement: it depends on a value other than "
            "the dimension arguments and static shapes");
  o.arg_types.clear();
  EXPECT_EQ(refine(text, o), "refine.mlir:1:1: error: 'func.func' op argument 0 of @main is "
                             "refined to tensor<?x4xf32>, which is not static");
}

TEST(RefineShapes, WhileBodyAndFoldedSelect) {
  // The loop-carried value takes the operand's refined type in cond and body; the select of
  // folded operands (max(d, 2) of the dimension argument) folds.
  const char *text = R"(func.func @main(%arg0: tensor<i64>, %arg1: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.constant dense<2> : tensor<i64>
  %1 = stablehlo.compare GT, %arg0, %0, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
  %2 = stablehlo.select %1, %arg0, %0 : tensor<i1>, tensor<i64>
  %3 = stablehlo.reshape %2 : (tensor<i64>) -> tensor<1xi64>
  %4 = stablehlo.dynamic_broadcast_in_dim %arg1, %3, dims = [0] : (tensor<?xf32>, tensor<1xi64>) -> tensor<?xf32>
  %5 = stablehlo.while(%iterArg = %4) : tensor<?xf32>
   cond {
    %c = stablehlo.constant dense<false> : tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %6 = stablehlo.negate %iterArg : tensor<?xf32>
    stablehlo.return %6 : tensor<?xf32>
  }
  return %5 : tensor<?xf32>
}
)";
  const RefineOptions o = dimensionAndF32(3, {3});
  EXPECT_EQ(refine(text, o),
            R"("builtin.module"() ({
  "func.func"() <{function_type = (tensor<i64>, tensor<3xf32>) -> tensor<3xf32>, sym_name = "main"}> ({
  ^bb0(%0: tensor<i64>, %1: tensor<3xf32>):
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<3xf32>) -> tensor<3xf32>
    %7 = "stablehlo.while"(%2) ({
    ^bb0(%3: tensor<3xf32>):
      %4 = "stablehlo.constant"() <{value = dense<false> : tensor<i1>}> : () -> tensor<i1>
      "stablehlo.return"(%4) : (tensor<i1>) -> ()
    }, {
    ^bb0(%5: tensor<3xf32>):
      %6 = "stablehlo.negate"(%5) : (tensor<3xf32>) -> tensor<3xf32>
      "stablehlo.return"(%6) : (tensor<3xf32>) -> ()
    }) : (tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%7) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) : () -> ()
)");
}

TEST(RefineShapes, RecursionIsAnError) {
  const char *text = R"(func.func @main(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  %0 = call @f(%arg0) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func private @f(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  %0 = call @f(%arg0) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
)";
  RefineOptions o;
  o.arg_types = {tensor(DType::kF32, {2})};
  EXPECT_EQ(refine(text, o), "refine.mlir:6:3: error: 'func.call' op calls @f recursively");
}

TEST(RefineShapes, BroadcastMismatchNamesTheDimension) {
  const char *text = R"(func.func @main(%arg0: tensor<i64>, %arg1: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.constant dense<2> : tensor<i64>
  %1 = stablehlo.multiply %arg0, %0 : tensor<i64>
  %2 = stablehlo.reshape %1 : (tensor<i64>) -> tensor<1xi64>
  %3 = stablehlo.dynamic_broadcast_in_dim %arg1, %2, dims = [0] : (tensor<?xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %3 : tensor<?xf32>
}
)";
  const RefineOptions o = dimensionAndF32(3, {3});
  EXPECT_EQ(refine(text, o),
            "refine.mlir:5:3: error: 'stablehlo.dynamic_broadcast_in_dim' op operand dimension 0 "
            "of size 3 does not broadcast to output dimension 0 of size 6");
}

} // namespace
} // namespace rs::passes
