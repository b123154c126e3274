// RUN: reactant-server run --split-input-file --verify-diagnostics --verify-roundtrip --print-ir --print-outcome --pass numerics --numerics-mode auto %s \
// RUN:   | FileCheck %s --check-prefixes=CHECK,CASE
// RUN: reactant-server run --split-input-file --verify-diagnostics --verify-roundtrip --print-ir --pass numerics --numerics-mode auto %s \
// RUN:   | FileCheck %s --check-prefix=CASE
// numerics auto and tf32 (DESIGN.md "Numerics"): on a target without TF32 (the CPU, CUDA
// compute capability < 8.0) explicit TF32 algorithms are removed; otherwise untouched.

// The TF32 algorithm goes; precision_config stays DEFAULT (plain f32 on this target).
// CHECK: // numerics: auto (stripped 1 tf32 algorithm(s): target lacks TF32){{$}}
// CHECK: <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}>
// CASE-NOT: algorithm
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CASE-LABEL: // -----
// A non-TF32 algorithm and a DEFAULT op are left alone; nothing is pinned under auto.
// CHECK: // numerics: auto (f32: target lacks TF32){{$}}
// CHECK: lhs_precision_type = bf16
// CASE-NOT: HIGHEST
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 6, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}
