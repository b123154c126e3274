// RUN: reactant-server run --split-input-file --verify-diagnostics --verify-roundtrip --print-ir --print-outcome --pass refine-shapes %s \
// RUN:   | FileCheck %s --check-prefixes=CHECK,CASE
// refine-shapes (passes/refine_shapes.h, docs/shape_polymorphism.md) with the default
// --refine-size 3: every `?` of the entry's arguments is 3, and so is each leading integer
// scalar (dimension) argument.

// The shape operand is built from the dimension argument (testdata/add_dynamic.mlir).
// CHECK: // refine-shapes: refined 2 value(s), folded 3 op(s), made 1 op(s) static, removed 0 shape assertion(s), cloned 0 function(s){{$}}
// CHECK: function_type = (tensor<i64>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: ^bb0(%0: tensor<i64>, %1: tensor<3x4xf32>):
// CHECK-NEXT: %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: "func.return"(%2) : (tensor<2x3x4xf32>) -> ()
func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?x4xf32>) -> tensor<2x?x4xf32> {
  %0 = stablehlo.constant dense<2> : tensor<1xi32>
  %1 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
  %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %3 = stablehlo.constant dense<4> : tensor<1xi32>
  %4 = stablehlo.concatenate %0, %2, %3, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
  %5 = stablehlo.dynamic_broadcast_in_dim %arg1, %4, dims = [1, 2] : (tensor<?x4xf32>, tensor<3xi32>) -> tensor<2x?x4xf32>
  return %5 : tensor<2x?x4xf32>
}

// -----

// CASE-LABEL: // -----
// A module that is static already.
// CHECK: // refine-shapes: nothing to refine{{$}}
func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.negate %arg0 : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A shape assertion that fails quotes its error_message with the dimension values.
func.func @main(%arg0: tensor<i64>, %arg1: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.constant dense<4> : tensor<i64>
  %1 = stablehlo.compare GE, %arg0, %0, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
  // expected-error @+1 {{error: 'stablehlo.custom_call' op shape assertion failed: expected b >= 4, got b = 3}}
  stablehlo.custom_call @shape_assertion(%1, %arg0) {error_message = "expected b >= 4, got b = {0}", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> ()
  return %arg1 : tensor<?xf32>
}
