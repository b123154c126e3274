// RUN: reactant-server run --split-input-file --verify-diagnostics %s
// Diagnostics: position and text of the first error.

func.func @f(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{use of undefined value '%9'}}
  %0 = stablehlo.add %a, %9 : tensor<f32>
  return %0 : tensor<f32>
}

// -----

// expected-error @+1 {{expected '>', got ')'}}
func.func @f(%a: tensor<2xf32) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}

// -----

func.func @f(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{expected type, got 'float32'}}
  %0 = stablehlo.abs %a : tensor<float32>
  return %0 : tensor<f32>
}

// -----

func.func @f(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+2 {{expected ':', got 'return'}}
  %0 = stablehlo.abs %a
  return %0 : tensor<f32>
}

// -----

func.func @f(%a: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.abs %a : tensor<f32>
  // expected-error @+1 {{redefinition of SSA value '%0'}}
  %0 = stablehlo.abs %a : tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @f(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'stablehlo.abs' has 2 result types but 1 results are bound}}
  %0 = "stablehlo.abs"(%a) : (tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0 : tensor<f32>
}

// -----

func.func @f(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{operand #0 of 'stablehlo.negate' has type tensor<f32>, but the op says tensor<i32>}}
  %0 = stablehlo.negate %a : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<f32>
}

// -----

func.func @f() -> tensor<2xi8> {
  // expected-error @+1 {{integer literal 300 does not fit i8}}
  %0 = stablehlo.constant dense<[1, 300]> : tensor<2xi8>
  return %0 : tensor<2xi8>
}

// -----

func.func @f(%x: tensor<1x4x4x1xf32>, %w: tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32> {
  // expected-error @+1 {{invalid convolution dimension label 'q'}}
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, q], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x1xf32>, tensor<3x3x1x1xf32>) -> tensor<1x4x4x1xf32>
  return %0 : tensor<1x4x4x1xf32>
}

// -----

func.func @f(%x: tensor<4xf32>, %c: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'applies' needs exactly one reduced operand}}
  %0:2 = stablehlo.reduce(%x init: %c), (%x init: %c) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0 : tensor<f32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown keyword 'dimz' in 'stablehlo.transpose'}}
  %0 = stablehlo.transpose %x, dimz = [0] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{undefined attribute alias '#nope'}}
func.func @f() attributes {a = #nope} {
  return
}
