module @jit_encoder attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x16xi32>, %arg1: tensor<1x16xi32>, %arg2: tensor<64x16xf32>, %arg3: tensor<16x16xf32>, %arg4: tensor<16x48xf32>, %arg5: tensor<48xf32>, %arg6: tensor<16x16xf32>, %arg7: tensor<16xf32>, %arg8: tensor<16xf32>, %arg9: tensor<16xf32>, %arg10: tensor<16x4xf32>, %arg11: tensor<4xf32>) -> (tensor<1x16x16xf32> {jax.result_info = "result[0]"}, tensor<1x16xf32> {jax.result_info = "result[1]"}, tensor<1x4xf32> {jax.result_info = "result[2]"}) {
    %0 = call @_take(%arg2, %arg0) : (tensor<64x16xf32>, tensor<1x16xi32>) -> tensor<1x16x16xf32>
    %1 = stablehlo.broadcast_in_dim %arg3, dims = [1, 2] : (tensor<16x16xf32>) -> tensor<1x16x16xf32>
    %2 = stablehlo.add %0, %1 : tensor<1x16x16xf32>
    %3 = stablehlo.dot_general %2, %arg4, contracting_dims = [2] x [0], precision = [HIGHEST, HIGHEST] : (tensor<1x16x16xf32>, tensor<16x48xf32>) -> tensor<1x16x48xf32>
    %4 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<48xf32>) -> tensor<1x1x48xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1, 2] : (tensor<1x1x48xf32>) -> tensor<1x16x48xf32>
    %6 = stablehlo.add %3, %5 : tensor<1x16x48xf32>
    %7 = stablehlo.slice %6 [0:1, 0:16, 0:16] : (tensor<1x16x48xf32>) -> tensor<1x16x16xf32>
    %8 = stablehlo.slice %6 [0:1, 0:16, 16:32] : (tensor<1x16x48xf32>) -> tensor<1x16x16xf32>
    %9 = stablehlo.slice %6 [0:1, 0:16, 32:48] : (tensor<1x16x48xf32>) -> tensor<1x16x16xf32>
    %10 = stablehlo.reshape %7 : (tensor<1x16x16xf32>) -> tensor<1x16x2x8xf32>
    %11 = stablehlo.transpose %10, dims = [0, 2, 1, 3] : (tensor<1x16x2x8xf32>) -> tensor<1x2x16x8xf32>
    %12 = stablehlo.reshape %8 : (tensor<1x16x16xf32>) -> tensor<1x16x2x8xf32>
    %13 = stablehlo.transpose %12, dims = [0, 2, 1, 3] : (tensor<1x16x2x8xf32>) -> tensor<1x2x16x8xf32>
    %14 = stablehlo.reshape %9 : (tensor<1x16x16xf32>) -> tensor<1x16x2x8xf32>
    %15 = stablehlo.transpose %14, dims = [0, 2, 1, 3] : (tensor<1x16x2x8xf32>) -> tensor<1x2x16x8xf32>
    %16 = stablehlo.convert %arg1 : (tensor<1x16xi32>) -> tensor<1x16xf32>
    %17 = stablehlo.dot_general %11, %13, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3], precision = [HIGHEST, HIGHEST] : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x16xf32>
    %cst = stablehlo.constant dense<2.82842708> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x2x16x16xf32>
    %19 = stablehlo.divide %17, %18 : tensor<1x2x16x16xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x16xf32>
    %21 = stablehlo.subtract %20, %16 : tensor<1x16xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [0, 3] : (tensor<1x16xf32>) -> tensor<1x1x1x16xf32>
    %cst_1 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<1x1x1x16xf32>
    %24 = stablehlo.multiply %22, %23 : tensor<1x1x1x16xf32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<1x2x16x16xf32>
    %26 = stablehlo.add %19, %25 : tensor<1x2x16x16xf32>
    %cst_2 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %27 = stablehlo.reduce(%26 init: %cst_2) applies stablehlo.maximum across dimensions = [3] : (tensor<1x2x16x16xf32>, tensor<f32>) -> tensor<1x2x16xf32>
    %cst_3 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<1x2x16xf32>
    %29 = stablehlo.maximum %28, %27 : tensor<1x2x16xf32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x1xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [0, 1, 2, 3] : (tensor<1x2x16x1xf32>) -> tensor<1x2x16x16xf32>
    %32 = stablehlo.subtract %26, %31 : tensor<1x2x16x16xf32>
    %33 = stablehlo.exponential %32 : tensor<1x2x16x16xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %34 = stablehlo.reduce(%33 init: %cst_4) applies stablehlo.add across dimensions = [3] : (tensor<1x2x16x16xf32>, tensor<f32>) -> tensor<1x2x16xf32>
    %35 = stablehlo.broadcast_in_dim %34, dims = [0, 1, 2] : (tensor<1x2x16xf32>) -> tensor<1x2x16x1xf32>
    %36 = stablehlo.broadcast_in_dim %35, dims = [0, 1, 2, 3] : (tensor<1x2x16x1xf32>) -> tensor<1x2x16x16xf32>
    %37 = stablehlo.divide %33, %36 : tensor<1x2x16x16xf32>
    %38 = stablehlo.dot_general %37, %15, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2], precision = [HIGHEST, HIGHEST] : (tensor<1x2x16x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
    %39 = stablehlo.transpose %38, dims = [0, 2, 1, 3] : (tensor<1x2x16x8xf32>) -> tensor<1x16x2x8xf32>
    %40 = stablehlo.reshape %39 : (tensor<1x16x2x8xf32>) -> tensor<1x16x16xf32>
    %41 = stablehlo.dot_general %40, %arg6, contracting_dims = [2] x [0], precision = [HIGHEST, HIGHEST] : (tensor<1x16x16xf32>, tensor<16x16xf32>) -> tensor<1x16x16xf32>
    %42 = stablehlo.add %2, %41 : tensor<1x16x16xf32>
    %43 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %44 = stablehlo.broadcast_in_dim %43, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<1x16x16xf32>
    %45 = stablehlo.add %42, %44 : tensor<1x16x16xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %46 = stablehlo.reduce(%45 init: %cst_5) applies stablehlo.add across dimensions = [2] : (tensor<1x16x16xf32>, tensor<f32>) -> tensor<1x16xf32>
    %47 = stablehlo.broadcast_in_dim %46, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %cst_6 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %48 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %49 = stablehlo.divide %47, %48 : tensor<1x16x1xf32>
    %50 = stablehlo.broadcast_in_dim %49, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x16xf32>
    %51 = stablehlo.subtract %45, %50 : tensor<1x16x16xf32>
    %52 = stablehlo.multiply %51, %51 : tensor<1x16x16xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %53 = stablehlo.reduce(%52 init: %cst_7) applies stablehlo.add across dimensions = [2] : (tensor<1x16x16xf32>, tensor<f32>) -> tensor<1x16xf32>
    %54 = stablehlo.broadcast_in_dim %53, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %cst_8 = stablehlo.constant dense<1.600000e+01> : tensor<f32>
    %55 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %56 = stablehlo.divide %54, %55 : tensor<1x16x1xf32>
    %57 = stablehlo.broadcast_in_dim %49, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x16xf32>
    %58 = stablehlo.subtract %45, %57 : tensor<1x16x16xf32>
    %cst_9 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %60 = stablehlo.add %56, %59 : tensor<1x16x1xf32>
    %61 = stablehlo.rsqrt %60 : tensor<1x16x1xf32>
    %62 = stablehlo.broadcast_in_dim %61, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x16xf32>
    %63 = stablehlo.multiply %58, %62 : tensor<1x16x16xf32>
    %64 = stablehlo.broadcast_in_dim %arg8, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %65 = stablehlo.broadcast_in_dim %64, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<1x16x16xf32>
    %66 = stablehlo.multiply %63, %65 : tensor<1x16x16xf32>
    %67 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<16xf32>) -> tensor<1x1x16xf32>
    %68 = stablehlo.broadcast_in_dim %67, dims = [0, 1, 2] : (tensor<1x1x16xf32>) -> tensor<1x16x16xf32>
    %69 = stablehlo.add %66, %68 : tensor<1x16x16xf32>
    %70 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %71 = stablehlo.broadcast_in_dim %70, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x16xf32>
    %72 = stablehlo.multiply %69, %71 : tensor<1x16x16xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %73 = stablehlo.reduce(%72 init: %cst_10) applies stablehlo.add across dimensions = [1] : (tensor<1x16x16xf32>, tensor<f32>) -> tensor<1x16xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %74 = stablehlo.reduce(%16 init: %cst_11) applies stablehlo.add across dimensions = [1] : (tensor<1x16xf32>, tensor<f32>) -> tensor<1xf32>
    %75 = stablehlo.broadcast_in_dim %74, dims = [0] : (tensor<1xf32>) -> tensor<1x1xf32>
    %cst_12 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %76 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<1x1xf32>
    %77 = stablehlo.maximum %75, %76 : tensor<1x1xf32>
    %78 = stablehlo.broadcast_in_dim %77, dims = [0, 1] : (tensor<1x1xf32>) -> tensor<1x16xf32>
    %79 = stablehlo.divide %73, %78 : tensor<1x16xf32>
    %80 = stablehlo.dot_general %79, %arg10, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] : (tensor<1x16xf32>, tensor<16x4xf32>) -> tensor<1x4xf32>
    %81 = stablehlo.broadcast_in_dim %arg11, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %82 = stablehlo.add %80, %81 : tensor<1x4xf32>
    %83 = stablehlo.tanh %82 : tensor<1x4xf32>
    return %69, %79, %83 : tensor<1x16x16xf32>, tensor<1x16xf32>, tensor<1x4xf32>
  }
  func.func private @_take(%arg0: tensor<64x16xf32>, %arg1: tensor<1x16xi32>) -> tensor<1x16x16xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1x16xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<1x16xi32>, tensor<1x16xi32>) -> tensor<1x16xi1>
    %c_0 = stablehlo.constant dense<64> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1x16xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<1x16xi32>
    %4 = call @_where(%1, %3, %arg1) : (tensor<1x16xi1>, tensor<1x16xi32>, tensor<1x16xi32>) -> tensor<1x16xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<1x16xi32>) -> tensor<1x16x1xi32>
    %c_1 = stablehlo.constant dense<63> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<1x16x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<1x16x1xi32>, tensor<1x16x1xi32>) -> tensor<1x16x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<1x16x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<1x16x1xi32>, tensor<1x16x1xi32>) -> tensor<1x16x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<1x16x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<1x16x1xi1>, tensor<i1>) -> tensor<1x16xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 16>}> : (tensor<64x16xf32>, tensor<1x16x1xi32>) -> tensor<1x16x16xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<1x16xi1>) -> tensor<1x16x16xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x16x16xf32>
    %16 = stablehlo.select %14, %13, %15 : tensor<1x16x16xi1>, tensor<1x16x16xf32>
    return %16 : tensor<1x16x16xf32>
  }
  func.func private @_where(%arg0: tensor<1x16xi1>, %arg1: tensor<1x16xi32>, %arg2: tensor<1x16xi32>) -> tensor<1x16xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<1x16xi1>, tensor<1x16xi32>
    return %0 : tensor<1x16xi32>
  }
}
