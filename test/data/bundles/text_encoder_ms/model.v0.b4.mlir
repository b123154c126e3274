module @jit_encoder attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x8xi32>, %arg1: tensor<4x8xi32>, %arg2: tensor<64x16xf32>, %arg3: tensor<16x16xf32>, %arg4: tensor<16x48xf32>, %arg5: tensor<48xf32>, %arg6: tensor<16x16xf32>, %arg7: tensor<16xf32>, %arg8: tensor<16xf32>, %arg9: tensor<16xf32>, %arg10: tensor<16x4xf32>, %arg11: tensor<4xf32>) -> (tensor<4x8x16xf32> {jax.result_info = "result[0]"}, tensor<4x16xf32> {jax.result_info = "result[1]"}, tensor<4x4xf32> {jax.result_info = "result[2]"}) {
    %0 = call @_take(%arg2, %arg0) : (tensor<64x16xf32>, tensor<4x8xi32>) -> tensor<4x8x16xf32>
    %1 = stablehlo.slice %arg3 [0:8, 0:16] : (tensor<16x16xf32>) -> tensor<8x16xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [1, 2] : (tensor<8x16xf32>) -> tensor<1x8x16xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0, 1, 2] : (tensor<1x8x16xf32>) -> tensor<4x8x16xf32>
    %4 = stablehlo.add %0, %3 : tensor<4x8x16xf32>
    %5 = stablehlo.dot_general %4, %arg4, contracting_dims = [2] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x8x16xf32>, tensor<16x48xf32>) -> tensor<4x8x48xf32>
    %6 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<48xf32>) -> tensor<1x1x48xf32>
    %7 = stablehlo.broadcast_in_dim %6, dims = [0, 1, 2] : (tensor<1x1x48xf32>) -> tensor<4x8x48xf32>
    %8 = stablehlo.add %5, %7 : tensor<4x8x48xf32>
    %9 = stablehlo.slice %8 [0:4, 0:8, 0:16] : (tensor<4x8x48xf32>) -> tensor<4x8x16xf32>
    %10 = stablehlo.slice %8 [0:4, 0:8, 16:32] : (tensor<4x8x48xf32>) -> tensor<4x8x16xf32>
    %11 = stablehlo.slice %8 [0:4, 0:8, 32:48] : (tensor<4x8x48xf32>) -> tensor<4x8x16xf32>
    %12 = stablehlo.reshape %9 : (tensor<4x8x16xf32>) -> tensor<4x8x2x8xf32>
    %13 = stablehlo.transpose %12, dims = [0, 2, 1, 3] : (tensor<4x8x2x8xf32>) -> tensor<4x2x8x8xf32>
    %14 = stablehlo.reshape %10 : (tensor<4x8x16xf32>) -> tensor<4x8x2x8xf32>
    %15 = stablehlo.transpose %14, dims = [0, 2, 1, 3] : (tensor<4x8x2x8xf32>) -> tensor<4x2x8x8xf32>
    %16 = stablehlo.reshape %11 : (tensor<4x8x16xf32>) -> tensor<4x8x2x8xf32>
    %17 = stablehlo.transpose %16, dims = [0, 2, 1, 3] : (tensor<4x8x2x8xf32>) -> tensor<4x2x8x8xf32>
    %18 = stablehlo.convert %arg1 : (tensor<4x8xi32>) -> tensor<4x8xf32>
    %19 = stablehlo.dot_general %13, %15, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [HIGHEST, HIGHEST] : (tensor<4x2x8x8xf32>, tensor<4x2x8x8xf32>) -> tensor<4x2x8x8xf32>
    %cst = stablehlo.constant dense<2.82842708> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2x8x8xf32>
    %21 = stablehlo.divide %19, %20 : tensor<4x2x8x8xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %23 = stablehlo.subtract %22, %18 : tensor<4x8xf32>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0, 3] : (tensor<4x8xf32>) -> tensor<4x1x1x8xf32>
    %cst_1 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x1x1x8xf32>
    %26 = stablehlo.multiply %24, %25 : tensor<4x1x1x8xf32>
    %27 = stablehlo.broadcast_in_dim %26, dims = [0, 1, 2, 3] : (tensor<4x1x1x8xf32>) -> tensor<4x2x8x8xf32>
    %28 = stablehlo.add %21, %27 : tensor<4x2x8x8xf32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %29 = stablehlo.reduce(%28 init: %cst_2) applies stablehlo.maximum across dimensions = [3] : (tensor<4x2x8x8xf32>, tensor<f32>) -> tensor<4x2x8xf32>
    %cst_3 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<4x2x8xf32>
    %31 = stablehlo.maximum %30, %29 : tensor<4x2x8xf32>
    %32 = stablehlo.broadcast_in_dim %31, dims = [0, 1, 2] : (tensor<4x2x8xf32>) -> tensor<4x2x8x1xf32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [0, 1, 2, 3] : (tensor<4x2x8x1xf32>) -> tensor<4x2x8x8xf32>
    %34 = stablehlo.subtract %28, %33 : tensor<4x2x8x8xf32>
    %35 = stablehlo.exponential %34 : tensor<4x2x8x8xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.reduce(%35 init: %cst_4) applies stablehlo.add across dimensions = [3] : (tensor<4x2x8x8xf32>, tensor<f32>) -> tensor<4x2x8xf32>
    %37 = stablehlo.broadcast_in_dim %36, dims = [0, 1, 2] : (tensor<4x2x8xf32>) -> tensor<4x2x8x1xf32>
    %38 = stablehlo.broadcast_in_dim %37, dims = [0, 1, 2, 3] : (tensor<4x2x8x1xf32>) -> tensor<4x2x8x8xf32>
    %39 = stablehlo.divide %35, %38 : tensor<4x2x8x8xf32>
    %40 = stablehlo.dot_general %39, %17, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [HIGHEST, HIGHEST] : (tensor<4x2x8x8xf32>, tensor<4x2x8x8xf32>) -> tensor<4x2x8x8xf32>
    %41 = stablehlo.transpose %40, dims = [0, 2, 1, 3] : (tensor<4x2x8x8xf32>) -> tensor<4x8x2x8xf32>
    %42 = stablehlo.reshape %41 : (tensor<4x8x2x8xf32>) -> tensor<4x8x16xf32>
    %43 = stablehlo.dot_general %42, %arg6, contracting_dims = [2] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x8x16xf32>, tensor<16x16xf32>) -> tensor<4x8x16xf32>
    %44 = stablehlo.add %4, %43 : tensor<4x8x16xf32>
    %45 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %46 = stablehlo.broadcast_in_dim %45, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<4x8x16xf32>
    %47 = stablehlo.add %44, %46 : tensor<4x8x16xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %48 = stablehlo.reduce(%47 init: %cst_5) applies stablehlo.add across dimensions = [2] : (tensor<4x8x16xf32>, tensor<f32>) -> tensor<4x8xf32>
    %49 = stablehlo.broadcast_in_dim %48, dims = [0, 1] : (tensor<4x8xf32>) -> tensor<4x8x1xf32>
    %cst_6 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %50 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<4x8x1xf32>
    %51 = stablehlo.divide %49, %50 : tensor<4x8x1xf32>
    %52 = stablehlo.broadcast_in_dim %51, dims = [0, 1, 2] : (tensor<4x8x1xf32>) -> tensor<4x8x16xf32>
    %53 = stablehlo.subtract %47, %52 : tensor<4x8x16xf32>
    %54 = stablehlo.multiply %53, %53 : tensor<4x8x16xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %55 = stablehlo.reduce(%54 init: %cst_7) applies stablehlo.add across dimensions = [2] : (tensor<4x8x16xf32>, tensor<f32>) -> tensor<4x8xf32>
    %56 = stablehlo.broadcast_in_dim %55, dims = [0, 1] : (tensor<4x8xf32>) -> tensor<4x8x1xf32>
    %cst_8 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %57 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<4x8x1xf32>
    %58 = stablehlo.divide %56, %57 : tensor<4x8x1xf32>
    %59 = stablehlo.broadcast_in_dim %51, dims = [0, 1, 2] : (tensor<4x8x1xf32>) -> tensor<4x8x16xf32>
    %60 = stablehlo.subtract %47, %59 : tensor<4x8x16xf32>
    %cst_9 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %61 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<4x8x1xf32>
    %62 = stablehlo.add %58, %61 : tensor<4x8x1xf32>
    %63 = stablehlo.rsqrt %62 : tensor<4x8x1xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0, 1, 2] : (tensor<4x8x1xf32>) -> tensor<4x8x16xf32>
    %65 = stablehlo.multiply %60, %64 : tensor<4x8x16xf32>
    %66 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %67 = stablehlo.broadcast_in_dim %66, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<4x8x16xf32>
    %68 = stablehlo.multiply %65, %67 : tensor<4x8x16xf32>
    %69 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %70 = stablehlo.broadcast_in_dim %69, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<4x8x16xf32>
    %71 = stablehlo.add %68, %70 : tensor<4x8x16xf32>
    %72 = stablehlo.broadcast_in_dim %18, dims = [0, 1] : (tensor<4x8xf32>) -> tensor<4x8x1xf32>
    %73 = stablehlo.broadcast_in_dim %72, dims = [0, 1, 2] : (tensor<4x8x1xf32>) -> tensor<4x8x16xf32>
    %74 = stablehlo.multiply %71, %73 : tensor<4x8x16xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %75 = stablehlo.reduce(%74 init: %cst_10) applies stablehlo.add across dimensions = [1] : (tensor<4x8x16xf32>, tensor<f32>) -> tensor<4x16xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %76 = stablehlo.reduce(%18 init: %cst_11) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    %77 = stablehlo.broadcast_in_dim %76, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %cst_12 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %78 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
    %79 = stablehlo.maximum %77, %78 : tensor<4x1xf32>
    %80 = stablehlo.broadcast_in_dim %79, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %81 = stablehlo.divide %75, %80 : tensor<4x16xf32>
    %82 = stablehlo.dot_general %81, %arg10, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
    %83 = stablehlo.broadcast_in_dim %arg11, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %84 = stablehlo.broadcast_in_dim %83, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<4x4xf32>
    %85 = stablehlo.add %82, %84 : tensor<4x4xf32>
    %86 = stablehlo.tanh %85 : tensor<4x4xf32>
    return %71, %81, %86 : tensor<4x8x16xf32>, tensor<4x16xf32>, tensor<4x4xf32>
  }
  func.func private @_take(%arg0: tensor<64x16xf32>, %arg1: tensor<4x8xi32>) -> tensor<4x8x16xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x8xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi1>
    %c_0 = stablehlo.constant dense<64> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4x8xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<4x8xi32>
    %4 = call @_where(%1, %3, %arg1) : (tensor<4x8xi1>, tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<4x8xi32>) -> tensor<4x8x1xi32>
    %c_1 = stablehlo.constant dense<63> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<4x8x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<4x8x1xi32>, tensor<4x8x1xi32>) -> tensor<4x8x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<4x8x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<4x8x1xi32>, tensor<4x8x1xi32>) -> tensor<4x8x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<4x8x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<4x8x1xi1>, tensor<i1>) -> tensor<4x8xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<64x16xf32>, tensor<4x8x1xi32>) -> tensor<4x8x16xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<4x8xi1>) -> tensor<4x8x16xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8x16xf32>
    %16 = stablehlo.select %14, %13, %15 : tensor<4x8x16xi1>, tensor<4x8x16xf32>
    return %16 : tensor<4x8x16xf32>
  }
  func.func private @_where(%arg0: tensor<4x8xi1>, %arg1: tensor<4x8xi32>, %arg2: tensor<4x8xi32>) -> tensor<4x8xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x8xi1>, tensor<4x8xi32>
    return %0 : tensor<4x8xi32>
  }
}
