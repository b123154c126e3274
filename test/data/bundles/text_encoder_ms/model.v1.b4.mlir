module @jit_encoder attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x16xi32>, %arg1: tensor<4x16xi32>, %arg2: tensor<64x16xf32>, %arg3: tensor<16x16xf32>, %arg4: tensor<16x48xf32>, %arg5: tensor<48xf32>, %arg6: tensor<16x16xf32>, %arg7: tensor<16xf32>, %arg8: tensor<16xf32>, %arg9: tensor<16xf32>, %arg10: tensor<16x4xf32>, %arg11: tensor<4xf32>) -> (tensor<4x16x16xf32> {jax.result_info = "result[0]"}, tensor<4x16xf32> {jax.result_info = "result[1]"}, tensor<4x4xf32> {jax.result_info = "result[2]"}) {
    %0 = call @_take(%arg2, %arg0) : (tensor<64x16xf32>, tensor<4x16xi32>) -> tensor<4x16x16xf32>
    %1 = stablehlo.broadcast_in_dim %arg3, dims = [1, 2] : (tensor<16x16xf32>) -> tensor<1x16x16xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2] : (tensor<1x16x16xf32>) -> tensor<4x16x16xf32>
    %3 = stablehlo.add %0, %2 : tensor<4x16x16xf32>
    %4 = stablehlo.dot_general %3, %arg4, contracting_dims = [2] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x16x16xf32>, tensor<16x48xf32>) -> tensor<4x16x48xf32>
    %5 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<48xf32>) -> tensor<1x1x48xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0, 1, 2] : (tensor<1x1x48xf32>) -> tensor<4x16x48xf32>
    %7 = stablehlo.add %4, %6 : tensor<4x16x48xf32>
    %8 = stablehlo.slice %7 [0:4, 0:16, 0:16] : (tensor<4x16x48xf32>) -> tensor<4x16x16xf32>
    %9 = stablehlo.slice %7 [0:4, 0:16, 16:32] : (tensor<4x16x48xf32>) -> tensor<4x16x16xf32>
    %10 = stablehlo.slice %7 [0:4, 0:16, 32:48] : (tensor<4x16x48xf32>) -> tensor<4x16x16xf32>
    %11 = stablehlo.reshape %8 : (tensor<4x16x16xf32>) -> tensor<4x16x2x8xf32>
    %12 = stablehlo.transpose %11, dims = [0, 2, 1, 3] : (tensor<4x16x2x8xf32>) -> tensor<4x2x16x8xf32>
    %13 = stablehlo.reshape %9 : (tensor<4x16x16xf32>) -> tensor<4x16x2x8xf32>
    %14 = stablehlo.transpose %13, dims = [0, 2, 1, 3] : (tensor<4x16x2x8xf32>) -> tensor<4x2x16x8xf32>
    %15 = stablehlo.reshape %10 : (tensor<4x16x16xf32>) -> tensor<4x16x2x8xf32>
    %16 = stablehlo.transpose %15, dims = [0, 2, 1, 3] : (tensor<4x16x2x8xf32>) -> tensor<4x2x16x8xf32>
    %17 = stablehlo.convert %arg1 : (tensor<4x16xi32>) -> tensor<4x16xf32>
    %18 = stablehlo.dot_general %12, %14, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [HIGHEST, HIGHEST] : (tensor<4x2x16x8xf32>, tensor<4x2x16x8xf32>) -> tensor<4x2x16x16xf32>
    %cst = stablehlo.constant dense<2.82842708> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x2x16x16xf32>
    %20 = stablehlo.divide %18, %19 : tensor<4x2x16x16xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x16xf32>
    %22 = stablehlo.subtract %21, %17 : tensor<4x16xf32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [0, 3] : (tensor<4x16xf32>) -> tensor<4x1x1x16xf32>
    %cst_1 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x1x1x16xf32>
    %25 = stablehlo.multiply %23, %24 : tensor<4x1x1x16xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [0, 1, 2, 3] : (tensor<4x1x1x16xf32>) -> tensor<4x2x16x16xf32>
    %27 = stablehlo.add %20, %26 : tensor<4x2x16x16xf32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %28 = stablehlo.reduce(%27 init: %cst_2) applies stablehlo.maximum across dimensions = [3] : (tensor<4x2x16x16xf32>, tensor<f32>) -> tensor<4x2x16xf32>
    %cst_3 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %29 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<4x2x16xf32>
    %30 = stablehlo.maximum %29, %28 : tensor<4x2x16xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [0, 1, 2] : (tensor<4x2x16xf32>) -> tensor<4x2x16x1xf32>
    %32 = stablehlo.broadcast_in_dim %31, dims = [0, 1, 2, 3] : (tensor<4x2x16x1xf32>) -> tensor<4x2x16x16xf32>
    %33 = stablehlo.subtract %27, %32 : tensor<4x2x16x16xf32>
    %34 = stablehlo.exponential %33 : tensor<4x2x16x16xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %35 = stablehlo.reduce(%34 init: %cst_4) applies stablehlo.add across dimensions = [3] : (tensor<4x2x16x16xf32>, tensor<f32>) -> tensor<4x2x16xf32>
    %36 = stablehlo.broadcast_in_dim %35, dims = [0, 1, 2] : (tensor<4x2x16xf32>) -> tensor<4x2x16x1xf32>
    %37 = stablehlo.broadcast_in_dim %36, dims = [0, 1, 2, 3] : (tensor<4x2x16x1xf32>) -> tensor<4x2x16x16xf32>
    %38 = stablehlo.divide %34, %37 : tensor<4x2x16x16xf32>
    %39 = stablehlo.dot_general %38, %16, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [HIGHEST, HIGHEST] : (tensor<4x2x16x16xf32>, tensor<4x2x16x8xf32>) -> tensor<4x2x16x8xf32>
    %40 = stablehlo.transpose %39, dims = [0, 2, 1, 3] : (tensor<4x2x16x8xf32>) -> tensor<4x16x2x8xf32>
    %41 = stablehlo.reshape %40 : (tensor<4x16x2x8xf32>) -> tensor<4x16x16xf32>
    %42 = stablehlo.dot_general %41, %arg6, contracting_dims = [2] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x16x16xf32>, tensor<16x16xf32>) -> tensor<4x16x16xf32>
    %43 = stablehlo.add %3, %42 : tensor<4x16x16xf32>
    %44 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %45 = stablehlo.broadcast_in_dim %44, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<4x16x16xf32>
    %46 = stablehlo.add %43, %45 : tensor<4x16x16xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %47 = stablehlo.reduce(%46 init: %cst_5) applies stablehlo.add across dimensions = [2] : (tensor<4x16x16xf32>, tensor<f32>) -> tensor<4x16xf32>
    %48 = stablehlo.broadcast_in_dim %47, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %cst_6 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %50 = stablehlo.divide %48, %49 : tensor<4x16x1xf32>
    %51 = stablehlo.broadcast_in_dim %50, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x16xf32>
    %52 = stablehlo.subtract %46, %51 : tensor<4x16x16xf32>
    %53 = stablehlo.multiply %52, %52 : tensor<4x16x16xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %54 = stablehlo.reduce(%53 init: %cst_7) applies stablehlo.add across dimensions = [2] : (tensor<4x16x16xf32>, tensor<f32>) -> tensor<4x16xf32>
    %55 = stablehlo.broadcast_in_dim %54, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %cst_8 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %56 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %57 = stablehlo.divide %55, %56 : tensor<4x16x1xf32>
    %58 = stablehlo.broadcast_in_dim %50, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x16xf32>
    %59 = stablehlo.subtract %46, %58 : tensor<4x16x16xf32>
    %cst_9 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %60 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<4x16x1xf32>
    %61 = stablehlo.add %57, %60 : tensor<4x16x1xf32>
    %62 = stablehlo.rsqrt %61 : tensor<4x16x1xf32>
    %63 = stablehlo.broadcast_in_dim %62, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x16xf32>
    %64 = stablehlo.multiply %59, %63 : tensor<4x16x16xf32>
    %65 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %66 = stablehlo.broadcast_in_dim %65, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<4x16x16xf32>
    %67 = stablehlo.multiply %64, %66 : tensor<4x16x16xf32>
    %68 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<4x16x16xf32>
    %70 = stablehlo.add %67, %69 : tensor<4x16x16xf32>
    %71 = stablehlo.broadcast_in_dim %17, dims = [0, 1] : (tensor<4x16xf32>) -> tensor<4x16x1xf32>
    %72 = stablehlo.broadcast_in_dim %71, dims = [0, 1, 2] : (tensor<4x16x1xf32>) -> tensor<4x16x16xf32>
    %73 = stablehlo.multiply %70, %72 : tensor<4x16x16xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %74 = stablehlo.reduce(%73 init: %cst_10) applies stablehlo.add across dimensions = [1] : (tensor<4x16x16xf32>, tensor<f32>) -> tensor<4x16xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %75 = stablehlo.reduce(%17 init: %cst_11) applies stablehlo.add across dimensions = [1] : (tensor<4x16xf32>, tensor<f32>) -> tensor<4xf32>
    %76 = stablehlo.broadcast_in_dim %75, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %cst_12 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %77 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<4x1xf32>
    %78 = stablehlo.maximum %76, %77 : tensor<4x1xf32>
    %79 = stablehlo.broadcast_in_dim %78, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x16xf32>
    %80 = stablehlo.divide %74, %79 : tensor<4x16xf32>
    %81 = stablehlo.dot_general %80, %arg10, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
    %82 = stablehlo.broadcast_in_dim %arg11, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %83 = stablehlo.broadcast_in_dim %82, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<4x4xf32>
    %84 = stablehlo.add %81, %83 : tensor<4x4xf32>
    %85 = stablehlo.tanh %84 : tensor<4x4xf32>
    return %70, %80, %85 : tensor<4x16x16xf32>, tensor<4x16xf32>, tensor<4x4xf32>
  }
  func.func private @_take(%arg0: tensor<64x16xf32>, %arg1: tensor<4x16xi32>) -> tensor<4x16x16xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<4x16xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<4x16xi32>, tensor<4x16xi32>) -> tensor<4x16xi1>
    %c_0 = stablehlo.constant dense<64> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<4x16xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<4x16xi32>
    %4 = call @_where(%1, %3, %arg1) : (tensor<4x16xi1>, tensor<4x16xi32>, tensor<4x16xi32>) -> tensor<4x16xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<4x16xi32>) -> tensor<4x16x1xi32>
    %c_1 = stablehlo.constant dense<63> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<4x16x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<4x16x1xi32>, tensor<4x16x1xi32>) -> tensor<4x16x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<4x16x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<4x16x1xi32>, tensor<4x16x1xi32>) -> tensor<4x16x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<4x16x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<4x16x1xi1>, tensor<i1>) -> tensor<4x16xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<64x16xf32>, tensor<4x16x1xi32>) -> tensor<4x16x16xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<4x16xi1>) -> tensor<4x16x16xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x16x16xf32>
    %16 = stablehlo.select %14, %13, %15 : tensor<4x16x16xi1>, tensor<4x16x16xf32>
    return %16 : tensor<4x16x16xf32>
  }
  func.func private @_where(%arg0: tensor<4x16xi1>, %arg1: tensor<4x16xi32>, %arg2: tensor<4x16xi32>) -> tensor<4x16xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<4x16xi1>, tensor<4x16xi32>
    return %0 : tensor<4x16xi32>
  }
}
