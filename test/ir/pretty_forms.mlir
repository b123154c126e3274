// RUN: reactant-server run --split-input-file --verify-diagnostics --verify-roundtrip --print-ir %s \
// RUN:   | FileCheck %s --check-prefixes=CHECK,CASE
// Pretty forms and the generic spelling the parser normalises them to.

// CHECK: "stablehlo.rng_bit_generator"(%0) <{rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>}> : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
// CHECK: "stablehlo.rng"(%1, %2, %3) <{rng_distribution = #stablehlo<rng_distribution UNIFORM>}>
func.func @main(%state: tensor<2xui64>, %a: tensor<f32>, %b: tensor<f32>, %shape: tensor<1xi64>) {
  %output_state, %output = stablehlo.rng_bit_generator %state, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
  %0 = stablehlo.rng %a, %b, %shape, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<3xf32>
  func.return
}

// -----

// CASE-LABEL: // -----
// CHECK: "stablehlo.fft"(%0) <{fft_length = array<i64: 4>, fft_type = #stablehlo<fft_type RFFT>}> : (tensor<4xf32>) -> tensor<3xcomplex<f32>>
// CHECK: "stablehlo.real"(%1) : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
// CHECK: "stablehlo.complex"(%2, %2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xcomplex<f32>>
func.func @main(%x: tensor<4xf32>) -> tensor<3xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = RFFT, length = [4] : (tensor<4xf32>) -> tensor<3xcomplex<f32>>
  %1 = stablehlo.real %0 : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
  %2 = stablehlo.complex %1, %1 : tensor<3xcomplex<f32>>
  return %2 : tensor<3xcomplex<f32>>
}

// -----

// CASE-LABEL: // -----
// CHECK: "stablehlo.cholesky"(%0) <{lower = true}> : (tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK: "stablehlo.einsum"(%1, %1) <{einsum_config = "ab,bc->ac"}>
// CHECK: "stablehlo.broadcast"(%2) <{broadcast_sizes = array<i64: 2>}> : (tensor<3x3xf32>) -> tensor<2x3x3xf32>
// CHECK: "stablehlo.reverse"(%3) <{dimensions = array<i64: 0, 2>}>
// CHECK: "stablehlo.get_dimension_size"(%4) <{dimension = 1 : i64}> : (tensor<2x3x3xf32>) -> tensor<i32>
func.func @main(%a: tensor<3x3xf32>) -> tensor<i32> {
  %0 = stablehlo.cholesky %a, lower = true : tensor<3x3xf32>
  %1 = stablehlo.einsum %0, %0, config = "ab,bc->ac" : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %2 = stablehlo.broadcast %1, sizes = [2] : (tensor<3x3xf32>) -> tensor<2x3x3xf32>
  %3 = stablehlo.reverse %2, dims = [0, 2] : tensor<2x3x3xf32>
  %4 = stablehlo.get_dimension_size %3, dim = 1 : (tensor<2x3x3xf32>) -> tensor<i32>
  return %4 : tensor<i32>
}

// -----

// CASE-LABEL: // -----
// CHECK: "stablehlo.dynamic_iota"(%0) <{iota_dimension = 0 : i64}> : (tensor<1xi64>) -> tensor<4xi32>
// CHECK: "stablehlo.dynamic_broadcast_in_dim"(%2, %1) <{broadcast_dimensions = array<i64: 1>, known_expanding_dimensions = array<i64>, known_nonexpanding_dimensions = array<i64: 0>}>
func.func @main(%s: tensor<1xi64>, %t: tensor<2xi64>) -> tensor<3x4xi32> {
  %0 = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi64>) -> tensor<4xi32>
  %1 = stablehlo.dynamic_broadcast_in_dim %0, %t, dims = [1], known_expanding_dimensions = [], known_nonexpanding_dimensions = [0] : (tensor<4xi32>, tensor<2xi64>) -> tensor<3x4xi32>
  return %1 : tensor<3x4xi32>
}

// -----

