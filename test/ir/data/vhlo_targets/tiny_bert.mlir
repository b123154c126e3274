module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x16xi32>, %arg1: tensor<1x16xi32>, %arg2: tensor<512x64xf32>, %arg3: tensor<16x64xf32>, %arg4: tensor<64xf32>, %arg5: tensor<64xf32>, %arg6: tensor<64x192xf32>, %arg7: tensor<192xf32>, %arg8: tensor<64x64xf32>, %arg9: tensor<64xf32>, %arg10: tensor<64xf32>, %arg11: tensor<64xf32>, %arg12: tensor<64x256xf32>, %arg13: tensor<256xf32>, %arg14: tensor<256x64xf32>, %arg15: tensor<64xf32>, %arg16: tensor<64xf32>, %arg17: tensor<64xf32>, %arg18: tensor<64x192xf32>, %arg19: tensor<192xf32>, %arg20: tensor<64x64xf32>, %arg21: tensor<64xf32>, %arg22: tensor<64xf32>, %arg23: tensor<64xf32>, %arg24: tensor<64x256xf32>, %arg25: tensor<256xf32>, %arg26: tensor<256x64xf32>, %arg27: tensor<64xf32>, %arg28: tensor<64x64xf32>, %arg29: tensor<64xf32>) -> (tensor<1x16x64xf32> {jax.result_info = "result[0]"}, tensor<1x64xf32> {jax.result_info = "result[1]"}) {
    %0 = call @_take(%arg2, %arg0) : (tensor<512x64xf32>, tensor<1x16xi32>) -> tensor<1x16x64xf32>
    %1 = stablehlo.broadcast_in_dim %arg3, dims = [1, 2] : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
    %2 = stablehlo.add %0, %1 : tensor<1x16x64xf32>
    %3 = stablehlo.convert %arg1 : (tensor<1x16xi32>) -> tensor<1x16xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x16xf32>
    %5 = stablehlo.subtract %4, %3 : tensor<1x16xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0, 3] : (tensor<1x16xf32>) -> tensor<1x1x1x16xf32>
    %cst_0 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<1x1x1x16xf32>
    %8 = stablehlo.multiply %6, %7 : tensor<1x1x1x16xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %9 = stablehlo.reduce(%2 init: %cst_1) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %cst_2 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %11 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %12 = stablehlo.divide %10, %11 : tensor<1x16x1xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %14 = stablehlo.subtract %2, %13 : tensor<1x16x64xf32>
    %15 = stablehlo.multiply %14, %14 : tensor<1x16x64xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %16 = stablehlo.reduce(%15 init: %cst_3) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %cst_4 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %cst_4, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %19 = stablehlo.divide %17, %18 : tensor<1x16x1xf32>
    %20 = stablehlo.broadcast_in_dim %12, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %21 = stablehlo.subtract %2, %20 : tensor<1x16x64xf32>
    %cst_5 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %22 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %23 = stablehlo.add %19, %22 : tensor<1x16x1xf32>
    %24 = stablehlo.rsqrt %23 : tensor<1x16x1xf32>
    %25 = stablehlo.broadcast_in_dim %24, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %26 = stablehlo.multiply %21, %25 : tensor<1x16x64xf32>
    %27 = stablehlo.broadcast_in_dim %arg4, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %28 = stablehlo.broadcast_in_dim %27, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %29 = stablehlo.multiply %26, %28 : tensor<1x16x64xf32>
    %30 = stablehlo.broadcast_in_dim %arg5, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %32 = stablehlo.add %29, %31 : tensor<1x16x64xf32>
    %33 = stablehlo.dot_general %32, %arg6, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x16x64xf32>, tensor<64x192xf32>) -> tensor<1x16x192xf32>
    %34 = stablehlo.broadcast_in_dim %arg7, dims = [2] : (tensor<192xf32>) -> tensor<1x1x192xf32>
    %35 = stablehlo.broadcast_in_dim %34, dims = [0, 1, 2] : (tensor<1x1x192xf32>) -> tensor<1x16x192xf32>
    %36 = stablehlo.add %33, %35 : tensor<1x16x192xf32>
    %37 = stablehlo.slice %36 [0:1, 0:16, 0:64] : (tensor<1x16x192xf32>) -> tensor<1x16x64xf32>
    %38 = stablehlo.slice %36 [0:1, 0:16, 64:128] : (tensor<1x16x192xf32>) -> tensor<1x16x64xf32>
    %39 = stablehlo.slice %36 [0:1, 0:16, 128:192] : (tensor<1x16x192xf32>) -> tensor<1x16x64xf32>
    %40 = stablehlo.reshape %37 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %41 = stablehlo.transpose %40, dims = [0, 2, 1, 3] : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %42 = stablehlo.reshape %38 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %43 = stablehlo.transpose %42, dims = [0, 2, 1, 3] : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %44 = stablehlo.reshape %39 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %45 = stablehlo.transpose %44, dims = [0, 2, 1, 3] : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %46 = stablehlo.transpose %43, dims = [0, 1, 3, 2] : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %47 = stablehlo.reshape %41 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %48 = stablehlo.reshape %46 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %49 = stablehlo.dot_general %47, %48, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %50 = stablehlo.broadcast_in_dim %49, dims = [1, 2, 3] : (tensor<4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %cst_6 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %51 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<1x4x16x16xf32>
    %52 = stablehlo.divide %50, %51 : tensor<1x4x16x16xf32>
    %53 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<1x4x16x16xf32>
    %54 = stablehlo.add %52, %53 : tensor<1x4x16x16xf32>
    %cst_7 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %55 = stablehlo.reduce(%54 init: %cst_7) applies stablehlo.maximum across dimensions = [3] : (tensor<1x4x16x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
    %cst_8 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %56 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<1x4x16xf32>
    %57 = stablehlo.maximum %56, %55 : tensor<1x4x16xf32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [0, 1, 2] : (tensor<1x4x16xf32>) -> tensor<1x4x16x1xf32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [0, 1, 2, 3] : (tensor<1x4x16x1xf32>) -> tensor<1x4x16x16xf32>
    %60 = stablehlo.subtract %54, %59 : tensor<1x4x16x16xf32>
    %61 = stablehlo.exponential %60 : tensor<1x4x16x16xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %62 = stablehlo.reduce(%61 init: %cst_9) applies stablehlo.add across dimensions = [3] : (tensor<1x4x16x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
    %63 = stablehlo.broadcast_in_dim %62, dims = [0, 1, 2] : (tensor<1x4x16xf32>) -> tensor<1x4x16x1xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0, 1, 2, 3] : (tensor<1x4x16x1xf32>) -> tensor<1x4x16x16xf32>
    %65 = stablehlo.divide %61, %64 : tensor<1x4x16x16xf32>
    %66 = stablehlo.reshape %65 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %67 = stablehlo.reshape %45 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %68 = stablehlo.dot_general %66, %67, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [1, 2, 3] : (tensor<4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %70 = stablehlo.transpose %69, dims = [0, 2, 1, 3] : (tensor<1x4x16x16xf32>) -> tensor<1x16x4x16xf32>
    %71 = stablehlo.reshape %70 : (tensor<1x16x4x16xf32>) -> tensor<1x16x64xf32>
    %72 = stablehlo.dot_general %71, %arg8, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
    %73 = stablehlo.add %2, %72 : tensor<1x16x64xf32>
    %74 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %75 = stablehlo.broadcast_in_dim %74, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %76 = stablehlo.add %73, %75 : tensor<1x16x64xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %77 = stablehlo.reduce(%76 init: %cst_10) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %78 = stablehlo.broadcast_in_dim %77, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %cst_11 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %79 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %80 = stablehlo.divide %78, %79 : tensor<1x16x1xf32>
    %81 = stablehlo.broadcast_in_dim %80, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %82 = stablehlo.subtract %76, %81 : tensor<1x16x64xf32>
    %83 = stablehlo.multiply %82, %82 : tensor<1x16x64xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %84 = stablehlo.reduce(%83 init: %cst_12) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %85 = stablehlo.broadcast_in_dim %84, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %cst_13 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %86 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %87 = stablehlo.divide %85, %86 : tensor<1x16x1xf32>
    %88 = stablehlo.broadcast_in_dim %80, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %89 = stablehlo.subtract %76, %88 : tensor<1x16x64xf32>
    %cst_14 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %90 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %91 = stablehlo.add %87, %90 : tensor<1x16x1xf32>
    %92 = stablehlo.rsqrt %91 : tensor<1x16x1xf32>
    %93 = stablehlo.broadcast_in_dim %92, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %94 = stablehlo.multiply %89, %93 : tensor<1x16x64xf32>
    %95 = stablehlo.broadcast_in_dim %arg10, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %96 = stablehlo.broadcast_in_dim %95, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %97 = stablehlo.multiply %94, %96 : tensor<1x16x64xf32>
    %98 = stablehlo.broadcast_in_dim %arg11, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %99 = stablehlo.broadcast_in_dim %98, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %100 = stablehlo.add %97, %99 : tensor<1x16x64xf32>
    %101 = stablehlo.dot_general %100, %arg12, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x16x64xf32>, tensor<64x256xf32>) -> tensor<1x16x256xf32>
    %102 = stablehlo.broadcast_in_dim %arg13, dims = [2] : (tensor<256xf32>) -> tensor<1x1x256xf32>
    %103 = stablehlo.broadcast_in_dim %102, dims = [0, 1, 2] : (tensor<1x1x256xf32>) -> tensor<1x16x256xf32>
    %104 = stablehlo.add %101, %103 : tensor<1x16x256xf32>
    %cst_15 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %105 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<1x16x256xf32>
    %106 = stablehlo.multiply %105, %104 : tensor<1x16x256xf32>
    %107 = stablehlo.negate %104 : tensor<1x16x256xf32>
    %cst_16 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %108 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<1x16x256xf32>
    %109 = stablehlo.multiply %107, %108 : tensor<1x16x256xf32>
    %110 = chlo.erfc %109 : tensor<1x16x256xf32> -> tensor<1x16x256xf32>
    %111 = stablehlo.multiply %106, %110 : tensor<1x16x256xf32>
    %112 = stablehlo.dot_general %111, %arg14, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x16x256xf32>, tensor<256x64xf32>) -> tensor<1x16x64xf32>
    %113 = stablehlo.add %76, %112 : tensor<1x16x64xf32>
    %114 = stablehlo.broadcast_in_dim %arg15, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %115 = stablehlo.broadcast_in_dim %114, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %116 = stablehlo.add %113, %115 : tensor<1x16x64xf32>
    %cst_17 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %117 = stablehlo.reduce(%116 init: %cst_17) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %118 = stablehlo.broadcast_in_dim %117, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %cst_18 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %119 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %120 = stablehlo.divide %118, %119 : tensor<1x16x1xf32>
    %121 = stablehlo.broadcast_in_dim %120, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %122 = stablehlo.subtract %116, %121 : tensor<1x16x64xf32>
    %123 = stablehlo.multiply %122, %122 : tensor<1x16x64xf32>
    %cst_19 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %124 = stablehlo.reduce(%123 init: %cst_19) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %125 = stablehlo.broadcast_in_dim %124, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %cst_20 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %126 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %127 = stablehlo.divide %125, %126 : tensor<1x16x1xf32>
    %128 = stablehlo.broadcast_in_dim %120, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %129 = stablehlo.subtract %116, %128 : tensor<1x16x64xf32>
    %cst_21 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %130 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %131 = stablehlo.add %127, %130 : tensor<1x16x1xf32>
    %132 = stablehlo.rsqrt %131 : tensor<1x16x1xf32>
    %133 = stablehlo.broadcast_in_dim %132, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %134 = stablehlo.multiply %129, %133 : tensor<1x16x64xf32>
    %135 = stablehlo.broadcast_in_dim %arg16, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %136 = stablehlo.broadcast_in_dim %135, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %137 = stablehlo.multiply %134, %136 : tensor<1x16x64xf32>
    %138 = stablehlo.broadcast_in_dim %arg17, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %139 = stablehlo.broadcast_in_dim %138, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %140 = stablehlo.add %137, %139 : tensor<1x16x64xf32>
    %141 = stablehlo.dot_general %140, %arg18, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x16x64xf32>, tensor<64x192xf32>) -> tensor<1x16x192xf32>
    %142 = stablehlo.broadcast_in_dim %arg19, dims = [2] : (tensor<192xf32>) -> tensor<1x1x192xf32>
    %143 = stablehlo.broadcast_in_dim %142, dims = [0, 1, 2] : (tensor<1x1x192xf32>) -> tensor<1x16x192xf32>
    %144 = stablehlo.add %141, %143 : tensor<1x16x192xf32>
    %145 = stablehlo.slice %144 [0:1, 0:16, 0:64] : (tensor<1x16x192xf32>) -> tensor<1x16x64xf32>
    %146 = stablehlo.slice %144 [0:1, 0:16, 64:128] : (tensor<1x16x192xf32>) -> tensor<1x16x64xf32>
    %147 = stablehlo.slice %144 [0:1, 0:16, 128:192] : (tensor<1x16x192xf32>) -> tensor<1x16x64xf32>
    %148 = stablehlo.reshape %145 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %149 = stablehlo.transpose %148, dims = [0, 2, 1, 3] : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %150 = stablehlo.reshape %146 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %151 = stablehlo.transpose %150, dims = [0, 2, 1, 3] : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %152 = stablehlo.reshape %147 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %153 = stablehlo.transpose %152, dims = [0, 2, 1, 3] : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %154 = stablehlo.transpose %151, dims = [0, 1, 3, 2] : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %155 = stablehlo.reshape %149 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %156 = stablehlo.reshape %154 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %157 = stablehlo.dot_general %155, %156, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %158 = stablehlo.broadcast_in_dim %157, dims = [1, 2, 3] : (tensor<4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %cst_22 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %159 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<1x4x16x16xf32>
    %160 = stablehlo.divide %158, %159 : tensor<1x4x16x16xf32>
    %161 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<1x4x16x16xf32>
    %162 = stablehlo.add %160, %161 : tensor<1x4x16x16xf32>
    %cst_23 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %163 = stablehlo.reduce(%162 init: %cst_23) applies stablehlo.maximum across dimensions = [3] : (tensor<1x4x16x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
    %cst_24 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %164 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<1x4x16xf32>
    %165 = stablehlo.maximum %164, %163 : tensor<1x4x16xf32>
    %166 = stablehlo.broadcast_in_dim %165, dims = [0, 1, 2] : (tensor<1x4x16xf32>) -> tensor<1x4x16x1xf32>
    %167 = stablehlo.broadcast_in_dim %166, dims = [0, 1, 2, 3] : (tensor<1x4x16x1xf32>) -> tensor<1x4x16x16xf32>
    %168 = stablehlo.subtract %162, %167 : tensor<1x4x16x16xf32>
    %169 = stablehlo.exponential %168 : tensor<1x4x16x16xf32>
    %cst_25 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %170 = stablehlo.reduce(%169 init: %cst_25) applies stablehlo.add across dimensions = [3] : (tensor<1x4x16x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
    %171 = stablehlo.broadcast_in_dim %170, dims = [0, 1, 2] : (tensor<1x4x16xf32>) -> tensor<1x4x16x1xf32>
    %172 = stablehlo.broadcast_in_dim %171, dims = [0, 1, 2, 3] : (tensor<1x4x16x1xf32>) -> tensor<1x4x16x16xf32>
    %173 = stablehlo.divide %169, %172 : tensor<1x4x16x16xf32>
    %174 = stablehlo.reshape %173 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %175 = stablehlo.reshape %153 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %176 = stablehlo.dot_general %174, %175, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %177 = stablehlo.broadcast_in_dim %176, dims = [1, 2, 3] : (tensor<4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %178 = stablehlo.transpose %177, dims = [0, 2, 1, 3] : (tensor<1x4x16x16xf32>) -> tensor<1x16x4x16xf32>
    %179 = stablehlo.reshape %178 : (tensor<1x16x4x16xf32>) -> tensor<1x16x64xf32>
    %180 = stablehlo.dot_general %179, %arg20, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
    %181 = stablehlo.add %116, %180 : tensor<1x16x64xf32>
    %182 = stablehlo.broadcast_in_dim %arg21, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %183 = stablehlo.broadcast_in_dim %182, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %184 = stablehlo.add %181, %183 : tensor<1x16x64xf32>
    %cst_26 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %185 = stablehlo.reduce(%184 init: %cst_26) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %186 = stablehlo.broadcast_in_dim %185, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %cst_27 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %187 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %188 = stablehlo.divide %186, %187 : tensor<1x16x1xf32>
    %189 = stablehlo.broadcast_in_dim %188, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %190 = stablehlo.subtract %184, %189 : tensor<1x16x64xf32>
    %191 = stablehlo.multiply %190, %190 : tensor<1x16x64xf32>
    %cst_28 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %192 = stablehlo.reduce(%191 init: %cst_28) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %193 = stablehlo.broadcast_in_dim %192, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %cst_29 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %194 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %195 = stablehlo.divide %193, %194 : tensor<1x16x1xf32>
    %196 = stablehlo.broadcast_in_dim %188, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %197 = stablehlo.subtract %184, %196 : tensor<1x16x64xf32>
    %cst_30 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %198 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %199 = stablehlo.add %195, %198 : tensor<1x16x1xf32>
    %200 = stablehlo.rsqrt %199 : tensor<1x16x1xf32>
    %201 = stablehlo.broadcast_in_dim %200, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %202 = stablehlo.multiply %197, %201 : tensor<1x16x64xf32>
    %203 = stablehlo.broadcast_in_dim %arg22, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %204 = stablehlo.broadcast_in_dim %203, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %205 = stablehlo.multiply %202, %204 : tensor<1x16x64xf32>
    %206 = stablehlo.broadcast_in_dim %arg23, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %207 = stablehlo.broadcast_in_dim %206, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %208 = stablehlo.add %205, %207 : tensor<1x16x64xf32>
    %209 = stablehlo.dot_general %208, %arg24, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x16x64xf32>, tensor<64x256xf32>) -> tensor<1x16x256xf32>
    %210 = stablehlo.broadcast_in_dim %arg25, dims = [2] : (tensor<256xf32>) -> tensor<1x1x256xf32>
    %211 = stablehlo.broadcast_in_dim %210, dims = [0, 1, 2] : (tensor<1x1x256xf32>) -> tensor<1x16x256xf32>
    %212 = stablehlo.add %209, %211 : tensor<1x16x256xf32>
    %cst_31 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %213 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<1x16x256xf32>
    %214 = stablehlo.multiply %213, %212 : tensor<1x16x256xf32>
    %215 = stablehlo.negate %212 : tensor<1x16x256xf32>
    %cst_32 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %216 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<1x16x256xf32>
    %217 = stablehlo.multiply %215, %216 : tensor<1x16x256xf32>
    %218 = chlo.erfc %217 : tensor<1x16x256xf32> -> tensor<1x16x256xf32>
    %219 = stablehlo.multiply %214, %218 : tensor<1x16x256xf32>
    %220 = stablehlo.dot_general %219, %arg26, contracting_dims = [2] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x16x256xf32>, tensor<256x64xf32>) -> tensor<1x16x64xf32>
    %221 = stablehlo.add %184, %220 : tensor<1x16x64xf32>
    %222 = stablehlo.broadcast_in_dim %arg27, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %223 = stablehlo.broadcast_in_dim %222, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %224 = stablehlo.add %221, %223 : tensor<1x16x64xf32>
    %225 = stablehlo.slice %224 [0:1, 0:1, 0:64] : (tensor<1x16x64xf32>) -> tensor<1x1x64xf32>
    %226 = stablehlo.reshape %225 : (tensor<1x1x64xf32>) -> tensor<1x64xf32>
    %227 = stablehlo.dot_general %226, %arg28, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<1x64xf32>, tensor<64x64xf32>) -> tensor<1x64xf32>
    %228 = stablehlo.broadcast_in_dim %arg29, dims = [1] : (tensor<64xf32>) -> tensor<1x64xf32>
    %229 = stablehlo.add %227, %228 : tensor<1x64xf32>
    %230 = stablehlo.tanh %229 : tensor<1x64xf32>
    return %224, %230 : tensor<1x16x64xf32>, tensor<1x64xf32>
  }
  func.func private @_take(%arg0: tensor<512x64xf32>, %arg1: tensor<1x16xi32>) -> tensor<1x16x64xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<1x16xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<1x16xi32>, tensor<1x16xi32>) -> tensor<1x16xi1>
    %c_0 = stablehlo.constant dense<512> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<1x16xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<1x16xi32>
    %4 = call @_where(%1, %3, %arg1) : (tensor<1x16xi1>, tensor<1x16xi32>, tensor<1x16xi32>) -> tensor<1x16xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<1x16xi32>) -> tensor<1x16x1xi32>
    %c_1 = stablehlo.constant dense<511> : tensor<1xi32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<1x16x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<1x16x1xi32>, tensor<1x16x1xi32>) -> tensor<1x16x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_1, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<1x16x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<1x16x1xi32>, tensor<1x16x1xi32>) -> tensor<1x16x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<1x16x1xi1>
    %c_3 = stablehlo.constant dense<true> : tensor<i1>
    %12 = stablehlo.reduce(%11 init: %c_3) applies stablehlo.and across dimensions = [2] : (tensor<1x16x1xi1>, tensor<i1>) -> tensor<1x16xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 64>}> : (tensor<512x64xf32>, tensor<1x16x1xi32>) -> tensor<1x16x64xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<1x16xi1>) -> tensor<1x16x64xi1>
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x16x64xf32>
    %16 = stablehlo.select %14, %13, %15 : tensor<1x16x64xi1>, tensor<1x16x64xf32>
    return %16 : tensor<1x16x64xf32>
  }
  func.func private @_where(%arg0: tensor<1x16xi1>, %arg1: tensor<1x16xi32>, %arg2: tensor<1x16xi32>) -> tensor<1x16xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<1x16xi1>, tensor<1x16xi32>
    return %0 : tensor<1x16xi32>
  }
}
