// RUN: reactant-server run --split-input-file --verify-diagnostics --verify-roundtrip --print-ir --print-outcome --pass numerics --numerics-mode f32 %s \
// RUN:   | FileCheck %s --check-prefixes=CHECK,CASE
// RUN: reactant-server run --split-input-file --verify-diagnostics --verify-roundtrip --print-ir --pass numerics --numerics-mode f32 %s \
// RUN:   | FileCheck %s --check-prefix=CASE
// numerics f32 (DESIGN.md "Numerics"): every f32 matmul-class op without an algorithm is
// pinned to HIGHEST, TF32 algorithms become all-f32, the check proves the pin.

// A DEFAULT dot_general is pinned.
// CHECK: // numerics: f32 (pinned 1 dot_general){{$}}
// CHECK: "stablehlo.dot_general"
// CHECK: precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]
// CASE-NOT: precision DEFAULT
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CASE-LABEL: // -----
// HIGH is not HIGHEST (XLA may use TF32 or bf16x3 for it): pinned.
// CHECK: // numerics: f32 (pinned 1 dot_general){{$}}
// CHECK: precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]
// CASE-NOT: precision HIGH>
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [HIGH, HIGH] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CASE-LABEL: // -----
// One operand at DEFAULT is enough to pin both.
// CHECK: // numerics: f32 (pinned 1 dot_general){{$}}
// CHECK: precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [HIGHEST, DEFAULT] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CASE-LABEL: // -----
// Already HIGHEST: nothing to do.
// CHECK: // numerics: f32 (nothing to pin){{$}}
// CHECK: precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CASE-LABEL: // -----
// No precision_config at all (the portable export's spelling) means DEFAULT: added.
// CHECK: // numerics: f32 (pinned 1 dot_general){{$}}
// CHECK: <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}>
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CASE-LABEL: // -----
// bf16 and f64 ops are not f32: TF32 never touches them, HIGHEST would change them.
// CHECK: // numerics: f32 (nothing to pin){{$}}
// CASE-NOT: HIGHEST
func.func @main(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>, %c: tensor<2x3xf64>, %d: tensor<3x4xf64>) -> (tensor<2x4xbf16>, tensor<2x4xf64>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xbf16>, tensor<3x4xbf16>) -> tensor<2x4xbf16>
  %1 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0] : (tensor<2x3xf64>, tensor<3x4xf64>) -> tensor<2x4xf64>
  return %0, %1 : tensor<2x4xbf16>, tensor<2x4xf64>
}

// -----

// CASE-LABEL: // -----
// A TF32 algorithm is rewritten to the all-f32 algorithm; precision_config is kept
// (an algorithm overrides it).
// CHECK: // numerics: f32 (rewrote 1 tf32 algorithm(s)){{$}}
// CHECK: algorithm = #stablehlo.dot_algorithm<lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>
// CHECK: precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]
// CASE-NOT: tf32
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CASE-LABEL: // -----
// TF32_TF32_F32_X3 (three TF32 products) also becomes the one-product f32 algorithm.
// CHECK: // numerics: f32 (rewrote 1 tf32 algorithm(s)){{$}}
// CHECK: lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false>
// CASE-NOT: num_primitive_operations = 3
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CASE-LABEL: // -----
// A non-TF32 explicit algorithm (BF16_BF16_F32_X6) states the exporter's intent: kept,
// and the check accepts it.
// CHECK: // numerics: f32 (nothing to pin){{$}}
// CHECK: lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32
// CASE-NOT: HIGHEST
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 6, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CASE-LABEL: // -----
// The legacy stablehlo.dot is a matmul too (counted with dot_general).
// CHECK: // numerics: f32 (pinned 1 dot_general){{$}}
// CHECK: "stablehlo.dot"(%0, %1) <{precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}>
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.dot"(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CASE-LABEL: // -----
// A convolution without precision_config gets one, in sorted property position.
// CHECK: // numerics: f32 (pinned 1 convolution){{$}}
// CHECK: "stablehlo.convolution"
// CHECK: padding = dense<1> : tensor<2x2xi64>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>], rhs_dilation
func.func @main(%x: tensor<1x8x8x1xf32>, %w: tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "stablehlo.convolution"(%x, %w) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 2, 2>}> : (tensor<1x8x8x1xf32>, tensor<3x3x1x4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// CASE-LABEL: // -----
// Ops in called functions and in nested regions (a while body) are pinned too.
// CHECK: // numerics: f32 (pinned 3 dot_general){{$}}
// CHECK: "func.func"
// CHECK: "stablehlo.dot_general"
// CHECK: precision HIGHEST
// CHECK: "stablehlo.while"
// CHECK: "stablehlo.dot_general"
// CHECK: precision HIGHEST
// CHECK: "stablehlo.dot_general"
// CHECK: precision HIGHEST
// CASE-NOT: precision DEFAULT
func.func private @square(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
func.func @main(%i: tensor<i32>, %a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0:2 = "stablehlo.while"(%i, %a) ({
  ^bb0(%x: tensor<i32>, %y: tensor<2x2xf32>):
    %c = stablehlo.constant dense<3> : tensor<i32>
    %p = stablehlo.compare LT, %x, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }, {
  ^bb0(%x: tensor<i32>, %y: tensor<2x2xf32>):
    %d = stablehlo.dot_general %y, %y, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    stablehlo.return %x, %d : tensor<i32>, tensor<2x2xf32>
  }) : (tensor<i32>, tensor<2x2xf32>) -> (tensor<i32>, tensor<2x2xf32>)
  %1 = call @square(%0#1) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = stablehlo.dot_general %1, %1, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}

// -----

// CASE-LABEL: // -----
// Opaque ops cannot be governed: counted and named, sorted and unique.
// CHECK: // numerics: f32 (pinned 1 dot_general, UNGOVERNED opaque ops: stablehlo.cholesky, stablehlo.custom_call){{$}}
// CHECK: "stablehlo.custom_call"
// CHECK: "stablehlo.cholesky"
func.func @main(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "stablehlo.custom_call"(%a) <{call_target_name = "my_matmul"}> : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = "stablehlo.custom_call"(%0) <{call_target_name = "my_matmul"}> : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "stablehlo.cholesky"(%1) <{lower = true}> : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %3 = stablehlo.dot_general %2, %2, contracting_dims = [1] x [0] : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %3 : tensor<2x2xf32>
}

// -----

// A precision_config that is not a list of precisions is a malformed module.
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'stablehlo.dot_general' op precision_config holds a non-precision value}}
  %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [1 : i32, 2 : i32]}> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'stablehlo.dot_general' op precision_config is not an array of precisions}}
  %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = "HIGHEST"}> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
