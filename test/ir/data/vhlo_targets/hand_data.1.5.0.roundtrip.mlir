module {
  func.func @main(%arg0: tensor<1x8x8x3xf32>, %arg1: tensor<3x3x3x4xf32>, %arg2: tensor<3x1x3x3xf32>, %arg3: tensor<4x6xf32>, %arg4: tensor<2x1xi32>, %arg5: tensor<2x6xf32>, %arg6: tensor<8xi32>, %arg7: tensor<8xi32>, %arg8: tensor<i32>) -> (tensor<1x3x15x4xf32>, tensor<1x3x6x6xf32>, tensor<2x6xf32>, tensor<4x6xf32>, tensor<8x12xf32>, tensor<2x2xf32>, tensor<6x4xf32>, tensor<4x6xf32>, tensor<6x6xf32>, tensor<3x8xf32>, tensor<2x3xf32>, tensor<4x6xf32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xf32>, tensor<8xui8>) {
    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [2, 0]], lhs_dilate = [1, 2], rhs_dilate = [2, 1], reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision DEFAULT>]} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x3x15x4xf32>
    %1 = stablehlo.transpose %arg0, dims = [0, 3, 1, 2] : (tensor<1x8x8x3xf32>) -> tensor<1x3x8x8xf32>
    %2 = stablehlo.convolution(%1, %arg2) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x6x6xf32>
    %3 = "stablehlo.gather"(%arg3, %arg4) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 6>}> : (tensor<4x6xf32>, tensor<2x1xi32>) -> tensor<2x6xf32>
    %4 = "stablehlo.scatter"(%arg3, %arg4, %arg5) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = true}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      %26 = stablehlo.add %arg9, %arg10 : tensor<f32>
      stablehlo.return %26 : tensor<f32>
    }) : (tensor<4x6xf32>, tensor<2x1xi32>, tensor<2x6xf32>) -> tensor<4x6xf32>
    %cst = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %5 = stablehlo.pad %arg3, %cst, low = [1, -1], high = [0, 2], interior = [1, 1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<8x12xf32>
    %6 = stablehlo.slice %arg3 [1:4:2, 0:6:3] : (tensor<4x6xf32>) -> tensor<2x2xf32>
    %7 = stablehlo.transpose %arg3, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %8 = stablehlo.reverse %arg3, dims = [0, 1] : tensor<4x6xf32>
    %9 = stablehlo.concatenate %arg3, %arg5, dim = 0 : (tensor<4x6xf32>, tensor<2x6xf32>) -> tensor<6x6xf32>
    %10 = stablehlo.reshape %arg3 : (tensor<4x6xf32>) -> tensor<3x8xf32>
    %11 = stablehlo.dynamic_slice %arg3, %arg8, %arg8, sizes = [2, 3] : (tensor<4x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    %12 = stablehlo.dynamic_update_slice %arg3, %11, %arg8, %arg8 : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x6xf32>
    %13 = stablehlo.shift_left %arg6, %arg7 : tensor<8xi32>
    %14 = stablehlo.shift_right_logical %arg6, %arg7 : tensor<8xi32>
    %15 = stablehlo.shift_right_arithmetic %arg6, %arg7 : tensor<8xi32>
    %16 = stablehlo.popcnt %arg6 : tensor<8xi32>
    %17 = stablehlo.count_leading_zeros %arg6 : tensor<8xi32>
    %18 = stablehlo.and %13, %14 : tensor<8xi32>
    %19 = stablehlo.or %18, %15 : tensor<8xi32>
    %20 = stablehlo.xor %19, %16 : tensor<8xi32>
    %21 = stablehlo.not %20 : tensor<8xi32>
    %c = stablehlo.constant dense<7> : tensor<8xi32>
    %22 = stablehlo.remainder %arg6, %c : tensor<8xi32>
    %c_0 = stablehlo.constant dense<-3> : tensor<i32>
    %c_1 = stablehlo.constant dense<3> : tensor<i32>
    %23 = stablehlo.clamp %c_0, %22, %c_1 : (tensor<i32>, tensor<8xi32>, tensor<i32>) -> tensor<8xi32>
    %24 = stablehlo.bitcast_convert %arg6 : (tensor<8xi32>) -> tensor<8xf32>
    %25 = stablehlo.convert %arg6 : (tensor<8xi32>) -> tensor<8xui8>
    return %0, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %17, %21, %22, %23, %24, %25 : tensor<1x3x15x4xf32>, tensor<1x3x6x6xf32>, tensor<2x6xf32>, tensor<4x6xf32>, tensor<8x12xf32>, tensor<2x2xf32>, tensor<6x4xf32>, tensor<4x6xf32>, tensor<6x6xf32>, tensor<3x8xf32>, tensor<2x3xf32>, tensor<4x6xf32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xf32>, tensor<8xui8>
  }
}
