module @hand_consts attributes {mhlo.frontend_attributes = {note = "hand-written"}, test.flag = true} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<4xi1>, tensor<9xi1>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<4xui8>, tensor<3xi16>, tensor<3xi64>, tensor<3xi64>, tensor<2xf16>, tensor<4xf16>, tensor<2x2xbf16>, tensor<4xbf16>, tensor<f64>, tensor<4xf64>, tensor<2x3xf32>, tensor<0xf32>, tensor<2xcomplex<f32>>, tensor<i32>, tensor<2x3xf32>, tensor<2x3xf32>) {
    %c = stablehlo.constant dense<true> : tensor<4xi1>
    %c_0 = stablehlo.constant dense<[true, false, false, true, true, false, true, false, true]> : tensor<9xi1>
    %c_1 = stablehlo.constant dense<-7> : tensor<2x2xi8>
    %c_2 = stablehlo.constant dense<[[-128, -1], [0, 127]]> : tensor<2x2xi8>
    %c_3 = stablehlo.constant dense<[0, 1, 254, 255]> : tensor<4xui8>
    %c_4 = stablehlo.constant dense<[-32768, 258, 32767]> : tensor<3xi16>
    %c_5 = stablehlo.constant dense<-9223372036854775808> : tensor<3xi64>
    %c_6 = stablehlo.constant dense<[9223372036854775807, -1, 4294967296]> : tensor<3xi64>
    %cst = stablehlo.constant dense<1.500000e+00> : tensor<2xf16>
    %cst_7 = stablehlo.constant dense<[0.000000e+00, -2.000000e+00, 6.550400e+04, 0x7C00]> : tensor<4xf16>
    %cst_8 = stablehlo.constant dense<-3.000000e+00> : tensor<2x2xbf16>
    %cst_9 = stablehlo.constant dense<[1.000000e+00, 0x7FC0, -0.000000e+00, 3.389530e+38]> : tensor<4xbf16>
    %cst_10 = stablehlo.constant dense<2.7182818284590451> : tensor<f64>
    %cst_11 = stablehlo.constant dense<[1.000000e-300, -0.000000e+00, 0x7FF8000000000000, 0xFFF0000000000000]> : tensor<4xf64>
    %cst_12 = stablehlo.constant dense<[[1.000000e+00, 2.500000e+00, -3.000000e+00], [0x7F800000, 1.401300e-45, 0xFFC00001]]> : tensor<2x3xf32>
    %cst_13 = stablehlo.constant dense<> : tensor<0xf32>
    %cst_14 = stablehlo.constant dense<[(1.000000e+00,-1.000000e+00), (5.000000e-01,2.000000e+00)]> : tensor<2xcomplex<f32>>
    %c_15 = stablehlo.constant dense<42> : tensor<i32>
    %0 = stablehlo.custom_call @my_target(%arg0, %cst_12) {api_version = 2 : i32, backend_config = "cfg: \22quoted\22 tab\09 newline\0A end", has_side_effect = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.custom_call @plain_target(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    stablehlo.custom_call @sink(%1) {has_side_effect = true} : (tensor<2x3xf32>) -> ()
    return %c, %c_0, %c_1, %c_2, %c_3, %c_4, %c_5, %c_6, %cst, %cst_7, %cst_8, %cst_9, %cst_10, %cst_11, %cst_12, %cst_13, %cst_14, %c_15, %0, %1 : tensor<4xi1>, tensor<9xi1>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<4xui8>, tensor<3xi16>, tensor<3xi64>, tensor<3xi64>, tensor<2xf16>, tensor<4xf16>, tensor<2x2xbf16>, tensor<4xbf16>, tensor<f64>, tensor<4xf64>, tensor<2x3xf32>, tensor<0xf32>, tensor<2xcomplex<f32>>, tensor<i32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
}
