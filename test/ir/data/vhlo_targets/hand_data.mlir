// hand_data: data movement, convolution and integer ops, hand-written for the VHLO
// target test data (README.md beside this file). The module has no name and @main no
// explicit visibility (public by default), unlike the JAX fixtures. Covers
// stablehlo.convolution with strides, padding, lhs/rhs dilation, window reversal and a
// precision_config (NHWC), a grouped convolution (NCHW, feature_group_count = 3),
// gather, scatter with an update region, pad with interior and negative padding,
// slice with strides, transpose, reverse, concatenate, reshape, dynamic_slice,
// dynamic_update_slice, and the integer ops shift_left, shift_right_logical,
// shift_right_arithmetic, popcnt, count_leading_zeros, and, or, xor, not, remainder,
// clamp, plus bitcast_convert and convert to ui8. Every op here exists in VHLO from
// 0.9.0 on.
module {
  func.func @main(%img: tensor<1x8x8x3xf32>, %ker: tensor<3x3x3x4xf32>, %dker: tensor<3x1x3x3xf32>, %t: tensor<4x6xf32>, %idx: tensor<2x1xi32>, %u: tensor<2x6xf32>, %bits: tensor<8xi32>, %sh: tensor<8xi32>, %start: tensor<i32>) -> (tensor<1x3x15x4xf32>, tensor<1x3x6x6xf32>, tensor<2x6xf32>, tensor<4x6xf32>, tensor<8x12xf32>, tensor<2x2xf32>, tensor<6x4xf32>, tensor<4x6xf32>, tensor<6x6xf32>, tensor<3x8xf32>, tensor<2x3xf32>, tensor<4x6xf32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xf32>, tensor<8xui8>) {
    // 2-D convolution, NHWC x HWIO -> NHWC; dim 0: pad 1+1, rhs dilation 2, stride 2
    // -> 3; dim 1: lhs dilation 2 (8 -> 15), pad 2+0, stride 1 -> 15
    %conv = stablehlo.convolution(%img, %ker) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [2, 0]], lhs_dilate = [1, 2], rhs_dilate = [2, 1], reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision DEFAULT>]} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x3x15x4xf32>
    // depthwise convolution in NCHW x OIHW -> NCHW, no window attributes at all
    %nchw = stablehlo.transpose %img, dims = [0, 3, 1, 2] : (tensor<1x8x8x3xf32>) -> tensor<1x3x8x8xf32>
    %dconv = stablehlo.convolution(%nchw, %dker) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} : (tensor<1x3x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x6x6xf32>
    // gather rows idx of t
    %g = "stablehlo.gather"(%t, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 6>}> : (tensor<4x6xf32>, tensor<2x1xi32>) -> tensor<2x6xf32>
    // scatter-add u into rows idx of t
    %s = "stablehlo.scatter"(%t, %idx, %u) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = true}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %sum = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %sum : tensor<f32>
    }) : (tensor<4x6xf32>, tensor<2x1xi32>, tensor<2x6xf32>) -> tensor<4x6xf32>
    // pad: dim 0 4 + 3 interior + 1 low = 8; dim 1 6 + 5 interior - 1 low + 2 high = 12
    %pv = stablehlo.constant dense<-1.000000e+00> : tensor<f32>
    %pad = stablehlo.pad %t, %pv, low = [1, -1], high = [0, 2], interior = [1, 1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<8x12xf32>
    %sl = stablehlo.slice %t [1:4:2, 0:6:3] : (tensor<4x6xf32>) -> tensor<2x2xf32>
    %tr = stablehlo.transpose %t, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %rev = stablehlo.reverse %t, dims = [0, 1] : tensor<4x6xf32>
    %cat = stablehlo.concatenate %t, %u, dim = 0 : (tensor<4x6xf32>, tensor<2x6xf32>) -> tensor<6x6xf32>
    %rs = stablehlo.reshape %t : (tensor<4x6xf32>) -> tensor<3x8xf32>
    %ds = stablehlo.dynamic_slice %t, %start, %start, sizes = [2, 3] : (tensor<4x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    %dus = stablehlo.dynamic_update_slice %t, %ds, %start, %start : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x6xf32>
    // integer ops
    %shl = stablehlo.shift_left %bits, %sh : tensor<8xi32>
    %shrl = stablehlo.shift_right_logical %bits, %sh : tensor<8xi32>
    %shra = stablehlo.shift_right_arithmetic %bits, %sh : tensor<8xi32>
    %pc = stablehlo.popcnt %bits : tensor<8xi32>
    %clz = stablehlo.count_leading_zeros %bits : tensor<8xi32>
    %and = stablehlo.and %shl, %shrl : tensor<8xi32>
    %or = stablehlo.or %and, %shra : tensor<8xi32>
    %xor = stablehlo.xor %or, %pc : tensor<8xi32>
    %not = stablehlo.not %xor : tensor<8xi32>
    %seven = stablehlo.constant dense<7> : tensor<8xi32>
    %rem = stablehlo.remainder %bits, %seven : tensor<8xi32>
    %lo = stablehlo.constant dense<-3> : tensor<i32>
    %hi = stablehlo.constant dense<3> : tensor<i32>
    %clamp = stablehlo.clamp %lo, %rem, %hi : (tensor<i32>, tensor<8xi32>, tensor<i32>) -> tensor<8xi32>
    %bc = stablehlo.bitcast_convert %bits : (tensor<8xi32>) -> tensor<8xf32>
    %u8 = stablehlo.convert %bits : (tensor<8xi32>) -> tensor<8xui8>
    return %conv, %dconv, %g, %s, %pad, %sl, %tr, %rev, %cat, %rs, %ds, %dus, %shl, %shrl, %shra, %clz, %not, %rem, %clamp, %bc, %u8 : tensor<1x3x15x4xf32>, tensor<1x3x6x6xf32>, tensor<2x6xf32>, tensor<4x6xf32>, tensor<8x12xf32>, tensor<2x2xf32>, tensor<6x4xf32>, tensor<4x6xf32>, tensor<6x6xf32>, tensor<3x8xf32>, tensor<2x3xf32>, tensor<4x6xf32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xi32>, tensor<8xf32>, tensor<8xui8>
  }
}
