// RUN: reactant-server run --split-input-file --verify-diagnostics %s
// Verifier diagnostics (ir/verify.h): one StableHLO constraint broken per chunk, parsed
// text that the verifier refuses; position and text of the error.
// Elementwise ops first, then data movement, dot_general and convolution, gather and
// scatter, the reductions, control flow.

func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{error: 'stablehlo.add' op operand types tensor<2xf32>, tensor<3xf32> and result type tensor<2xf32> differ}}
  %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{error: 'stablehlo.exponential' op result shape [3] differs from operand shape [2]}}
  %0 = "stablehlo.exponential"(%a) : (tensor<2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{error: 'stablehlo.compare' op result type tensor<2xf32> is not i1 of the operand shape}}
  %0 = "stablehlo.compare"(%a, %a) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @f(%p: tensor<3xi1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{error: 'stablehlo.select' op predicate type tensor<3xi1> is not i1 of rank 0 or shape [2]}}
  %0 = "stablehlo.select"(%p, %a, %a) : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// ----- data movement

func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{error: 'stablehlo.transpose' op permutation is not a permutation of [0, 2)}}
  %0 = "stablehlo.transpose"(%a) <{permutation = array<i64: 0, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @f(%a: tensor<2x3xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{error: 'stablehlo.reshape' op cannot reshape tensor<2x3xf32> to tensor<5xf32>}}
  %0 = "stablehlo.reshape"(%a) : (tensor<2x3xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @f(%a: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{error: 'stablehlo.broadcast_in_dim' op operand dimension 0 of size 3}}
  %0 = "stablehlo.broadcast_in_dim"(%a) <{broadcast_dimensions = array<i64: 1>}> : (tensor<3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{error: 'stablehlo.concatenate' op operand sizes along dimension 0 sum to 5}}
  %0 = "stablehlo.concatenate"(%a, %b) <{dimension = 0 : i64}> : (tensor<2xf32>, tensor<3xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @f(%a: tensor<8xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{error: 'stablehlo.slice' op result dimension 0 is 3, expected 4}}
  %0 = "stablehlo.slice"(%a) <{start_indices = array<i64: 0>, limit_indices = array<i64: 8>, strides = array<i64: 2>}> : (tensor<8xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @f(%a: tensor<2xf32>, %v: tensor<f32>) -> tensor<6xf32> {
  // expected-error @+1 {{error: 'stablehlo.pad' op result dimension 0 is 6, expected 5}}
  %0 = "stablehlo.pad"(%a, %v) <{edge_padding_low = array<i64: 1>, edge_padding_high = array<i64: 1>, interior_padding = array<i64: 1>}> : (tensor<2xf32>, tensor<f32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @f() -> tensor<4xi32> {
  // expected-error @+1 {{error: 'stablehlo.iota' op iota_dimension 1 not in [0, 1)}}
  %0 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// ----- dot_general and convolution

func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{error: 'stablehlo.dot_general' op contracting dimension 0 sizes differ}}
  %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{error: 'stablehlo.dot_general' op result shape [2,4], expected [2,5]}}
  %0 = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @f(%x: tensor<1x8x8x1xf32>, %w: tensor<3x3x1x4xf32>) -> tensor<1x5x5x4xf32> {
  // expected-error @+1 {{error: 'stablehlo.convolution' op result spatial dimension 0 is 5, expected 4}}
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x1xf32>, tensor<3x3x1x4xf32>) -> tensor<1x5x5x4xf32>
  return %0 : tensor<1x5x5x4xf32>
}

// -----

func.func @f(%x: tensor<2x8x8x2xf32>, %w: tensor<3x3x1x4xf32>) -> tensor<1x6x6x4xf32> {
  // expected-error @+1 {{error: 'stablehlo.convolution' op feature_group_count 2 and batch_group_count 2 are invalid}}
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 2 : i64, feature_group_count = 2 : i64} : (tensor<2x8x8x2xf32>, tensor<3x3x1x4xf32>) -> tensor<1x6x6x4xf32>
  return %0 : tensor<1x6x6x4xf32>
}

// ----- gather and scatter

func.func @f(%t: tensor<5x3xf32>, %i: tensor<2xi32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{error: 'stablehlo.gather' op slice size 4 does not fit operand dimension 1}}
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> : (tensor<5x3xf32>, tensor<2xi32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @f(%t: tensor<5x3xf32>, %i: tensor<2xi32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{error: 'stablehlo.gather' op result shape [2,2], expected [2,3]}}
  %0 = "stablehlo.gather"(%t, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>}> : (tensor<5x3xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @f(%x: tensor<5xf32>, %i: tensor<4x1xi32>, %u: tensor<3xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{error: 'stablehlo.scatter' op updates dimension 0 does not match the scatter indices}}
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %b : tensor<f32>
  }) : (tensor<5xf32>, tensor<4x1xi32>, tensor<3xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @f(%x: tensor<5xf32>, %i: tensor<4x1xi32>, %u: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{error: 'stablehlo.scatter' op update_computation argument 1 is tensor<2xf32>, expected a rank-0 tensor}}
  %0 = "stablehlo.scatter"(%x, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<2xf32>):
    stablehlo.return %a : tensor<f32>
  }) : (tensor<5xf32>, tensor<4x1xi32>, tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// ----- reduce, reduce_window, sort

func.func @f(%x: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xf64> {
  // expected-error @+1 {{error: 'stablehlo.reduce' op body result 0 is tensor<f32>, expected tensor<f64>}}
  %0 = "stablehlo.reduce"(%x, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

func.func @f(%x: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<3xf32> {
  // expected-error @+1 {{error: 'stablehlo.reduce' op result 0 of type tensor<3xf32>, expected tensor<2xf32>}}
  %0 = "stablehlo.reduce"(%x, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @f(%x: tensor<2x3xf32>, %z: tensor<f32>) -> tensor<2xf32> {
  // expected-error @+1 {{error: 'stablehlo.reduce' op body must take 2 and return 1 values, got 2 and 2}}
  %0 = "stablehlo.reduce"(%x, %z) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %a, %b : tensor<f32>, tensor<f32>
  }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @f(%x: tensor<4x6xf32>, %z: tensor<f32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{error: 'stablehlo.reduce_window' op result 0 of type tensor<2x6xf32>, expected tensor<3x6xf32>}}
  %0 = "stablehlo.reduce_window"(%x, %z) <{window_dimensions = array<i64: 2, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{error: 'stablehlo.sort' op comparator result 0 is tensor<f32>, expected tensor<i1>}}
  %0 = "stablehlo.sort"(%x) <{dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    stablehlo.return %a : tensor<f32>
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// ----- control flow

func.func @f(%x: tensor<i32>) -> tensor<i32> {
  // expected-error @+1 {{error: 'stablehlo.while' op cond result 0 is tensor<i32>, expected tensor<i1>}}
  %0 = "stablehlo.while"(%x) ({
  ^bb0(%a: tensor<i32>):
    stablehlo.return %a : tensor<i32>
  }, {
  ^bb0(%a: tensor<i32>):
    stablehlo.return %a : tensor<i32>
  }) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

func.func @f(%p: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{error: 'stablehlo.if' op pred must be tensor<i1>}}
  %0 = "stablehlo.if"(%p) ({
    stablehlo.return %x : tensor<f32>
  }, {
    stablehlo.return %x : tensor<f32>
  }) : (tensor<i32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func private @g(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}

func.func @f(%x: tensor<i32>) -> tensor<i32> {
  // expected-error @+1 {{error: 'func.call' op callee @g argument 0 is tensor<f32>, expected tensor<i32>}}
  %0 = func.call @g(%x) : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}
