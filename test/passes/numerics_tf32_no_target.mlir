// RUN: reactant-server run --split-input-file --verify-diagnostics --verify-roundtrip --print-ir --pass numerics --numerics-mode tf32 %s
// numerics tf32 (DESIGN.md "Numerics") on a target without TF32: the pass refuses the module.

// expected-error @unknown {{numerics tf32: the compile target has no TF32}}
func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
