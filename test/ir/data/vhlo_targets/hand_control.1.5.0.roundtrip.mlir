module @hand_control {
  func.func public @main(%arg0: tensor<4x8xf32>, %arg1: tensor<ui32>, %arg2: tensor<i64>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<4x8xi1>, tensor<4x8xf32>) {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_2 = %arg0) : tensor<i64>, tensor<4x8xf32>
    cond {
      %12 = stablehlo.compare LT, %iterArg, %arg2, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %12 : tensor<i1>
    } do {
      %c_3 = stablehlo.constant dense<1> : tensor<i64>
      %12 = stablehlo.add %iterArg, %c_3 : tensor<i64>
      %13 = func.call @step(%iterArg_2) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      stablehlo.return %12, %13 : tensor<i64>, tensor<4x8xf32>
    }
    %c_0 = stablehlo.constant dense<5> : tensor<ui32>
    %1 = stablehlo.compare GE, %arg1, %c_0, UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
    %2 = "stablehlo.if"(%1) ({
      %12 = stablehlo.exponential %arg0 : tensor<4x8xf32>
      stablehlo.return %12 : tensor<4x8xf32>
    }, {
      %12 = stablehlo.log_plus_one %arg0 : tensor<4x8xf32>
      stablehlo.return %12 : tensor<4x8xf32>
    }) : (tensor<i1>) -> tensor<4x8xf32>
    %3 = stablehlo.convert %arg1 : (tensor<ui32>) -> tensor<i32>
    %4 = "stablehlo.case"(%3) ({
      %12 = stablehlo.sine %arg0 : tensor<4x8xf32>
      stablehlo.return %12 : tensor<4x8xf32>
    }, {
      %12 = stablehlo.cosine %arg0 : tensor<4x8xf32>
      stablehlo.return %12 : tensor<4x8xf32>
    }, {
      %12 = stablehlo.abs %arg0 : tensor<4x8xf32>
      stablehlo.return %12 : tensor<4x8xf32>
    }) : (tensor<i32>) -> tensor<4x8xf32>
    %5 = stablehlo.iota dim = 1 : tensor<4x8xi32>
    %6:2 = "stablehlo.sort"(%arg0, %5) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>, %arg5: tensor<i32>, %arg6: tensor<i32>):
      %12 = stablehlo.compare GT, %arg3, %arg4, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %12 : tensor<i1>
    }) : (tensor<4x8xf32>, tensor<4x8xi32>) -> (tensor<4x8xf32>, tensor<4x8xi32>)
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %7:2 = stablehlo.reduce(%arg0 init: %cst), (%5 init: %c_1) across dimensions = [1] : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
     reducer(%arg3: tensor<f32>, %arg5: tensor<f32>) (%arg4: tensor<i32>, %arg6: tensor<i32>)  {
      %12 = stablehlo.compare GE, %arg3, %arg5, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %13 = stablehlo.select %12, %arg3, %arg5 : tensor<i1>, tensor<f32>
      %14 = stablehlo.select %12, %arg4, %arg6 : tensor<i1>, tensor<i32>
      stablehlo.return %13, %14 : tensor<f32>, tensor<i32>
    }
    %8 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
    %9 = stablehlo.compare EQ, %arg0, %6#0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
    %10 = stablehlo.select %9, %2, %4 : tensor<4x8xi1>, tensor<4x8xf32>
    %11 = call @step(%10) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    return %0#1, %2, %4, %6#0, %6#1, %7#0, %7#1, %8, %9, %11 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xi32>, tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<4x8xi1>, tensor<4x8xf32>
  }
  func.func private @step(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<4x8xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %1 = stablehlo.multiply %arg0, %cst : tensor<4x8xf32>
    %2 = stablehlo.add %1, %0 : tensor<4x8xf32>
    return %2 : tensor<4x8xf32>
  }
}
