module @jit_fwd attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x4xf32>, %arg1: tensor<4x16xf32>, %arg2: tensor<16xf32>, %arg3: tensor<16x3xf32>, %arg4: tensor<3xf32>) -> (tensor<1x3xf32> {jax.result_info = "result[0]"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<1x4xf32>, tensor<4x16xf32>) -> tensor<1x16xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [1] : (tensor<16xf32>) -> tensor<1x16xf32>
    %2 = stablehlo.add %0, %1 : tensor<1x16xf32>
    %3 = stablehlo.tanh %2 : tensor<1x16xf32>
    %4 = stablehlo.dot_general %3, %arg3, contracting_dims = [1] x [0] : (tensor<1x16xf32>, tensor<16x3xf32>) -> tensor<1x3xf32>
    %5 = stablehlo.broadcast_in_dim %arg4, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %6 = stablehlo.add %4, %5 : tensor<1x3xf32>
    return %6 : tensor<1x3xf32>
  }
}
