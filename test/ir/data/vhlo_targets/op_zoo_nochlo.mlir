module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<i32>, %arg2: tensor<8x8xf32>) -> (tensor<4x8xf32> {jax.result_info = "result[0]"}, tensor<4x8xf32> {jax.result_info = "result[1]"}, tensor<4x8xf32> {jax.result_info = "result[2]"}, tensor<4xi32> {jax.result_info = "result[3]"}, tensor<4x8xf32> {jax.result_info = "result[4]"}, tensor<4x8xf32> {jax.result_info = "result[5]"}, tensor<2x3xf32> {jax.result_info = "result[6]"}, tensor<8xi32> {jax.result_info = "result[7]"}, tensor<4x3xf32> {jax.result_info = "result[8]"}, tensor<4x3xi32> {jax.result_info = "result[9]"}, tensor<4x8xf32> {jax.result_info = "result[10]"}, tensor<8xi32> {jax.result_info = "result[11]"}) {
    %c = stablehlo.constant dense<2> : tensor<i32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %c_1 = stablehlo.constant dense<4> : tensor<i32>
    %cst_2 = stablehlo.constant dense<1.000000e+01> : tensor<f32>
    %c_3 = stablehlo.constant dense<8> : tensor<i32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_5 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %c_6 = stablehlo.constant dense<1> : tensor<i32>
    %c_7 = stablehlo.constant dense<5> : tensor<i32>
    %c_8 = stablehlo.constant dense<0> : tensor<i32>
    %0:3 = stablehlo.while(%iterArg = %c_8, %iterArg_9 = %c_8, %iterArg_10 = %arg0) : tensor<i32>, tensor<i32>, tensor<4x8xf32>
    cond {
      %28 = stablehlo.compare LT, %iterArg, %c_7, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %28 : tensor<i1>
    } do {
      %28 = stablehlo.add %iterArg_9, %c_6 : tensor<i32>
      %29 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
      %30 = stablehlo.multiply %iterArg_10, %29 : tensor<4x8xf32>
      %31 = stablehlo.convert %iterArg_9 : (tensor<i32>) -> tensor<f32>
      %32 = stablehlo.broadcast_in_dim %31, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
      %33 = stablehlo.add %iterArg_10, %32 : tensor<4x8xf32>
      %34 = stablehlo.sine %33 : tensor<4x8xf32>
      %35 = stablehlo.add %30, %34 : tensor<4x8xf32>
      %36 = stablehlo.add %iterArg, %c_6 : tensor<i32>
      stablehlo.return %36, %28, %35 : tensor<i32>, tensor<i32>, tensor<4x8xf32>
    }
    %1 = stablehlo.reduce(%arg0 init: %cst_4) applies stablehlo.add across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %2 = stablehlo.compare GT, %1, %cst_4, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %3 = stablehlo.convert %2 : (tensor<i1>) -> tensor<i32>
    %4 = "stablehlo.case"(%3) ({
      %28 = stablehlo.cosine %0#2 : tensor<4x8xf32>
      stablehlo.return %28 : tensor<4x8xf32>
    }, {
      %28 = stablehlo.negate %0#2 : tensor<4x8xf32>
      %29 = stablehlo.multiply %28, %0#2 : tensor<4x8xf32>
      %30 = stablehlo.exponential %29 : tensor<4x8xf32>
      stablehlo.return %30 : tensor<4x8xf32>
    }) : (tensor<i32>) -> tensor<4x8xf32>
    %5 = call @sort(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %6 = call @argmax(%arg0) : (tensor<4x8xf32>) -> tensor<4xi32>
    %7 = call @cumsum(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %8 = stablehlo.compare LT, %arg1, %c_8, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %9 = stablehlo.add %arg1, %c_3 : tensor<i32>
    %10 = stablehlo.select %8, %9, %arg1 : tensor<i1>, tensor<i32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [] : (tensor<i32>) -> tensor<1xi32>
    %12 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %13 = "stablehlo.scatter"(%arg0, %11, %12) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %28 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %28 : tensor<f32>
    }) : (tensor<4x8xf32>, tensor<1xi32>, tensor<4xf32>) -> tensor<4x8xf32>
    %14 = stablehlo.compare LT, %arg1, %c_8, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %15 = stablehlo.add %arg1, %c_1 : tensor<i32>
    %16 = stablehlo.select %14, %15, %arg1 : tensor<i1>, tensor<i32>
    %17 = stablehlo.dynamic_slice %arg0, %16, %c_6, sizes = [2, 3] : (tensor<4x8xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    %18 = stablehlo.iota dim = 0 : tensor<8xi32>
    %19 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %20 = stablehlo.multiply %18, %19 : tensor<8xi32>
    %21:2 = stablehlo.composite "chlo.top_k" %arg0 {composite_attributes = {k = 3 : i64}, decomposition = @chlo.top_k.impl, version = 1 : i32} : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>)
    %22 = stablehlo.dot_general %arg0, %arg2, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %23 = call @clip(%22, %cst_0, %cst) : (tensor<4x8xf32>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
    %24 = stablehlo.iota dim = 0 : tensor<8xi32>
    %25 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %26 = stablehlo.shift_left %24, %25 : tensor<8xi32>
    %27 = stablehlo.xor %26, %20 : tensor<8xi32>
    return %0#2, %4, %5, %6, %7, %13, %17, %20, %21#0, %21#1, %23, %27 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xi32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x3xf32>, tensor<8xi32>, tensor<4x3xf32>, tensor<4x3xi32>, tensor<4x8xf32>, tensor<8xi32>
  }
  func.func private @chlo.top_k.impl(%arg0: tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x3xi32>) {
    %0 = stablehlo.iota dim = 1 : tensor<4x8xi32>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %4 = stablehlo.compare GT, %arg1, %arg2, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    }) : (tensor<4x8xf32>, tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xi32>)
    %2 = stablehlo.slice %1#0 [0:4, 0:3] : (tensor<4x8xf32>) -> tensor<4x3xf32>
    %3 = stablehlo.slice %1#1 [0:4, 0:3] : (tensor<4x8xi32>) -> tensor<4x3xi32>
    return %2, %3 : tensor<4x3xf32>, tensor<4x3xi32>
  }
  func.func private @sort(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %1 = stablehlo.compare EQ, %arg1, %cst_0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %2 = stablehlo.select %1, %cst_0, %arg1 : tensor<i1>, tensor<f32>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.select %3, %cst, %2 : tensor<i1>, tensor<f32>
      %5 = stablehlo.compare EQ, %arg2, %cst_0, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.select %5, %cst_0, %arg2 : tensor<i1>, tensor<f32>
      %7 = stablehlo.compare NE, %arg2, %arg2, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %8 = stablehlo.select %7, %cst, %6 : tensor<i1>, tensor<f32>
      %9 = stablehlo.compare LT, %4, %8, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %9 : tensor<i1>
    }) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
  func.func private @argmax(%arg0: tensor<4x8xf32>) -> tensor<4xi32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.iota dim = 1 : tensor<4x8xi32>
    %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [1] : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
     reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
      %2 = stablehlo.compare GT, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = stablehlo.compare NE, %arg1, %arg1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = stablehlo.or %2, %3 : tensor<i1>
      %5 = stablehlo.compare EQ, %arg1, %arg3, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %arg2, %arg4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.and %5, %6 : tensor<i1>
      %8 = stablehlo.or %4, %7 : tensor<i1>
      %9 = stablehlo.select %4, %arg1, %arg3 : tensor<i1>, tensor<f32>
      %10 = stablehlo.select %8, %arg2, %arg4 : tensor<i1>, tensor<i32>
      stablehlo.return %9, %10 : tensor<f32>, tensor<i32>
    }
    return %1#1 : tensor<4xi32>
  }
  func.func private @cumsum(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %0 = call @cumsum_0(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    return %0 : tensor<4x8xf32>
  }
  func.func private @cumsum_0(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.reduce_window"(%arg0, %0) <{padding = dense<[[0, 0], [7, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 8>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %2 : tensor<f32>
    }) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    return %1 : tensor<4x8xf32>
  }
  func.func private @clip(%arg0: tensor<4x8xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<4x8xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<4x8xf32>
    %3 = stablehlo.convert %arg2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %5 = stablehlo.minimum %4, %2 : tensor<4x8xf32>
    return %5 : tensor<4x8xf32>
  }
}
