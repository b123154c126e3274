module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1x16xi32>, %arg1: tensor<1x16xi32>, %arg2: tensor<512x64xf32>, %arg3: tensor<16x64xf32>, %arg4: tensor<64xf32>, %arg5: tensor<64xf32>, %arg6: tensor<64x192xf32>, %arg7: tensor<192xf32>, %arg8: tensor<64x64xf32>, %arg9: tensor<64xf32>, %arg10: tensor<64xf32>, %arg11: tensor<64xf32>, %arg12: tensor<64x256xf32>, %arg13: tensor<256xf32>, %arg14: tensor<256x64xf32>, %arg15: tensor<64xf32>, %arg16: tensor<64xf32>, %arg17: tensor<64xf32>, %arg18: tensor<64x192xf32>, %arg19: tensor<192xf32>, %arg20: tensor<64x64xf32>, %arg21: tensor<64xf32>, %arg22: tensor<64xf32>, %arg23: tensor<64xf32>, %arg24: tensor<64x256xf32>, %arg25: tensor<256xf32>, %arg26: tensor<256x64xf32>, %arg27: tensor<64xf32>, %arg28: tensor<64x64xf32>, %arg29: tensor<64xf32>) -> (tensor<1x16x64xf32> {jax.result_info = "result[0]"}, tensor<1x64xf32> {jax.result_info = "result[1]"}) {
    %cst = stablehlo.constant dense<1.12837911> : tensor<1x16x256xf32>
    %cst_0 = stablehlo.constant dense<-0.37612626> : tensor<1x16x256xf32>
    %cst_1 = stablehlo.constant dense<0.112835854> : tensor<1x16x256xf32>
    %cst_2 = stablehlo.constant dense<-0.0268538129> : tensor<1x16x256xf32>
    %cst_3 = stablehlo.constant dense<0.00518832775> : tensor<1x16x256xf32>
    %cst_4 = stablehlo.constant dense<-8.0101937E-4> : tensor<1x16x256xf32>
    %cst_5 = stablehlo.constant dense<7.85386146E-5> : tensor<1x16x256xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<1x16x256xf32>
    %cst_7 = stablehlo.constant dense<-88.7228394> : tensor<1x16x256xf32>
    %cst_8 = stablehlo.constant dense<0.564189494> : tensor<1x16x256xf32>
    %cst_9 = stablehlo.constant dense<-0.282076746> : tensor<1x16x256xf32>
    %cst_10 = stablehlo.constant dense<0.42184633> : tensor<1x16x256xf32>
    %cst_11 = stablehlo.constant dense<-1.01526523> : tensor<1x16x256xf32>
    %cst_12 = stablehlo.constant dense<2.92101908> : tensor<1x16x256xf32>
    %cst_13 = stablehlo.constant dense<-7.49551868> : tensor<1x16x256xf32>
    %cst_14 = stablehlo.constant dense<1.297720e+01> : tensor<1x16x256xf32>
    %cst_15 = stablehlo.constant dense<-10.477664> : tensor<1x16x256xf32>
    %cst_16 = stablehlo.constant dense<0.563825965> : tensor<1x16x256xf32>
    %cst_17 = stablehlo.constant dense<-0.274112701> : tensor<1x16x256xf32>
    %cst_18 = stablehlo.constant dense<3.404880e-01> : tensor<1x16x256xf32>
    %cst_19 = stablehlo.constant dense<-0.494451523> : tensor<1x16x256xf32>
    %cst_20 = stablehlo.constant dense<0.621000468> : tensor<1x16x256xf32>
    %cst_21 = stablehlo.constant dense<-0.582473278> : tensor<1x16x256xf32>
    %cst_22 = stablehlo.constant dense<0.368742466> : tensor<1x16x256xf32>
    %cst_23 = stablehlo.constant dense<-0.138703942> : tensor<1x16x256xf32>
    %cst_24 = stablehlo.constant dense<2.326820e-02> : tensor<1x16x256xf32>
    %cst_25 = stablehlo.constant dense<2.000000e+00> : tensor<1x16x256xf32>
    %cst_26 = stablehlo.constant dense<1.000000e+00> : tensor<1x16x256xf32>
    %cst_27 = stablehlo.constant dense<0.707106769> : tensor<f32>
    %cst_28 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %cst_29 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %cst_30 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %cst_31 = stablehlo.constant dense<9.99999974E-6> : tensor<f32>
    %cst_32 = stablehlo.constant dense<6.400000e+01> : tensor<f32>
    %cst_33 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_34 = stablehlo.constant dense<-1.000000e+09> : tensor<f32>
    %cst_35 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %0 = call @_take(%arg2, %arg0) : (tensor<512x64xf32>, tensor<1x16xi32>) -> tensor<1x16x64xf32>
    %1 = stablehlo.broadcast_in_dim %arg3, dims = [1, 2] : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
    %2 = stablehlo.add %0, %1 : tensor<1x16x64xf32>
    %3 = stablehlo.convert %arg1 : (tensor<1x16xi32>) -> tensor<1x16xf32>
    %4 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<1x16xf32>
    %5 = stablehlo.subtract %4, %3 : tensor<1x16xf32>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0, 3] : (tensor<1x16xf32>) -> tensor<1x1x1x16xf32>
    %7 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<1x1x1x16xf32>
    %8 = stablehlo.multiply %6, %7 : tensor<1x1x1x16xf32>
    %9 = stablehlo.reduce(%2 init: %cst_33) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %11 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %12 = stablehlo.divide %10, %11 : tensor<1x16x1xf32>
    %13 = stablehlo.broadcast_in_dim %12, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %14 = stablehlo.subtract %2, %13 : tensor<1x16x64xf32>
    %15 = stablehlo.multiply %14, %14 : tensor<1x16x64xf32>
    %16 = stablehlo.reduce(%15 init: %cst_33) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %17 = stablehlo.broadcast_in_dim %16, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %18 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %19 = stablehlo.divide %17, %18 : tensor<1x16x1xf32>
    %20 = stablehlo.broadcast_in_dim %12, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %21 = stablehlo.subtract %2, %20 : tensor<1x16x64xf32>
    %22 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
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
    %33 = stablehlo.dot_general %32, %arg6, contracting_dims = [2] x [0] : (tensor<1x16x64xf32>, tensor<64x192xf32>) -> tensor<1x16x192xf32>
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
    %49 = stablehlo.dot_general %47, %48, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %50 = stablehlo.broadcast_in_dim %49, dims = [1, 2, 3] : (tensor<4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %51 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<1x4x16x16xf32>
    %52 = stablehlo.divide %50, %51 : tensor<1x4x16x16xf32>
    %53 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<1x4x16x16xf32>
    %54 = stablehlo.add %52, %53 : tensor<1x4x16x16xf32>
    %55 = stablehlo.reduce(%54 init: %cst_29) applies stablehlo.maximum across dimensions = [3] : (tensor<1x4x16x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
    %56 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<1x4x16xf32>
    %57 = stablehlo.maximum %56, %55 : tensor<1x4x16xf32>
    %58 = stablehlo.broadcast_in_dim %57, dims = [0, 1, 2] : (tensor<1x4x16xf32>) -> tensor<1x4x16x1xf32>
    %59 = stablehlo.broadcast_in_dim %58, dims = [0, 1, 2, 3] : (tensor<1x4x16x1xf32>) -> tensor<1x4x16x16xf32>
    %60 = stablehlo.subtract %54, %59 : tensor<1x4x16x16xf32>
    %61 = stablehlo.exponential %60 : tensor<1x4x16x16xf32>
    %62 = stablehlo.reduce(%61 init: %cst_33) applies stablehlo.add across dimensions = [3] : (tensor<1x4x16x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
    %63 = stablehlo.broadcast_in_dim %62, dims = [0, 1, 2] : (tensor<1x4x16xf32>) -> tensor<1x4x16x1xf32>
    %64 = stablehlo.broadcast_in_dim %63, dims = [0, 1, 2, 3] : (tensor<1x4x16x1xf32>) -> tensor<1x4x16x16xf32>
    %65 = stablehlo.divide %61, %64 : tensor<1x4x16x16xf32>
    %66 = stablehlo.reshape %65 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %67 = stablehlo.reshape %45 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %68 = stablehlo.dot_general %66, %67, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %69 = stablehlo.broadcast_in_dim %68, dims = [1, 2, 3] : (tensor<4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %70 = stablehlo.transpose %69, dims = [0, 2, 1, 3] : (tensor<1x4x16x16xf32>) -> tensor<1x16x4x16xf32>
    %71 = stablehlo.reshape %70 : (tensor<1x16x4x16xf32>) -> tensor<1x16x64xf32>
    %72 = stablehlo.dot_general %71, %arg8, contracting_dims = [2] x [0] : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
    %73 = stablehlo.add %2, %72 : tensor<1x16x64xf32>
    %74 = stablehlo.broadcast_in_dim %arg9, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %75 = stablehlo.broadcast_in_dim %74, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %76 = stablehlo.add %73, %75 : tensor<1x16x64xf32>
    %77 = stablehlo.reduce(%76 init: %cst_33) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %78 = stablehlo.broadcast_in_dim %77, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %79 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %80 = stablehlo.divide %78, %79 : tensor<1x16x1xf32>
    %81 = stablehlo.broadcast_in_dim %80, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %82 = stablehlo.subtract %76, %81 : tensor<1x16x64xf32>
    %83 = stablehlo.multiply %82, %82 : tensor<1x16x64xf32>
    %84 = stablehlo.reduce(%83 init: %cst_33) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %85 = stablehlo.broadcast_in_dim %84, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %86 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %87 = stablehlo.divide %85, %86 : tensor<1x16x1xf32>
    %88 = stablehlo.broadcast_in_dim %80, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %89 = stablehlo.subtract %76, %88 : tensor<1x16x64xf32>
    %90 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
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
    %101 = stablehlo.dot_general %100, %arg12, contracting_dims = [2] x [0] : (tensor<1x16x64xf32>, tensor<64x256xf32>) -> tensor<1x16x256xf32>
    %102 = stablehlo.broadcast_in_dim %arg13, dims = [2] : (tensor<256xf32>) -> tensor<1x1x256xf32>
    %103 = stablehlo.broadcast_in_dim %102, dims = [0, 1, 2] : (tensor<1x1x256xf32>) -> tensor<1x16x256xf32>
    %104 = stablehlo.add %101, %103 : tensor<1x16x256xf32>
    %105 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<1x16x256xf32>
    %106 = stablehlo.multiply %105, %104 : tensor<1x16x256xf32>
    %107 = stablehlo.negate %104 : tensor<1x16x256xf32>
    %108 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<1x16x256xf32>
    %109 = stablehlo.multiply %107, %108 : tensor<1x16x256xf32>
    %110 = stablehlo.multiply %109, %109 : tensor<1x16x256xf32>
    %111 = stablehlo.negate %110 : tensor<1x16x256xf32>
    %112 = stablehlo.abs %109 : tensor<1x16x256xf32>
    %113 = stablehlo.divide %cst_26, %110 : tensor<1x16x256xf32>
    %114 = stablehlo.exponential %111 : tensor<1x16x256xf32>
    %115 = stablehlo.divide %cst_26, %112 : tensor<1x16x256xf32>
    %116 = stablehlo.multiply %114, %115 : tensor<1x16x256xf32>
    %117 = stablehlo.compare LT, %112, %cst_25 : (tensor<1x16x256xf32>, tensor<1x16x256xf32>) -> tensor<1x16x256xi1>
    %118 = stablehlo.multiply %cst_24, %113 : tensor<1x16x256xf32>
    %119 = stablehlo.add %118, %cst_23 : tensor<1x16x256xf32>
    %120 = stablehlo.multiply %119, %113 : tensor<1x16x256xf32>
    %121 = stablehlo.add %120, %cst_22 : tensor<1x16x256xf32>
    %122 = stablehlo.multiply %121, %113 : tensor<1x16x256xf32>
    %123 = stablehlo.add %122, %cst_21 : tensor<1x16x256xf32>
    %124 = stablehlo.multiply %123, %113 : tensor<1x16x256xf32>
    %125 = stablehlo.add %124, %cst_20 : tensor<1x16x256xf32>
    %126 = stablehlo.multiply %125, %113 : tensor<1x16x256xf32>
    %127 = stablehlo.add %126, %cst_19 : tensor<1x16x256xf32>
    %128 = stablehlo.multiply %127, %113 : tensor<1x16x256xf32>
    %129 = stablehlo.add %128, %cst_18 : tensor<1x16x256xf32>
    %130 = stablehlo.multiply %129, %113 : tensor<1x16x256xf32>
    %131 = stablehlo.add %130, %cst_17 : tensor<1x16x256xf32>
    %132 = stablehlo.multiply %131, %113 : tensor<1x16x256xf32>
    %133 = stablehlo.add %132, %cst_16 : tensor<1x16x256xf32>
    %134 = stablehlo.multiply %cst_15, %113 : tensor<1x16x256xf32>
    %135 = stablehlo.add %134, %cst_14 : tensor<1x16x256xf32>
    %136 = stablehlo.multiply %135, %113 : tensor<1x16x256xf32>
    %137 = stablehlo.add %136, %cst_13 : tensor<1x16x256xf32>
    %138 = stablehlo.multiply %137, %113 : tensor<1x16x256xf32>
    %139 = stablehlo.add %138, %cst_12 : tensor<1x16x256xf32>
    %140 = stablehlo.multiply %139, %113 : tensor<1x16x256xf32>
    %141 = stablehlo.add %140, %cst_11 : tensor<1x16x256xf32>
    %142 = stablehlo.multiply %141, %113 : tensor<1x16x256xf32>
    %143 = stablehlo.add %142, %cst_10 : tensor<1x16x256xf32>
    %144 = stablehlo.multiply %143, %113 : tensor<1x16x256xf32>
    %145 = stablehlo.add %144, %cst_9 : tensor<1x16x256xf32>
    %146 = stablehlo.multiply %145, %113 : tensor<1x16x256xf32>
    %147 = stablehlo.add %146, %cst_8 : tensor<1x16x256xf32>
    %148 = stablehlo.select %117, %133, %147 : tensor<1x16x256xi1>, tensor<1x16x256xf32>
    %149 = stablehlo.multiply %116, %148 : tensor<1x16x256xf32>
    %150 = stablehlo.compare LT, %111, %cst_7 : (tensor<1x16x256xf32>, tensor<1x16x256xf32>) -> tensor<1x16x256xi1>
    %151 = stablehlo.select %150, %cst_6, %149 : tensor<1x16x256xi1>, tensor<1x16x256xf32>
    %152 = stablehlo.compare LT, %109, %cst_6 : (tensor<1x16x256xf32>, tensor<1x16x256xf32>) -> tensor<1x16x256xi1>
    %153 = stablehlo.subtract %cst_25, %151 : tensor<1x16x256xf32>
    %154 = stablehlo.select %152, %153, %151 : tensor<1x16x256xi1>, tensor<1x16x256xf32>
    %155 = stablehlo.multiply %109, %109 : tensor<1x16x256xf32>
    %156 = stablehlo.multiply %cst_5, %155 : tensor<1x16x256xf32>
    %157 = stablehlo.add %156, %cst_4 : tensor<1x16x256xf32>
    %158 = stablehlo.multiply %157, %155 : tensor<1x16x256xf32>
    %159 = stablehlo.add %158, %cst_3 : tensor<1x16x256xf32>
    %160 = stablehlo.multiply %159, %155 : tensor<1x16x256xf32>
    %161 = stablehlo.add %160, %cst_2 : tensor<1x16x256xf32>
    %162 = stablehlo.multiply %161, %155 : tensor<1x16x256xf32>
    %163 = stablehlo.add %162, %cst_1 : tensor<1x16x256xf32>
    %164 = stablehlo.multiply %163, %155 : tensor<1x16x256xf32>
    %165 = stablehlo.add %164, %cst_0 : tensor<1x16x256xf32>
    %166 = stablehlo.multiply %165, %155 : tensor<1x16x256xf32>
    %167 = stablehlo.add %166, %cst : tensor<1x16x256xf32>
    %168 = stablehlo.multiply %109, %167 : tensor<1x16x256xf32>
    %169 = stablehlo.subtract %cst_26, %168 : tensor<1x16x256xf32>
    %170 = stablehlo.abs %109 : tensor<1x16x256xf32>
    %171 = stablehlo.compare LT, %170, %cst_26 : (tensor<1x16x256xf32>, tensor<1x16x256xf32>) -> tensor<1x16x256xi1>
    %172 = stablehlo.select %171, %169, %154 : tensor<1x16x256xi1>, tensor<1x16x256xf32>
    %173 = stablehlo.multiply %106, %172 : tensor<1x16x256xf32>
    %174 = stablehlo.dot_general %173, %arg14, contracting_dims = [2] x [0] : (tensor<1x16x256xf32>, tensor<256x64xf32>) -> tensor<1x16x64xf32>
    %175 = stablehlo.add %76, %174 : tensor<1x16x64xf32>
    %176 = stablehlo.broadcast_in_dim %arg15, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %177 = stablehlo.broadcast_in_dim %176, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %178 = stablehlo.add %175, %177 : tensor<1x16x64xf32>
    %179 = stablehlo.reduce(%178 init: %cst_33) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %180 = stablehlo.broadcast_in_dim %179, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %181 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %182 = stablehlo.divide %180, %181 : tensor<1x16x1xf32>
    %183 = stablehlo.broadcast_in_dim %182, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %184 = stablehlo.subtract %178, %183 : tensor<1x16x64xf32>
    %185 = stablehlo.multiply %184, %184 : tensor<1x16x64xf32>
    %186 = stablehlo.reduce(%185 init: %cst_33) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %187 = stablehlo.broadcast_in_dim %186, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %188 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %189 = stablehlo.divide %187, %188 : tensor<1x16x1xf32>
    %190 = stablehlo.broadcast_in_dim %182, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %191 = stablehlo.subtract %178, %190 : tensor<1x16x64xf32>
    %192 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %193 = stablehlo.add %189, %192 : tensor<1x16x1xf32>
    %194 = stablehlo.rsqrt %193 : tensor<1x16x1xf32>
    %195 = stablehlo.broadcast_in_dim %194, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %196 = stablehlo.multiply %191, %195 : tensor<1x16x64xf32>
    %197 = stablehlo.broadcast_in_dim %arg16, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %198 = stablehlo.broadcast_in_dim %197, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %199 = stablehlo.multiply %196, %198 : tensor<1x16x64xf32>
    %200 = stablehlo.broadcast_in_dim %arg17, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %201 = stablehlo.broadcast_in_dim %200, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %202 = stablehlo.add %199, %201 : tensor<1x16x64xf32>
    %203 = stablehlo.dot_general %202, %arg18, contracting_dims = [2] x [0] : (tensor<1x16x64xf32>, tensor<64x192xf32>) -> tensor<1x16x192xf32>
    %204 = stablehlo.broadcast_in_dim %arg19, dims = [2] : (tensor<192xf32>) -> tensor<1x1x192xf32>
    %205 = stablehlo.broadcast_in_dim %204, dims = [0, 1, 2] : (tensor<1x1x192xf32>) -> tensor<1x16x192xf32>
    %206 = stablehlo.add %203, %205 : tensor<1x16x192xf32>
    %207 = stablehlo.slice %206 [0:1, 0:16, 0:64] : (tensor<1x16x192xf32>) -> tensor<1x16x64xf32>
    %208 = stablehlo.slice %206 [0:1, 0:16, 64:128] : (tensor<1x16x192xf32>) -> tensor<1x16x64xf32>
    %209 = stablehlo.slice %206 [0:1, 0:16, 128:192] : (tensor<1x16x192xf32>) -> tensor<1x16x64xf32>
    %210 = stablehlo.reshape %207 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %211 = stablehlo.transpose %210, dims = [0, 2, 1, 3] : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %212 = stablehlo.reshape %208 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %213 = stablehlo.transpose %212, dims = [0, 2, 1, 3] : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %214 = stablehlo.reshape %209 : (tensor<1x16x64xf32>) -> tensor<1x16x4x16xf32>
    %215 = stablehlo.transpose %214, dims = [0, 2, 1, 3] : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %216 = stablehlo.transpose %213, dims = [0, 1, 3, 2] : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %217 = stablehlo.reshape %211 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %218 = stablehlo.reshape %216 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %219 = stablehlo.dot_general %217, %218, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %220 = stablehlo.broadcast_in_dim %219, dims = [1, 2, 3] : (tensor<4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %221 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<1x4x16x16xf32>
    %222 = stablehlo.divide %220, %221 : tensor<1x4x16x16xf32>
    %223 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2, 3] : (tensor<1x1x1x16xf32>) -> tensor<1x4x16x16xf32>
    %224 = stablehlo.add %222, %223 : tensor<1x4x16x16xf32>
    %225 = stablehlo.reduce(%224 init: %cst_29) applies stablehlo.maximum across dimensions = [3] : (tensor<1x4x16x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
    %226 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<1x4x16xf32>
    %227 = stablehlo.maximum %226, %225 : tensor<1x4x16xf32>
    %228 = stablehlo.broadcast_in_dim %227, dims = [0, 1, 2] : (tensor<1x4x16xf32>) -> tensor<1x4x16x1xf32>
    %229 = stablehlo.broadcast_in_dim %228, dims = [0, 1, 2, 3] : (tensor<1x4x16x1xf32>) -> tensor<1x4x16x16xf32>
    %230 = stablehlo.subtract %224, %229 : tensor<1x4x16x16xf32>
    %231 = stablehlo.exponential %230 : tensor<1x4x16x16xf32>
    %232 = stablehlo.reduce(%231 init: %cst_33) applies stablehlo.add across dimensions = [3] : (tensor<1x4x16x16xf32>, tensor<f32>) -> tensor<1x4x16xf32>
    %233 = stablehlo.broadcast_in_dim %232, dims = [0, 1, 2] : (tensor<1x4x16xf32>) -> tensor<1x4x16x1xf32>
    %234 = stablehlo.broadcast_in_dim %233, dims = [0, 1, 2, 3] : (tensor<1x4x16x1xf32>) -> tensor<1x4x16x16xf32>
    %235 = stablehlo.divide %231, %234 : tensor<1x4x16x16xf32>
    %236 = stablehlo.reshape %235 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %237 = stablehlo.reshape %215 : (tensor<1x4x16x16xf32>) -> tensor<4x16x16xf32>
    %238 = stablehlo.dot_general %236, %237, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x16x16xf32>, tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
    %239 = stablehlo.broadcast_in_dim %238, dims = [1, 2, 3] : (tensor<4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %240 = stablehlo.transpose %239, dims = [0, 2, 1, 3] : (tensor<1x4x16x16xf32>) -> tensor<1x16x4x16xf32>
    %241 = stablehlo.reshape %240 : (tensor<1x16x4x16xf32>) -> tensor<1x16x64xf32>
    %242 = stablehlo.dot_general %241, %arg20, contracting_dims = [2] x [0] : (tensor<1x16x64xf32>, tensor<64x64xf32>) -> tensor<1x16x64xf32>
    %243 = stablehlo.add %178, %242 : tensor<1x16x64xf32>
    %244 = stablehlo.broadcast_in_dim %arg21, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %245 = stablehlo.broadcast_in_dim %244, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %246 = stablehlo.add %243, %245 : tensor<1x16x64xf32>
    %247 = stablehlo.reduce(%246 init: %cst_33) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %248 = stablehlo.broadcast_in_dim %247, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %249 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %250 = stablehlo.divide %248, %249 : tensor<1x16x1xf32>
    %251 = stablehlo.broadcast_in_dim %250, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %252 = stablehlo.subtract %246, %251 : tensor<1x16x64xf32>
    %253 = stablehlo.multiply %252, %252 : tensor<1x16x64xf32>
    %254 = stablehlo.reduce(%253 init: %cst_33) applies stablehlo.add across dimensions = [2] : (tensor<1x16x64xf32>, tensor<f32>) -> tensor<1x16xf32>
    %255 = stablehlo.broadcast_in_dim %254, dims = [0, 1] : (tensor<1x16xf32>) -> tensor<1x16x1xf32>
    %256 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %257 = stablehlo.divide %255, %256 : tensor<1x16x1xf32>
    %258 = stablehlo.broadcast_in_dim %250, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %259 = stablehlo.subtract %246, %258 : tensor<1x16x64xf32>
    %260 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<1x16x1xf32>
    %261 = stablehlo.add %257, %260 : tensor<1x16x1xf32>
    %262 = stablehlo.rsqrt %261 : tensor<1x16x1xf32>
    %263 = stablehlo.broadcast_in_dim %262, dims = [0, 1, 2] : (tensor<1x16x1xf32>) -> tensor<1x16x64xf32>
    %264 = stablehlo.multiply %259, %263 : tensor<1x16x64xf32>
    %265 = stablehlo.broadcast_in_dim %arg22, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %266 = stablehlo.broadcast_in_dim %265, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %267 = stablehlo.multiply %264, %266 : tensor<1x16x64xf32>
    %268 = stablehlo.broadcast_in_dim %arg23, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %269 = stablehlo.broadcast_in_dim %268, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %270 = stablehlo.add %267, %269 : tensor<1x16x64xf32>
    %271 = stablehlo.dot_general %270, %arg24, contracting_dims = [2] x [0] : (tensor<1x16x64xf32>, tensor<64x256xf32>) -> tensor<1x16x256xf32>
    %272 = stablehlo.broadcast_in_dim %arg25, dims = [2] : (tensor<256xf32>) -> tensor<1x1x256xf32>
    %273 = stablehlo.broadcast_in_dim %272, dims = [0, 1, 2] : (tensor<1x1x256xf32>) -> tensor<1x16x256xf32>
    %274 = stablehlo.add %271, %273 : tensor<1x16x256xf32>
    %275 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<1x16x256xf32>
    %276 = stablehlo.multiply %275, %274 : tensor<1x16x256xf32>
    %277 = stablehlo.negate %274 : tensor<1x16x256xf32>
    %278 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<1x16x256xf32>
    %279 = stablehlo.multiply %277, %278 : tensor<1x16x256xf32>
    %280 = stablehlo.multiply %279, %279 : tensor<1x16x256xf32>
    %281 = stablehlo.negate %280 : tensor<1x16x256xf32>
    %282 = stablehlo.abs %279 : tensor<1x16x256xf32>
    %283 = stablehlo.divide %cst_26, %280 : tensor<1x16x256xf32>
    %284 = stablehlo.exponential %281 : tensor<1x16x256xf32>
    %285 = stablehlo.divide %cst_26, %282 : tensor<1x16x256xf32>
    %286 = stablehlo.multiply %284, %285 : tensor<1x16x256xf32>
    %287 = stablehlo.compare LT, %282, %cst_25 : (tensor<1x16x256xf32>, tensor<1x16x256xf32>) -> tensor<1x16x256xi1>
    %288 = stablehlo.multiply %cst_24, %283 : tensor<1x16x256xf32>
    %289 = stablehlo.add %288, %cst_23 : tensor<1x16x256xf32>
    %290 = stablehlo.multiply %289, %283 : tensor<1x16x256xf32>
    %291 = stablehlo.add %290, %cst_22 : tensor<1x16x256xf32>
    %292 = stablehlo.multiply %291, %283 : tensor<1x16x256xf32>
    %293 = stablehlo.add %292, %cst_21 : tensor<1x16x256xf32>
    %294 = stablehlo.multiply %293, %283 : tensor<1x16x256xf32>
    %295 = stablehlo.add %294, %cst_20 : tensor<1x16x256xf32>
    %296 = stablehlo.multiply %295, %283 : tensor<1x16x256xf32>
    %297 = stablehlo.add %296, %cst_19 : tensor<1x16x256xf32>
    %298 = stablehlo.multiply %297, %283 : tensor<1x16x256xf32>
    %299 = stablehlo.add %298, %cst_18 : tensor<1x16x256xf32>
    %300 = stablehlo.multiply %299, %283 : tensor<1x16x256xf32>
    %301 = stablehlo.add %300, %cst_17 : tensor<1x16x256xf32>
    %302 = stablehlo.multiply %301, %283 : tensor<1x16x256xf32>
    %303 = stablehlo.add %302, %cst_16 : tensor<1x16x256xf32>
    %304 = stablehlo.multiply %cst_15, %283 : tensor<1x16x256xf32>
    %305 = stablehlo.add %304, %cst_14 : tensor<1x16x256xf32>
    %306 = stablehlo.multiply %305, %283 : tensor<1x16x256xf32>
    %307 = stablehlo.add %306, %cst_13 : tensor<1x16x256xf32>
    %308 = stablehlo.multiply %307, %283 : tensor<1x16x256xf32>
    %309 = stablehlo.add %308, %cst_12 : tensor<1x16x256xf32>
    %310 = stablehlo.multiply %309, %283 : tensor<1x16x256xf32>
    %311 = stablehlo.add %310, %cst_11 : tensor<1x16x256xf32>
    %312 = stablehlo.multiply %311, %283 : tensor<1x16x256xf32>
    %313 = stablehlo.add %312, %cst_10 : tensor<1x16x256xf32>
    %314 = stablehlo.multiply %313, %283 : tensor<1x16x256xf32>
    %315 = stablehlo.add %314, %cst_9 : tensor<1x16x256xf32>
    %316 = stablehlo.multiply %315, %283 : tensor<1x16x256xf32>
    %317 = stablehlo.add %316, %cst_8 : tensor<1x16x256xf32>
    %318 = stablehlo.select %287, %303, %317 : tensor<1x16x256xi1>, tensor<1x16x256xf32>
    %319 = stablehlo.multiply %286, %318 : tensor<1x16x256xf32>
    %320 = stablehlo.compare LT, %281, %cst_7 : (tensor<1x16x256xf32>, tensor<1x16x256xf32>) -> tensor<1x16x256xi1>
    %321 = stablehlo.select %320, %cst_6, %319 : tensor<1x16x256xi1>, tensor<1x16x256xf32>
    %322 = stablehlo.compare LT, %279, %cst_6 : (tensor<1x16x256xf32>, tensor<1x16x256xf32>) -> tensor<1x16x256xi1>
    %323 = stablehlo.subtract %cst_25, %321 : tensor<1x16x256xf32>
    %324 = stablehlo.select %322, %323, %321 : tensor<1x16x256xi1>, tensor<1x16x256xf32>
    %325 = stablehlo.multiply %279, %279 : tensor<1x16x256xf32>
    %326 = stablehlo.multiply %cst_5, %325 : tensor<1x16x256xf32>
    %327 = stablehlo.add %326, %cst_4 : tensor<1x16x256xf32>
    %328 = stablehlo.multiply %327, %325 : tensor<1x16x256xf32>
    %329 = stablehlo.add %328, %cst_3 : tensor<1x16x256xf32>
    %330 = stablehlo.multiply %329, %325 : tensor<1x16x256xf32>
    %331 = stablehlo.add %330, %cst_2 : tensor<1x16x256xf32>
    %332 = stablehlo.multiply %331, %325 : tensor<1x16x256xf32>
    %333 = stablehlo.add %332, %cst_1 : tensor<1x16x256xf32>
    %334 = stablehlo.multiply %333, %325 : tensor<1x16x256xf32>
    %335 = stablehlo.add %334, %cst_0 : tensor<1x16x256xf32>
    %336 = stablehlo.multiply %335, %325 : tensor<1x16x256xf32>
    %337 = stablehlo.add %336, %cst : tensor<1x16x256xf32>
    %338 = stablehlo.multiply %279, %337 : tensor<1x16x256xf32>
    %339 = stablehlo.subtract %cst_26, %338 : tensor<1x16x256xf32>
    %340 = stablehlo.abs %279 : tensor<1x16x256xf32>
    %341 = stablehlo.compare LT, %340, %cst_26 : (tensor<1x16x256xf32>, tensor<1x16x256xf32>) -> tensor<1x16x256xi1>
    %342 = stablehlo.select %341, %339, %324 : tensor<1x16x256xi1>, tensor<1x16x256xf32>
    %343 = stablehlo.multiply %276, %342 : tensor<1x16x256xf32>
    %344 = stablehlo.dot_general %343, %arg26, contracting_dims = [2] x [0] : (tensor<1x16x256xf32>, tensor<256x64xf32>) -> tensor<1x16x64xf32>
    %345 = stablehlo.add %246, %344 : tensor<1x16x64xf32>
    %346 = stablehlo.broadcast_in_dim %arg27, dims = [2] : (tensor<64xf32>) -> tensor<1x1x64xf32>
    %347 = stablehlo.broadcast_in_dim %346, dims = [0, 1, 2] : (tensor<1x1x64xf32>) -> tensor<1x16x64xf32>
    %348 = stablehlo.add %345, %347 : tensor<1x16x64xf32>
    %349 = stablehlo.slice %348 [0:1, 0:1, 0:64] : (tensor<1x16x64xf32>) -> tensor<1x1x64xf32>
    %350 = stablehlo.reshape %349 : (tensor<1x1x64xf32>) -> tensor<1x64xf32>
    %351 = stablehlo.dot_general %350, %arg28, contracting_dims = [1] x [0] : (tensor<1x64xf32>, tensor<64x64xf32>) -> tensor<1x64xf32>
    %352 = stablehlo.broadcast_in_dim %arg29, dims = [1] : (tensor<64xf32>) -> tensor<1x64xf32>
    %353 = stablehlo.add %351, %352 : tensor<1x64xf32>
    %354 = stablehlo.tanh %353 : tensor<1x64xf32>
    return %348, %354 : tensor<1x16x64xf32>, tensor<1x64xf32>
  }
  func.func private @_take(%arg0: tensor<512x64xf32>, %arg1: tensor<1x16xi32>) -> tensor<1x16x64xf32> {
    %cst = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %c = stablehlo.constant dense<true> : tensor<i1>
    %c_0 = stablehlo.constant dense<511> : tensor<1xi32>
    %c_1 = stablehlo.constant dense<512> : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<1x16xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<1x16xi32>, tensor<1x16xi32>) -> tensor<1x16xi1>
    %2 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<1x16xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<1x16xi32>
    %4 = call @_where(%1, %3, %arg1) : (tensor<1x16xi1>, tensor<1x16xi32>, tensor<1x16xi32>) -> tensor<1x16xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0, 1] : (tensor<1x16xi32>) -> tensor<1x16x1xi32>
    %6 = stablehlo.broadcast_in_dim %c_2, dims = [] : (tensor<i32>) -> tensor<1x16x1xi32>
    %7 = stablehlo.compare GE, %5, %6, SIGNED : (tensor<1x16x1xi32>, tensor<1x16x1xi32>) -> tensor<1x16x1xi1>
    %8 = stablehlo.broadcast_in_dim %c_0, dims = [2] : (tensor<1xi32>) -> tensor<1x1x1xi32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1, 2] : (tensor<1x1x1xi32>) -> tensor<1x16x1xi32>
    %10 = stablehlo.compare LE, %5, %9, SIGNED : (tensor<1x16x1xi32>, tensor<1x16x1xi32>) -> tensor<1x16x1xi1>
    %11 = stablehlo.and %7, %10 : tensor<1x16x1xi1>
    %12 = stablehlo.reduce(%11 init: %c) applies stablehlo.and across dimensions = [2] : (tensor<1x16x1xi1>, tensor<i1>) -> tensor<1x16xi1>
    %13 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 64>}> : (tensor<512x64xf32>, tensor<1x16x1xi32>) -> tensor<1x16x64xf32>
    %14 = stablehlo.broadcast_in_dim %12, dims = [0, 1] : (tensor<1x16xi1>) -> tensor<1x16x64xi1>
    %15 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<1x16x64xf32>
    %16 = stablehlo.select %14, %13, %15 : tensor<1x16x64xi1>, tensor<1x16x64xf32>
    return %16 : tensor<1x16x64xf32>
  }
  func.func private @_where(%arg0: tensor<1x16xi1>, %arg1: tensor<1x16xi32>, %arg2: tensor<1x16xi32>) -> tensor<1x16xi32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<1x16xi1>, tensor<1x16xi32>
    return %0 : tensor<1x16xi32>
  }
}