// CASE-LABEL: // -----
// CHECK: %3 = "stablehlo.tuple"(%0, %1) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
// CHECK-NEXT: %4 = "stablehlo.get_tuple_element"(%3) <{index = 1 : i32}> : (tuple<tensor<f32>, tensor<i32>>) -> tensor<i32>
// CHECK: "stablehlo.after_all"(%2, %2) : (!stablehlo.token, !stablehlo.token) -> !stablehlo.token
func.func @main(%a: tensor<f32>, %b: tensor<i32>, %t: !stablehlo.token) -> tensor<i32> {
  %0 = stablehlo.tuple %a, %b : tuple<tensor<f32>, tensor<i32>>
  %1 = stablehlo.get_tuple_element %0[1] : (tuple<tensor<f32>, tensor<i32>>) -> tensor<i32>
  %2 = stablehlo.after_all %t, %t : !stablehlo.token
  return %1 : tensor<i32>
}

// -----

// CASE-LABEL: // -----
// CHECK: "stablehlo.composite"(%1) <{composite_attributes = {n = 2 : i64}, decomposition = @add_n.impl, name = "my.add_n", version = 1 : i32}> : (tensor<i64>) -> tensor<i64>
// CHECK: "stablehlo.custom_call"(%2) <{api_version = 4 : i32, backend_config = {k = 1 : i64}, call_target_name = "foo-bar", has_side_effect = true}> {mhlo.frontend_attributes = {x = "y"}} : (tensor<i64>) -> ()
func.func @add_n.impl(%arg0: tensor<i64>) -> tensor<i64> {
  return %arg0 : tensor<i64>
}
func.func @main(%x: tensor<i64>) -> tensor<i64> {
  %0 = stablehlo.composite "my.add_n" %x {composite_attributes = {n = 2 : i64}, decomposition = @add_n.impl, version = 1 : i32} : (tensor<i64>) -> tensor<i64>
  stablehlo.custom_call @"foo-bar"(%0) {api_version = 4 : i32, backend_config = {k = 1 : i64}, has_side_effect = true, mhlo.frontend_attributes = {x = "y"}} : (tensor<i64>) -> ()
  return %0 : tensor<i64>
}

// -----

// CASE-LABEL: // -----
// Unary, binary and ternary ops: a single type, or a function type when they differ.
// CHECK: "stablehlo.clamp"(%1, %0, %2) : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK: "stablehlo.bitcast_convert"(%3) : (tensor<3xf32>) -> tensor<3xi32>
// CHECK: "stablehlo.shift_right_logical"(%4, %4) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
// CHECK: "stablehlo.is_finite"(%3) : (tensor<3xf32>) -> tensor<3xi1>
// CHECK: "stablehlo.exponential"(%3) <{result_accuracy = #stablehlo.result_accuracy<atol = 0.0, rtol = 0.0, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}>
func.func @main(%x: tensor<3xf32>, %lo: tensor<f32>, %hi: tensor<f32>) -> tensor<3xi32> {
  %0 = stablehlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = stablehlo.bitcast_convert %0 : (tensor<3xf32>) -> tensor<3xi32>
  %2 = stablehlo.shift_right_logical %1, %1 : tensor<3xi32>
  %3 = stablehlo.is_finite %0 : (tensor<3xf32>) -> tensor<3xi1>
  %4 = stablehlo.exponential %0 {result_accuracy = #stablehlo.result_accuracy<atol = 0.0, rtol = 0.0, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<3xf32>
  return %2 : tensor<3xi32>
}

// -----

// CASE-LABEL: // -----
// Generic ops with regions keep them; properties may also come in the attr-dict.
// CHECK: "stablehlo.reduce_window"(%0, %1) <{padding = dense<{{\[\[}}0, 0], [0, 1]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>}> ({
// CHECK-NEXT: ^bb0(%2: tensor<f32>, %3: tensor<f32>):
// CHECK-NEXT: %4 = "stablehlo.maximum"(%2, %3)
// CHECK-NEXT: "stablehlo.return"(%4) : (tensor<f32>) -> ()
func.func @main(%x: tensor<2x3xf32>, %init: tensor<f32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.reduce_window"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>, padding = dense<[[0, 0], [0, 1]]> : tensor<2x2xi64>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
