module @jit_fwd attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x8x8x1xf32>, %arg1: tensor<3x3x1x16xf32>, %arg2: tensor<16xf32>, %arg3: tensor<3x3x16x32xf32>, %arg4: tensor<32xf32>, %arg5: tensor<128x10xf32>, %arg6: tensor<10xf32>) -> (tensor<1x10xf32> {jax.result_info = "result[0]"}, tensor<1x10xf32> {jax.result_info = "result[1]"}) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x1xf32>, tensor<3x3x1x16xf32>) -> tensor<1x8x8x16xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [3] : (tensor<16xf32>) -> tensor<1x1x1x16xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<1x8x8x16xf32>
    %3 = stablehlo.add %0, %2 : tensor<1x8x8x16xf32>
    %4 = call @relu(%3) : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
    %5 = stablehlo.convolution(%4, %arg3) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x16xf32>, tensor<3x3x16x32xf32>) -> tensor<1x4x4x32xf32>
    %6 = stablehlo.broadcast_in_dim %arg4, dims = [3] : (tensor<32xf32>) -> tensor<1x1x1x32xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1, 2, 3] : (tensor<1x1x1x32xf32>) -> tensor<1x4x4x32xf32>
    %8 = stablehlo.add %5, %7 : tensor<1x4x4x32xf32>
    %9 = call @relu_0(%8) : (tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %11 = "stablehlo.reduce_window"(%9, %10) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %27 = stablehlo.maximum %arg7, %arg8 : tensor<f32>
      stablehlo.return %27 : tensor<f32>
    }) : (tensor<1x4x4x32xf32>, tensor<f32>) -> tensor<1x2x2x32xf32>
    %12 = stablehlo.reshape %11 : (tensor<1x2x2x32xf32>) -> tensor<1x128xf32>
    %13 = stablehlo.dot_general %12, %arg5, contracting_dims = [1] x [0] : (tensor<1x128xf32>, tensor<128x10xf32>) -> tensor<1x10xf32>
    %14 = stablehlo.broadcast_in_dim %arg6, dims = [1] : (tensor<10xf32>) -> tensor<1x10xf32>
    %15 = stablehlo.add %13, %14 : tensor<1x10xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %16 = stablehlo.reduce(%15 init: %cst_0) applies stablehlo.maximum across dimensions = [1] : (tensor<1x10xf32>, tensor<f32>) -> tensor<1xf32>
    %cst_1 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %17 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %18 = stablehlo.maximum %17, %16 : tensor<1xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0] : (tensor<1xf32>) -> tensor<1x1xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x10xf32>
    %21 = stablehlo.subtract %15, %20 : tensor<1x10xf32>
    %22 = stablehlo.exponential %21 : tensor<1x10xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %23 = stablehlo.reduce(%22 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<1x10xf32>, tensor<f32>) -> tensor<1xf32>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0] : (tensor<1xf32>) -> tensor<1x1xf32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x10xf32>
    %26 = stablehlo.divide %22, %25 : tensor<1x10xf32>
    return %15, %26 : tensor<1x10xf32>, tensor<1x10xf32>
  }
  func.func private @relu(%arg0: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x8x8x16xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<1x8x8x16xf32>
    return %1 : tensor<1x8x8x16xf32>
  }
  func.func private @relu_0(%arg0: tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x4x4x32xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<1x4x4x32xf32>
    return %1 : tensor<1x4x4x32xf32>
  }
}
