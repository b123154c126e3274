// RUN: reactant-server run --split-input-file --verify-diagnostics --verify-roundtrip --print-ir --print-outcome --pass numerics --numerics-mode auto --target-tf32 %s \
// RUN:   | FileCheck %s
// numerics auto (DESIGN.md "Numerics") on a TF32 target (CUDA compute capability >= 8.0).

// On a TF32 target the algorithm stays.
// CHECK: // numerics: auto (tf32 active){{$}}
// CHECK: lhs_precision_type = tf32, rhs_precision_type = tf32
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
