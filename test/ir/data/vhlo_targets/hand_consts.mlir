// hand_consts: constants and custom calls, hand-written for the VHLO target test data
// (README.md beside this file). Constants of i1 (splat, and 9 elements that do not fill
// whole bytes), i8, ui8, i16, i64, f16, bf16, f32, f64 and complex<f32>, splat and
// non-splat, with extreme values, NaN/Inf/-0 given in hex or decimal, a scalar and a
// zero-element tensor; stablehlo.custom_call with a backend_config string that needs
// escaping, has_side_effect and api_version, one without any of them, and one with no
// results. The module carries a string and a dictionary attribute of its own.
// Every type and op here exists in VHLO from 0.9.0 on.
module @hand_consts attributes {mhlo.frontend_attributes = {note = "hand-written"}, test.flag = true} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<4xi1>, tensor<9xi1>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<4xui8>, tensor<3xi16>, tensor<3xi64>, tensor<3xi64>, tensor<2xf16>, tensor<4xf16>, tensor<2x2xbf16>, tensor<4xbf16>, tensor<f64>, tensor<4xf64>, tensor<2x3xf32>, tensor<0xf32>, tensor<2xcomplex<f32>>, tensor<i32>, tensor<2x3xf32>, tensor<2x3xf32>) {
    %i1s = stablehlo.constant dense<true> : tensor<4xi1>
    %i1 = stablehlo.constant dense<[true, false, false, true, true, false, true, false, true]> : tensor<9xi1>
    %i8s = stablehlo.constant dense<-7> : tensor<2x2xi8>
    %i8 = stablehlo.constant dense<[[-128, -1], [0, 127]]> : tensor<2x2xi8>
    %u8 = stablehlo.constant dense<[0, 1, 254, 255]> : tensor<4xui8>
    %i16 = stablehlo.constant dense<[-32768, 258, 32767]> : tensor<3xi16>
    %i64s = stablehlo.constant dense<-9223372036854775808> : tensor<3xi64>
    %i64 = stablehlo.constant dense<[9223372036854775807, -1, 4294967296]> : tensor<3xi64>
    %f16s = stablehlo.constant dense<1.500000e+00> : tensor<2xf16>
    %f16 = stablehlo.constant dense<[0.000000e+00, -2.000000e+00, 6.550400e+04, 0x7C00]> : tensor<4xf16>
    %bf16s = stablehlo.constant dense<-3.000000e+00> : tensor<2x2xbf16>
    %bf16 = stablehlo.constant dense<[1.000000e+00, 0x7FC0, -0.000000e+00, 3.389530e+38]> : tensor<4xbf16>
    %f64s = stablehlo.constant dense<2.7182818284590451> : tensor<f64>
    %f64 = stablehlo.constant dense<[1.000000e-300, -0.000000e+00, 0x7FF8000000000000, 0xFFF0000000000000]> : tensor<4xf64>
    %f32 = stablehlo.constant dense<[[1.000000e+00, 2.500000e+00, -3.000000e+00], [0x7F800000, 1.401298e-45, 0xFFC00001]]> : tensor<2x3xf32>
    %empty = stablehlo.constant dense<> : tensor<0xf32>
    %c64 = stablehlo.constant dense<[(1.000000e+00,-1.000000e+00), (5.000000e-01,2.000000e+00)]> : tensor<2xcomplex<f32>>
    %i32 = stablehlo.constant dense<42> : tensor<i32>
    %cc = stablehlo.custom_call @my_target(%arg0, %f32) {api_version = 2 : i32, backend_config = "cfg: \"quoted\" tab\09 newline\0A end", has_side_effect = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %cc2 = stablehlo.custom_call @plain_target(%cc) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    stablehlo.custom_call @sink(%cc2) {has_side_effect = true} : (tensor<2x3xf32>) -> ()
    return %i1s, %i1, %i8s, %i8, %u8, %i16, %i64s, %i64, %f16s, %f16, %bf16s, %bf16, %f64s, %f64, %f32, %empty, %c64, %i32, %cc, %cc2 : tensor<4xi1>, tensor<9xi1>, tensor<2x2xi8>, tensor<2x2xi8>, tensor<4xui8>, tensor<3xi16>, tensor<3xi64>, tensor<3xi64>, tensor<2xf16>, tensor<4xf16>, tensor<2x2xbf16>, tensor<4xbf16>, tensor<f64>, tensor<4xf64>, tensor<2x3xf32>, tensor<0xf32>, tensor<2xcomplex<f32>>, tensor<i32>, tensor<2x3xf32>, tensor<2x3xf32>
  }
}
